"""Reranking the top of the evidence (FuseRerank's reranker call), with in-test rerankers."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest
from support.builders import rerank_input

from agentic_search.pipeline.rerank import rerank_candidates
from agentic_search.ports import RerankerError

# ----- 7. rerank_candidates ----------------------------------------------------------------------


class ListReranker:
    """A Reranker that answers fixed scores (the protocol is the edge, not our code)."""

    name = "list"

    def __init__(self, scores: Sequence[float]) -> None:
        self.scores = list(scores)
        self.calls: list[tuple[str, list[str]]] = []

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        self.calls.append((query, list(texts)))
        return self.scores[: len(texts)]


class FailingReranker:
    name = "failing"

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        raise RerankerError("model exploded")


def test_rerank_top_n_by_hand() -> None:
    """GIVEN 4 pieces, top_n 3 and scores 0.2, 0.8, 0.5 for e1..e3
    THEN min-max (lo 0.2, hi 0.8): e1 0, e2 1, e3 (0.5-0.2)/0.6 = 0.5;
    order e2, e3, e1 then e4 (not scored, relevance 0); fused scores unchanged."""
    rr = ListReranker([0.2, 0.8, 0.5])
    out, err = rerank_candidates(rr, "the query", rerank_input(), 3)
    assert err is None
    assert rr.calls == [("the query", ["T1. one", ". two", "T3. three"])]
    assert [e.id for e in out] == ["e2", "e3", "e1", "e4"]
    assert [e.rerank_score for e in out] == [0.8, 0.5, 0.2, None]
    assert [e.relevance for e in out] == pytest.approx([1.0, 0.5, 0.0, 0.0])
    assert [e.fused_score for e in out] == [0.3, 0.2, 0.4, 0.1]


def test_rerank_non_finite_scores_go_below_the_real_ones() -> None:
    """GIVEN scores -inf, 2.0, 1.0 THEN -inf becomes min(real) - 1 = 0.0; min-max over
    [0, 2, 1] -> 0, 1, 0.5; order e2, e3, e1."""
    out, err = rerank_candidates(ListReranker([-math.inf, 2.0, 1.0]), "q", rerank_input()[:3], 5)
    assert err is None
    assert [(e.id, e.rerank_score, e.relevance) for e in out] == [
        ("e2", 2.0, 1.0),
        ("e3", 1.0, 0.5),
        ("e1", 0.0, 0.0),
    ]


def test_rerank_failure_and_none_leave_input_unchanged() -> None:
    """GIVEN a reranker raising RerankerError THEN the input unchanged and an error;
    GIVEN no reranker THEN unchanged and no error; no evidence THEN []."""
    items = rerank_input()
    out, err = rerank_candidates(FailingReranker(), "q", items, 3)
    assert out == items
    assert err is not None
    assert (err.source, err.error, err.message) == ("reranker", "RerankerError", "model exploded")
    out, err = rerank_candidates(None, "q", items, 3)
    assert out == items and err is None
    assert rerank_candidates(ListReranker([]), "q", [], 3) == ([], None)
