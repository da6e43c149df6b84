"""Propose a domain's ``quality:`` thresholds (abstention) from its tuning queries.

A domain without ``quality:`` never answers "no good match" (the defaults support every
candidate). The thresholds are cosines on one embedder's scale, so they are chosen on the
domain's own judged queries, the way the tools schema's were
(``benchmarks/quality/per_candidate.py``):

1. every query of the split (answerable ones judged in ``qrels``, unanswerable ones marked
   ``"answerable": false``) is searched once by the executor with abstention off, keeping
   each candidate's own evidence (:func:`candidate_evidence`: its best cosine to the query,
   an asked vocabulary value, every query word, named) and the evidence pack's coverage;
2. a grid of ``candidate_relevance`` x ``candidate_floor`` (:func:`threshold_grid`, on the
   cosines observed: 0.02 apart between the 5th and the 95th percentile of the answerable
   queries' best cosines) is replayed through :mod:`agentic_search.logic.quality`;
3. the pair kept (:func:`choose`): among those whose nDCG@10 (pytrec_eval) is at least the
   ``baseline`` (hybrid-rrf's on the same queries), the fewest queries wrong (answerable
   left empty plus unanswerable padded), then the highest nDCG@10, then the highest
   thresholds (the least padding for the same result); none when it is no better than no
   abstention at all (:class:`NothingGained`: a block that only withholds answers).

``min_relevance`` (the best cosine a ``good`` verdict needs; it withholds nothing) is
proposed as the median of the answerable queries' best cosines, ``min_coverage`` as the
tools schema's 0.9. Report the thresholds on held-out queries (``eval``), never on these.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentic_search.logic.quality import (
    CandidateEvidence,
    answer_quality,
    best_cosine,
    ids_to_return,
)
from agentic_search.logic.schema import QualitySpec
from agentic_search_cli.evaluation.datasets import BeirDataset
from agentic_search_cli.evaluation.systems import TOP_K

if TYPE_CHECKING:
    from agentic_search.service import SearchService
    from agentic_search.wire import SearchResponse

#: ``min_coverage`` proposed: the tools schema's (coverage is a share, not a cosine).
MIN_COVERAGE = 0.9
#: Grid step of the cosine thresholds.
STEP = 0.02


@dataclass(frozen=True)
class Observed:
    """One query searched with abstention off: its candidates' evidence in rank order and
    the evidence pack's coverage confidence."""

    qid: str
    answerable: bool
    coverage: float
    evidence: list[CandidateEvidence]


@dataclass
class Row:
    """One threshold pair replayed: queries left empty, padded, and nDCG@10."""

    candidate_relevance: float
    candidate_floor: float
    left_empty: int
    padded: int
    ndcg: float

    def wire(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "candidate_relevance": self.candidate_relevance,
            "candidate_floor": self.candidate_floor,
            "left_empty": self.left_empty,
            "padded": self.padded,
            "ndcg@10": round(self.ndcg, 4),
        }


@dataclass
class Calibration:
    """The proposed thresholds, the baseline they keep, and every pair replayed (best
    first)."""

    quality: QualitySpec
    baseline: float
    answerable: int
    unanswerable: int
    rows: list[Row] = field(default_factory=list)
    before: Row | None = None

    def yaml(self) -> str:
        """The ``quality:`` block to paste into the domain's YAML."""
        q = self.quality
        return (
            "quality:\n"
            f"  min_relevance: {q.min_relevance:.2f}\n"
            f"  min_coverage: {q.min_coverage:.2f}\n"
            f"  candidate_relevance: {q.candidate_relevance:.2f}\n"
            f"  candidate_floor: {q.candidate_floor:.2f}\n"
        )

    def wire(self) -> dict[str, Any]:
        """JSON-able form (the rows best first)."""
        return {
            "quality": self.quality.model_dump(exclude_none=True),
            "baseline_ndcg@10": round(self.baseline, 4),
            "answerable": self.answerable,
            "unanswerable": self.unanswerable,
            "without_abstention": self.before.wire() if self.before else None,
            "chosen": self.rows[0].wire() if self.rows else None,
            "rows": [r.wire() for r in self.rows],
        }


def candidate_evidence(service: SearchService, resp: SearchResponse) -> list[CandidateEvidence]:
    """Each candidate's own evidence in ``resp`` (rank order), as Finalize grades it: its
    best cosine to the query, an asked vocabulary value, every query word, named."""
    words = set(service.deps.analyzer.terms(resp.intent.normalized_query))
    fields = service.schema.vocabulary_fields
    asked = {fields[v]: set(vals) for v, vals in resp.intent.matches.items() if v in fields}
    pins = {p for r in resp.evidence.report.rounds for p in r.pinned}
    return [
        CandidateEvidence(
            id=c.id,
            relevance=best_cosine(c.relevance, c.provenance.hits),
            vocabulary=any(
                asked.get(f, set()) & set(v) for f, v in c.provenance.matched_values.items()
            ),
            lexical=bool(words) and words <= set(c.provenance.matched_terms),
            named=c.id in pins,
        )
        for c in resp.output.candidates
    ]


