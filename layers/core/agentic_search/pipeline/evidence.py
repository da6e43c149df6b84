"""Evidence for a round: the top fused candidates read back as snippets with their fields,
provenance and main-aspect unit vectors (for MMR), and token counts for the budget."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from agentic_search.dependencies import Dependencies
from agentic_search.logic.executor import dense_aspect
from agentic_search.logic.fusion import minmax
from agentic_search.logic.snippets import evidence_text, stored_snippet_tokens
from agentic_search.logic.text import field_text
from agentic_search.logic.tokens import token_counter, token_counter_name
from agentic_search.pipeline.hydrate import provenances
from agentic_search.wire import (
    INTERNAL_KEYS,
    Evidence,
    Fused,
    IntentState,
    QueryPlan,
    RetrievedList,
)

#: Snippet texts whose token counts are remembered (LRU).
TOKEN_COUNT_CACHE = 8192


def count_tokens(c: Dependencies, texts: Sequence[str]) -> list[int]:
    """Token counts with the embedder's tokenizer (:func:`token_counter`), one per text.

    Counts are memoized by text (LRU of ``TOKEN_COUNT_CACHE`` texts in the process caches): the same
    snippets come back round after round and query after query, and word-piece tokenizing 30
    snippets of 1,200 characters took longer than the round's retrieval.
    """
    counts = c.caches.token_counts
    lock = c.caches.tokens_lock
    with lock:
        out: list[int | None] = []
        for t in texts:
            n = counts.get(t)
            if n is not None:
                counts.move_to_end(t)
            out.append(n)
    todo = list(dict.fromkeys(t for t, n in zip(texts, out, strict=True) if n is None))
    if todo:
        counted = dict(zip(todo, token_counter(c.embedder)(todo), strict=True))
        with lock:
            counts.update(counted)
            while len(counts) > TOKEN_COUNT_CACHE:
                counts.popitem(last=False)
        out = [counted[t] if n is None else n for t, n in zip(texts, out, strict=True)]
    return [int(n) for n in out]  # type: ignore[arg-type]


def evidence_fields(c: Dependencies) -> list[str]:
    """The record fields evidence carries (filterable and vocabulary fields): what grading
    and contradiction checks read."""
    schema = c.schema
    return [
        f
        for f in schema.fields
        if f in schema.filterable_fields or f in schema.vocabulary_fields.values()
    ]


def build_evidence(
    c: Dependencies,
    plan: QueryPlan,
    intent: IntentState,
    results: list[RetrievedList],
    fused: list[Fused],
    rnd: int,
    snippet_chars: int,
) -> tuple[list[Evidence], dict[str, np.ndarray]]:
    """Evidence for the round's top fused candidates (in fused order) and the unit vectors of
    the main aspect by id. ``tokens`` is the snippet's count stored at ingest
    (:mod:`agentic_search.logic.snippets`), or 0 when there is none: selection then counts
    the candidates it needs (``select_evidence(count_tokens=...)``)."""
    if not fused:
        return [], {}
    schema = c.schema
    aspect = dense_aspect(plan, schema)
    records = c.store.hydrate_records(schema, [f.id for f in fused], with_vectors=True)
    provs = provenances(
        c,
        plan,
        intent,
        results,
        fused,
        query_text=intent.query,
        known_payloads={rid: rec.payload or {} for rid, rec in records.items()},
    )
    rel = minmax([f.fused for f in fused])
    texts: list[str] = []
    rows: list[tuple[Fused, dict[str, Any], float, int]] = []
    vectors: dict[str, np.ndarray] = {}
    counter = token_counter_name(c.embedder)
    for f, r in zip(fused, rel, strict=True):
        rec = records.get(f.id)
        if rec is None:
            continue
        stored = rec.payload or {}
        payload = {k: v for k, v in stored.items() if k not in INTERNAL_KEYS}
        texts.append(evidence_text(schema, payload))
        # the count the indexer stored, else 0: counted on demand by select_evidence
        tokens = stored_snippet_tokens(stored, snippet_chars, counter) or 0
        rows.append((f, payload, r, tokens))
        vec = rec.vectors.get(aspect) if rec.vectors is not None else None
        if vec is not None:
            arr = np.asarray(vec, dtype=np.float32)
            norm = float(np.linalg.norm(arr))
            vectors[f.id] = arr / norm if norm > 0 else arr
    fields = evidence_fields(c)
    out: list[Evidence] = []
    queries = sorted({r.query for r in results if r.query})
    for (f, payload, r, tokens), text in zip(rows, texts, strict=True):
        prov = provs.get(f.id)
        found_by = sorted({h.query for h in (prov.hits if prov else []) if h.query}) or queries[:1]
        out.append(
            Evidence(
                id=f.id,
                doc_id=str(payload.get("doc_id", f.id)),
                chunk_id=int(payload.get("chunk_id", 0) or 0),
                title=field_text(payload.get(schema.title_field)) or None,
                text=text[:snippet_chars],
                tokens=tokens,
                fields={k: payload[k] for k in fields if k in payload},
                fused_score=round(f.fused, 6),
                relevance=round(r, 6),
                round=rnd,
                rounds=[rnd],
                queries=found_by,
                provenance=prov,
            )
        )
    return out, vectors


__all__ = ["TOKEN_COUNT_CACHE", "build_evidence", "count_tokens", "evidence_fields"]
