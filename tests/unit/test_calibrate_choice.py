"""``calibrate``'s choice of thresholds (cli/agentic_search_cli/evaluation/calibrate.py): a
proposal must beat answering without abstention, or there is none."""

from __future__ import annotations

import pytest

from agentic_search.logic.quality import CandidateEvidence
from agentic_search_cli.evaluation.calibrate import NothingGained, Observed, choose

QRELS = {f"a{i}": {f"r{i}": 2} for i in range(6)}


def _answerable(i: int, cosine: float) -> Observed:
    """An answerable query whose relevant record comes first with ``cosine``."""
    return Observed(
        f"a{i}", True, 1.0, [CandidateEvidence(f"r{i}", cosine), CandidateEvidence("x", 0.1)]
    )


def _unanswerable(cosine: float) -> Observed:
    return Observed("u", False, 1.0, [CandidateEvidence("y", cosine)])


def test_an_unanswerable_query_below_every_answerable_one_gets_a_threshold() -> None:
    # GIVEN answerable queries with best cosines 0.50..0.75 and one unanswerable at 0.30
    observed = [_answerable(i, 0.50 + 0.05 * i) for i in range(6)] + [_unanswerable(0.30)]
    # WHEN a pair is chosen THEN it withholds the unanswerable query and no answerable one
    got = choose(observed, QRELS, baseline=0.5)
    assert got.before is not None and got.before.padded == 1
    assert got.rows[0].padded == 0 and got.rows[0].left_empty == 0
    assert got.quality.candidate_relevance > 0.30


def test_no_pair_is_proposed_when_none_beats_no_abstention() -> None:
    # GIVEN an unanswerable query whose cosine is above every answerable one's: any threshold
    # that withholds it withholds answerable queries too
    observed = [_answerable(i, 0.50 + 0.05 * i) for i in range(6)] + [_unanswerable(0.90)]
    # WHEN a pair is chosen THEN none is: the error says how many queries each gets wrong
    with pytest.raises(NothingGained, match=r"queries wrong: 1 without"):
        choose(observed, QRELS, baseline=0.5)
