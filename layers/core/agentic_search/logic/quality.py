"""Knowing when nothing fits, per candidate: each candidate's own relevance evidence decides
whether it is *supported*, and the answer-level verdict summarises them.

A candidate's evidence (:class:`CandidateEvidence`):

* its cosine to the query (``relevance``: the absolute match; fused scores are relative and
  always start at 1);
* whether it holds a vocabulary value the query asked for (a category, a capability: the
  query's words linked to the catalog's own terms);
* whether it contains every searchable word of the query (a lexical match the embedding may
  not see: a rare term, a long document's later passage);
* whether it is a record the query named (an entity link).

A candidate is **supported** when it was named, holds every query word, holds an asked
vocabulary value, or its cosine clears the domain's ``candidate_relevance``. The answer:

* ``none`` ("no good match"): no candidate among the first :data:`SUPPORT_WINDOW` is
  supported and the evidence's coverage is under ``min_coverage``: nothing is returned;
* otherwise the candidates are returned but those with no evidence at all (cosine under
  ``candidate_floor``, no vocabulary value, not every word, not named) are withheld: a good
  answer is not padded with unrelated records;
* the summary verdict: ``good`` when records the query named were found, or the best cosine
  clears ``min_relevance`` and the coverage ``min_coverage``; ``weak`` otherwise.

``score`` in [0, 1] is the mean of ``relevance / min_relevance`` and ``coverage /
min_coverage``, each capped at 1 (1.0 for named records found). A query by example alone (no
embedded text: "alternative to Pinecone") has no relevance to read: it is judged by coverage
alone and nothing is withheld. The thresholds are the domain schema's ``quality``, each
schema file says on what data they were chosen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentic_search.logic.schema import QualitySpec
from agentic_search.wire import AnswerQuality

#: An answer needs a supported candidate among its first this many.
SUPPORT_WINDOW = 10


@dataclass(frozen=True)
class CandidateEvidence:
    """One candidate's own relevance evidence: ``relevance`` its cosine to the query (None
    when not measured), ``vocabulary`` it holds a vocabulary value the query asked for,
    ``lexical`` it contains every query word, ``named`` the query named it."""

    id: str
    relevance: float | None = None
    vocabulary: bool = False
    lexical: bool = False
    named: bool = False


def _ratio(value: float, threshold: float) -> float:
    return 1.0 if threshold <= 0 else max(0.0, min(1.0, value / threshold))


def supported(spec: QualitySpec, ev: CandidateEvidence) -> bool:
    """Whether ``ev``'s own evidence says it answers the query (see the module docstring)."""
    if ev.named or ev.lexical or ev.vocabulary:
        return True
    return ev.relevance is not None and ev.relevance >= spec.candidate_relevance


def above_floor(spec: QualitySpec, ev: CandidateEvidence) -> bool:
    """Whether ``ev`` may be returned beside supported candidates: supported, not measured,
    or its cosine at least ``candidate_floor``."""
    if supported(spec, ev) or ev.relevance is None:
        return True
    return ev.relevance >= spec.candidate_floor


def answer_quality(
    spec: QualitySpec, evidence: Sequence[CandidateEvidence], coverage: float
) -> AnswerQuality:
    """The summary verdict of a ranking whose candidates (in rank order) have ``evidence``
    and whose evidence pack has ``coverage`` confidence (see the module docstring)."""
    named = [ev.id for ev in evidence if ev.named]
    if named:
        return AnswerQuality(
            verdict="good", score=1.0, reason=f"named records found: {', '.join(named)}"
        )
    measured = [ev.relevance for ev in evidence if ev.relevance is not None]
    cov_ok = coverage >= spec.min_coverage
    if not measured:
        score = _ratio(coverage, spec.min_coverage)
        return AnswerQuality(
            verdict="good" if cov_ok else "weak",
            score=round(score, 3),
            reason=f"coverage {coverage:.2f} (no query text embedded to measure relevance)",
        )
    top = max(measured)
    rel_ok = top >= spec.min_relevance
    score = round(
        0.5 * _ratio(top, spec.min_relevance) + 0.5 * _ratio(coverage, spec.min_coverage), 3
    )
    window = evidence[:SUPPORT_WINDOW]
    backed = [ev for ev in window if supported(spec, ev)]
    detail = (
        f"best match {top:.3f} {'>=' if rel_ok else '<'} {spec.min_relevance:.3f}, "
        f"coverage {coverage:.2f} {'>=' if cov_ok else '<'} {spec.min_coverage:.2f}, "
        f"{len(backed)} of the first {len(window)} supported by their own evidence"
    )
    if not backed and not cov_ok:
        return AnswerQuality(verdict="none", score=score, reason=detail)
    return AnswerQuality(
        verdict="good" if rel_ok and cov_ok else "weak", score=score, reason=detail
    )


def ids_to_return(
    spec: QualitySpec, verdict: AnswerQuality, evidence: Sequence[CandidateEvidence]
) -> list[str]:
    """The ids to return, in order: none on "no good match"; otherwise those above the
    floor (:func:`above_floor`); all of them when no relevance was measured."""
    if verdict.verdict == "none":
        return []
    if all(ev.relevance is None for ev in evidence):
        return [ev.id for ev in evidence]
    return [ev.id for ev in evidence if above_floor(spec, ev)]


__all__ = [
    "SUPPORT_WINDOW",
    "CandidateEvidence",
    "above_floor",
    "answer_quality",
    "ids_to_return",
    "supported",
]