def observe(
    service: SearchService, dataset: BeirDataset, on_progress: Any = None
) -> list[Observed]:
    """Search every query of ``dataset`` with abstention off (``service``'s schema gets a
    ``QualitySpec()`` that supports every candidate, under every embedder); a query the
    service refuses (over the length bound) is left out."""
    schema = service.deps.schema
    schema.quality = QualitySpec()
    schema.calibrations = {}
    out = []
    for qid, text in dataset.queries.items():
        try:
            resp = service.search(text, limit=TOP_K)
        except ValueError:
            continue
        finally:
            if on_progress is not None:
                on_progress(1)
        out.append(
            Observed(
                qid,
                qid not in dataset.unanswerable,
                resp.output.confidence,
                candidate_evidence(service, resp),
            )
        )
    return out


def best_cosines(observed: list[Observed]) -> list[float]:
    """The best candidate cosine of each answerable query that has one, sorted."""
    return sorted(
        max(e.relevance for e in o.evidence if e.relevance is not None)
        for o in observed
        if o.answerable and any(e.relevance is not None for e in o.evidence)
    )


def threshold_grid(observed: list[Observed]) -> list[float]:
    """Cosine thresholds :data:`STEP` apart from the 5th to the 95th percentile of the
    answerable queries' best cosines (empty when none was measured)."""
    best = best_cosines(observed)
    if not best:
        return []
    lo = best[int(0.05 * (len(best) - 1))]
    hi = best[int(0.95 * (len(best) - 1))]
    start = round(lo - lo % STEP, 2)
    return [round(start + STEP * i, 2) for i in range(int((hi - start) / STEP) + 1)]


def replay(
    spec: QualitySpec, observed: list[Observed], qrels: dict[str, dict[str, int]]
) -> tuple[int, int, float]:
    """``(answerable left empty, unanswerable padded, mean nDCG@10)`` of ``spec`` over the
    observed queries (an answerable query left empty scores 0)."""
    import pytrec_eval

    empty = padded = 0
    run: dict[str, dict[str, float]] = {}
    for o in observed:
        verdict = answer_quality(spec, o.evidence, o.coverage)
        kept = ids_to_return(spec, verdict, o.evidence)
        if o.answerable:
            empty += not kept
            run[o.qid] = {rid: float(len(kept) - i) for i, rid in enumerate(kept)} or {"-": 0.0}
        else:
            padded += bool(kept)
    judged = {q: r for q, r in qrels.items() if q in run}
    if not judged:
        return empty, padded, 0.0
    scores = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.10"}).evaluate(
        {q: run[q] for q in judged}
    )
    return empty, padded, sum(s["ndcg_cut_10"] for s in scores.values()) / len(judged)


class NothingGained(ValueError):
    """No threshold pair does better than no abstention on the split (the ``quality:`` block
    would only withhold answers)."""


def choose(
    observed: list[Observed], qrels: dict[str, dict[str, int]], baseline: float
) -> Calibration:
    """Replay the grid and keep the pair described in the module docstring.

    Raises:
        ValueError: when no answerable query got a measured candidate (nothing to calibrate).
        NothingGained: when the best pair is no better than answering without abstention
            (as many queries wrong or more, or the same with no higher nDCG@10).
    """
    grid = threshold_grid(observed)
    if not grid:
        raise ValueError(
            "no answerable query returned a candidate with a cosine: nothing to calibrate"
        )
    best = best_cosines(observed)
    min_relevance = round(statistics.median(best), 2)
    rows = []
    for relevance in grid:
        for floor in [-1.0, *(f for f in grid if f < relevance)]:
            spec = QualitySpec(
                min_relevance=min_relevance,
                min_coverage=MIN_COVERAGE,
                candidate_relevance=relevance,
                candidate_floor=floor,
            )
            rows.append(Row(relevance, floor, *replay(spec, observed, qrels)))

    def merit(r: Row) -> tuple[bool, int, float]:
        return (r.ndcg < baseline, r.left_empty + r.padded, -r.ndcg)

    rows.sort(key=lambda r: (*merit(r), -r.candidate_relevance, -r.candidate_floor))
    top = rows[0]
    before = Row(-1.0, -1.0, *replay(QualitySpec(), observed, qrels))
    if merit(before) <= merit(top):
        raise NothingGained(
            f"no thresholds do better on this split than answering without abstention "
            f"(queries wrong: {before.left_empty + before.padded} without, "
            f"{top.left_empty + top.padded} with the best pair): leave quality: out, or add "
            f'tuning queries the catalog cannot answer ("answerable": false)'
        )
    return Calibration(
        quality=QualitySpec(
            min_relevance=min_relevance,
            min_coverage=MIN_COVERAGE,
            candidate_relevance=top.candidate_relevance,
            candidate_floor=top.candidate_floor,
        ),
        baseline=baseline,
        answerable=sum(o.answerable for o in observed),
        unanswerable=sum(not o.answerable for o in observed),
        rows=rows,
        before=before,
    )


__all__ = [
    "Calibration",
    "NothingGained",
    "Observed",
    "Row",
    "best_cosines",
    "candidate_evidence",
    "choose",
    "observe",
    "replay",
    "threshold_grid",
]
