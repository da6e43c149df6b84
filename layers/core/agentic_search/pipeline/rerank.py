"""Reranking the top of a round's evidence with the configured cross-encoder (or none)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from agentic_search.logic.fusion import minmax
from agentic_search.ports import Reranker, RerankerError
from agentic_search.wire import Evidence, SourceError


def rerank_candidates(
    reranker: Reranker | None, query: str, evidence: Sequence[Evidence], top_n: int
) -> tuple[list[Evidence], SourceError | None]:
    """Rerank the top ``top_n`` (by fused order) with ``reranker``; the rest keep their order
    after them. Scores go to ``rerank_score`` and ``relevance`` (min-max of the rerank
    scores); ``fused_score`` is untouched. No reranker or a failing one: input unchanged (the
    failure is returned as an error)."""
    if reranker is None or not evidence:
        return list(evidence), None
    head, tail = list(evidence[:top_n]), list(evidence[top_n:])
    try:
        scores = reranker.score(query, [f"{e.title or ''}. {e.text}" for e in head])
    except RerankerError as exc:
        return list(evidence), SourceError(
            source="reranker", error="RerankerError", message=str(exc)
        )
    real = [float(s) for s in scores if np.isfinite(s)]
    floor = (min(real) - 1.0) if real else 0.0
    finite = [float(s) if np.isfinite(s) else floor for s in scores]
    norm = minmax(finite)
    ranked = sorted(
        (
            e.model_copy(update={"rerank_score": round(float(s), 6), "relevance": round(n, 6)})
            for e, s, n in zip(head, finite, norm, strict=True)
        ),
        key=lambda e: -(e.rerank_score or 0.0),
    )
    tail = [e.model_copy(update={"relevance": 0.0}) for e in tail]
    return ranked + tail, None


__all__ = ["rerank_candidates"]
