"""The absolute relevance of candidates: the cosine of each one's stored vector on the plan's
main aspect to the query's vector (all-MiniLM vectors are unit length, so a dot product).

Fusion scores are relative (a list's best hit scores 1 whatever it is); this is the one signal
that says how well the best candidates match at all, so it is what the answer-quality check
reads (:mod:`agentic_search.logic.quality`). The main aspect's text-embedded dense source
already scored the candidates it found (its raw scores are these cosines); the others are
computed from their stored vectors.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from agentic_search.dependencies import Dependencies
from agentic_search.logic.executor import dense_aspect, planned_dense_text
from agentic_search.pipeline.embedding import embed_texts
from agentic_search.wire import QueryPlan, RetrievedList, VectorSource


def query_relevance(
    c: Dependencies, plan: QueryPlan, results: Sequence[RetrievedList], ids: Sequence[str]
) -> dict[str, float]:
    """Cosine to the query of each of ``ids`` on the plan's main aspect, rounded to 4
    decimals; empty when the plan embeds no query text (a query by example only)."""
    aspect = dense_aspect(plan, c.schema)
    text = planned_dense_text(plan, aspect)
    if not text or not ids:
        return {}
    name_prefix = f"dense:{aspect}:"
    out: dict[str, float] = {}
    for r in results:
        if r.error is None and r.name.startswith(name_prefix) and r.query == text:
            for h in r.hits:
                out.setdefault(h.id, round(float(h.score), 4))
    missing = [rid for rid in dict.fromkeys(ids) if rid not in out]
    if missing:
        probe = QueryPlan(
            domain=c.schema.name,
            strategy="identity-focused",
            vector_sources=[VectorSource(aspect=aspect, top_k=1, text=text)],
            fusion="none",
        )
        vectors, errors = embed_texts(c, probe)
        if text in vectors and text not in errors:
            q = np.asarray(vectors[text], dtype=np.float32)
            q = q / (float(np.linalg.norm(q)) or 1.0)
            for rid, vec in c.store.vectors_of(c.schema, missing, aspect).items():
                out[rid] = round(float(np.dot(q, np.asarray(vec, dtype=np.float32))), 4)
    wanted = set(ids)
    return {rid: v for rid, v in out.items() if rid in wanted}


__all__ = ["query_relevance"]
