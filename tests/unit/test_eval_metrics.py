"""Evaluation metrics that are ours (not trec_eval's): both@k, means by query type, which
metrics a dataset reports, and the TREC run format. Pure: no index, no model."""

from __future__ import annotations

import pytest

from agentic_search_cli import evaluation as ev
from agentic_search_cli.evaluation.metrics import means_by_type, multi_relevant
from agentic_search_cli.evaluation.outputs import trec_run_lines
from agentic_search_cli.evaluation.run import EvaluationResult, SystemResult

QRELS = {
    "b1": {"p": 1, "q": 1},  # two supporting paragraphs
    "b2": {"r": 1, "s": 1, "x": 0},  # x judged not relevant: not needed for both@k
    "c1": {"t": 1},  # one relevant document
}
RANKINGS = {
    "b1": ["p", "n1", "n2", "n3", "q"],  # q at rank 5
    "b2": ["s", "r", "x"],
    "c1": [f"n{i}" for i in range(10)] + ["t"],  # t at rank 11
}


def test_both_at_k_needs_every_relevant_document_in_the_top_k() -> None:
    got = ev.evaluate_rankings(QRELS, RANKINGS)
    # b1: p at 1, q at 5 -> not in the top 2, in the top 5 and 10
    assert [got["b1"][f"both@{k}"] for k in (2, 5, 10)] == [0.0, 1.0, 1.0]
    # b2: both relevant in the top 2; the judged-irrelevant x does not count
    assert [got["b2"][f"both@{k}"] for k in (2, 5, 10)] == [1.0, 1.0, 1.0]
    # c1: a single relevant document at rank 11 -> hit@k = 0 for every k
    assert [got["c1"][f"both@{k}"] for k in (2, 5, 10)] == [0.0, 0.0, 0.0]
    assert got["b1"]["recall@10"] == 1.0 and got["c1"]["recall@10"] == 0.0
    assert ev.mean_metrics(got)["both@5"] == pytest.approx(2 / 3)


def test_both_at_k_ignores_the_query_id_as_beir_does() -> None:
    got = ev.evaluate_rankings({"q": {"a": 1, "b": 1}}, {"q": ["q", "a", "b"]})
    assert got["q"]["both@2"] == 1.0
    kept = ev.evaluate_rankings(
        {"q": {"a": 1, "b": 1}}, {"q": ["q", "a", "b"]}, ignore_identical_ids=False
    )
    assert kept["q"]["both@2"] == 0.0


def test_means_by_type_and_which_metrics_are_reported() -> None:
    per = ev.evaluate_rankings(QRELS, RANKINGS)
    types = {"b1": "bridge", "b2": "bridge", "c1": "comparison"}
    by = means_by_type(per, types)
    assert list(by) == ["bridge", "comparison"]
    assert by["bridge"]["both@2"] == pytest.approx(0.5)
    assert by["comparison"]["ndcg@10"] == 0.0
    assert means_by_type(per, {}) == {}
    assert multi_relevant(QRELS) and not multi_relevant({"a": {"x": 1, "y": 0}})
    result = EvaluationResult(
        dataset="d",
        dataset_path="/d",
        split="test",
        query_ids=list(QRELS),
        systems={"s": SystemResult("s", rankings=RANKINGS, per_query=per)},
        types=types,
        multi_relevant=True,
    )
    summary = result.summary()
    assert summary["types"] == {"bridge": 2, "comparison": 1}
    s = summary["systems"]["s"]
    assert {"both@2", "both@5", "both@10", "recall@10"} <= set(s)
    assert s["by_type"]["bridge"]["both@5"] == 1.0
    result.multi_relevant = False
    assert not any(k.startswith("both@") for k in result.summary()["systems"]["s"])


def test_trec_run_lines_keep_the_order_and_number_from_one() -> None:
    result = EvaluationResult(
        dataset="d",
        dataset_path="/d",
        split="test",
        query_ids=["b1", "c1"],
        systems={"sys": SystemResult("sys", rankings={"b1": ["p", "q", "p"], "c1": []})},
    )
    assert trec_run_lines(result, "sys") == ["b1 Q0 p 1 2 sys", "b1 Q0 q 2 1 sys"]
