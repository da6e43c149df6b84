"""Knowing when nothing fits: a calibrated answer-quality signal and the "no good match"
verdict, from the entity links, the evidence's coverage and the absolute relevance of the
candidates (their cosine to the query; fused scores are relative and always start at 1).

* ``good``: the query named records and they were found, or the best candidate clears the
  domain's ``min_relevance`` and the coverage its ``min_coverage``;
* ``weak``: one of the two falls short: everything is returned, flagged;
* ``none`` ("no good match"): both fall short and no candidate contains every word of the
  query: only the candidates whose own relevance clears ``min_relevance`` are returned
  (usually none), instead of padding the top k. A candidate holding every query word (a
  lexical match the embedding may not see: a rare term, a long document's later passage)
  keeps the answer ``weak`` and is returned.

``score`` in [0, 1] is the mean of ``relevance / min_relevance`` and ``coverage /
min_coverage``, each capped at 1 (1.0 for named records found); the thresholds are the
domain schema's ``quality`` (calibrated per domain). A query by example alone (no embedded
text: "alternative to Pinecone") has no relevance to read and is judged by coverage alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agentic_search.domain.schema import QualitySpec
from agentic_search.state import AnswerQuality


def _ratio(value: float, threshold: float) -> float:
    return 1.0 if threshold <= 0 else max(0.0, min(1.0, value / threshold))


def answer_quality(
    spec: QualitySpec,
    relevance: Mapping[str, float],
    coverage: float,
    named_found: Sequence[str] = (),
    lexical: Sequence[str] = (),
) -> AnswerQuality:
    """The verdict for a ranking whose candidates have ``relevance`` (id -> cosine) and whose
    evidence has ``coverage`` confidence; ``named_found``: named records that were found;
    ``lexical``: candidates that contain every word of the query."""
    if named_found:
        return AnswerQuality(
            verdict="good", score=1.0, reason=f"named records found: {', '.join(named_found)}"
        )
    top = max(relevance.values(), default=None)
    cov_ok = coverage >= spec.min_coverage
    if top is None:
        score = _ratio(coverage, spec.min_coverage)
        verdict = "good" if cov_ok else "weak"
        return AnswerQuality(
            verdict=verdict,
            score=round(score, 3),
            reason=f"coverage {coverage:.2f} (no query text embedded to measure relevance)",
        )
    rel_ok = top >= spec.min_relevance
    score = 0.5 * _ratio(top, spec.min_relevance) + 0.5 * _ratio(coverage, spec.min_coverage)
    detail = (
        f"best match {top:.3f} {'>=' if rel_ok else '<'} {spec.min_relevance:.3f}, "
        f"coverage {coverage:.2f} {'>=' if cov_ok else '<'} {spec.min_coverage:.2f}"
    )
    if rel_ok and cov_ok:
        return AnswerQuality(verdict="good", score=round(score, 3), reason=detail)
    if rel_ok or cov_ok:
        return AnswerQuality(verdict="weak", score=round(score, 3), reason=detail)
    if lexical:
        return AnswerQuality(
            verdict="weak",
            score=round(score, 3),
            reason=f"{detail}; but {len(lexical)} result(s) contain every query word",
        )
    return AnswerQuality(verdict="none", score=round(score, 3), reason=detail)


def clearing(
    verdict: AnswerQuality, ids: Sequence[str], relevance: Mapping[str, float], spec: QualitySpec
) -> list[str]:
    """The ids to return: all of them unless the verdict is ``none``, then only those whose
    own relevance clears ``min_relevance``."""
    if verdict.verdict != "none":
        return list(ids)
    return [rid for rid in ids if relevance.get(rid, -1.0) >= spec.min_relevance]


__all__ = ["answer_quality", "clearing"]
