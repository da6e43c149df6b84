"""Evidence for a round: the top fused candidates read back as snippets with their fields,
main-aspect unit vectors (for MMR) and token counts for the budget; provenance is attached
only to the pieces the round selects (:meth:`RoundEvidence.with_provenance`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentic_search.dependencies import Dependencies
from agentic_search.logic.executor import dense_aspect
from agentic_search.logic.fusion import minmax
from agentic_search.logic.snippets import evidence_text, stored_snippet_tokens
from agentic_search.logic.text import field_text
from agentic_search.logic.tokens import token_counter, token_counter_name
from agentic_search.pipeline.hydrate import provenances
from agentic_search.pipeline.relevance import float32
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


def count_tokens(deps: Dependencies, texts: Sequence[str]) -> list[int]:
    """Token counts with the embedder's tokenizer (:func:`token_counter`), one per text.

    Counts are memoized by text (LRU of ``TOKEN_COUNT_CACHE`` texts in the process caches): the same
    snippets come back round after round and query after query, and word-piece tokenizing 30
    snippets of 1,200 characters took longer than the round's retrieval.
    """
    counts = deps.caches.token_counts
    lock = deps.caches.tokens_lock
    with lock:
        out: list[int | None] = []
        for t in texts:
            n = counts.get(t)
            if n is not None:
                counts.move_to_end(t)
            out.append(n)
    todo = list(dict.fromkeys(t for t, n in zip(texts, out, strict=True) if n is None))
    if todo:
        counted = dict(zip(todo, token_counter(deps.embedder)(todo), strict=True))
        with lock:
            counts.update(counted)
            while len(counts) > TOKEN_COUNT_CACHE:
                counts.popitem(last=False)
        out = [counted[t] if n is None else n for t, n in zip(texts, out, strict=True)]
    return [int(n) for n in out]  # type: ignore[arg-type]


def evidence_fields(deps: Dependencies) -> list[str]:
    """The record fields evidence carries (filterable and vocabulary fields): what grading
    and contradiction checks read."""
    schema = deps.schema
    return [
        f
        for f in schema.fields
        if f in schema.filterable_fields or f in schema.vocabulary_fields.values()
    ]


@dataclass
class RoundEvidence:
    """A round's evidence candidates as :func:`build_evidence` read them, without provenance,
    and what attaching it takes (:meth:`with_provenance`).

    Selection (MMR, seeds), reranking and grading never read an evidence's provenance, and a
    round keeps ``max_docs`` of its ``selection_pool`` candidates at most (a later round only
    those that cover something missing): the provenance of the rest would be built to be
    thrown away (each one walks every hit of the round's lists for its id).
    """

    #: the candidates in fused order (``provenance`` None, ``queries`` empty)
    evidence: list[Evidence]
    #: record id -> the main aspect's unit vector (for MMR)
    vectors: dict[str, np.ndarray]
    plan: QueryPlan
    intent: IntentState
    results: list[RetrievedList]
    #: record id -> its fused entry (the candidates')
    fused: dict[str, Fused]
    #: record id -> the stored payload read (internal keys included)
    payloads: dict[str, dict[str, Any]]
    #: the main aspect (whose vectors :attr:`vectors` holds)
    aspect: str = ""

    def read_vectors(self, deps: Dependencies, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """:attr:`vectors` with the unit vectors of those of ``ids`` (candidates' ids) it
        lacks, read from the store (:meth:`~agentic_search.ports.VectorStore.vectors_of`),
        each normalized as :func:`build_evidence` does: for evidence read without vectors."""
        todo = [rid for rid in dict.fromkeys(ids) if rid in self.fused and rid not in self.vectors]
        if todo:
            for rid, vec in deps.store.vectors_of(deps.schema, todo, self.aspect).items():
                self.vectors[rid] = unit(vec)
        return self.vectors

    def with_provenance(self, deps: Dependencies, pieces: Sequence[Evidence]) -> list[Evidence]:
        """Copies of ``pieces`` (some of :attr:`evidence`, in any order) with the provenance
        :func:`~agentic_search.pipeline.hydrate.provenances` gives their record and
        ``queries``: the query texts of the hits that found it (sorted), or the first of
        the round's query texts when no hit names one. Built for these pieces only, from
        the payloads already read (no store read)."""
        if not pieces:
            return []
        fused = [self.fused[rid] for rid in dict.fromkeys(e.id for e in pieces)]
        provs = provenances(
            deps,
            self.plan,
            self.intent,
            self.results,
            fused,
            query_text=self.intent.query,
            known_payloads=self.payloads,
        )
        queries = sorted({r.query for r in self.results if r.query})
        out: list[Evidence] = []
        for e in pieces:
            prov = provs.get(e.id)
            found_by = (
                sorted({h.query for h in (prov.hits if prov else []) if h.query}) or queries[:1]
            )
            out.append(e.model_copy(update={"provenance": prov, "queries": found_by}))
        return out


def build_evidence(
    deps: Dependencies,
    plan: QueryPlan,
    intent: IntentState,
    results: list[RetrievedList],
    fused: list[Fused],
    rnd: int,
    snippet_chars: int,
    with_vectors: bool = True,
) -> RoundEvidence:
    """Evidence for the round's top fused candidates (in fused order, those the store holds)
    and the unit vectors of the main aspect by id, in one store read (payloads and vectors).
    ``tokens`` is the snippet's count stored at ingest (:mod:`agentic_search.logic.snippets`),
    or 0 when there is none: selection then counts the candidates it needs
    (``select_evidence(count_tokens=...)``). The pieces carry no provenance yet:
    :meth:`RoundEvidence.with_provenance` attaches it to those the round keeps.
    ``with_vectors`` False reads no dense vector (payloads and the sparse vector only):
    :meth:`RoundEvidence.read_vectors` reads those needed after."""
    schema = deps.schema
    aspect = dense_aspect(plan, schema)
    if not fused:
        return RoundEvidence([], {}, plan, intent, results, {}, {}, aspect)
    records = deps.store.hydrate_records(schema, [f.id for f in fused], with_vectors=with_vectors)
    rel = minmax([f.fused for f in fused])
    vectors: dict[str, np.ndarray] = {}
    counter = token_counter_name(deps.embedder)
    fields = evidence_fields(deps)
    out: list[Evidence] = []
    for f, r in zip(fused, rel, strict=True):
        rec = records.get(f.id)
        if rec is None:
            continue
        stored = rec.payload or {}
        payload = {k: v for k, v in stored.items() if k not in INTERNAL_KEYS}
        text = evidence_text(schema, payload)
        # the count the indexer stored, else 0: counted on demand by select_evidence
        tokens = stored_snippet_tokens(stored, snippet_chars, counter) or 0
        vec = rec.vectors.get(aspect) if with_vectors and rec.vectors is not None else None
        if vec is not None:
            vectors[f.id] = unit(vec)
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
            )
        )
    payloads = {rid: rec.payload or {} for rid, rec in records.items()}
    fused_by_id = {f.id: f for f in fused}
    return RoundEvidence(out, vectors, plan, intent, results, fused_by_id, payloads, aspect)


def unit(vec: Sequence[float]) -> np.ndarray:
    """A stored vector as a float32 unit vector (a zero vector as it is)."""
    arr = float32(vec)  # the values np.asarray(vec, dtype=np.float32) gives, faster
    norm = float(np.linalg.norm(arr))
    return arr / norm if norm > 0 else arr


__all__ = [
    "TOKEN_COUNT_CACHE",
    "RoundEvidence",
    "build_evidence",
    "count_tokens",
    "evidence_fields",
]
