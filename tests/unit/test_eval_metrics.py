"""Evaluation metrics that are ours (not trec_eval's): both@k, means by query type, which
metrics a dataset reports, and the TREC run format. Pure: no index, no model."""

from __future__ import annotations

from pathlib import Path

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


# ----- abstention: unanswerable queries answered with nothing, answerable ones left empty -------

#: A tiny synthetic run: what two systems answer to 4 unanswerable and 4 answerable queries.
SYNTHETIC_QUERIES = {
    "u-clean": "nothing fits, said so",
    "u-padded": "nothing fits, three invented results",
    "u-error": "nothing fits, the system failed",
    "u-silent": "nothing fits, empty list without a verdict",
    "a-empty": "answerable, left empty",
    "a-verdict": "answerable, results but 'no good match'",
    "a-error": "answerable, the system failed",
    "a-good": "answerable, found",
}
SYNTHETIC_QRELS = {
    "a-empty": {"d1": 2},
    "a-verdict": {"d2": 2, "d3": 1},
    "a-error": {"d4": 2},
    "a-good": {f"d{i}": 2 for i in range(10, 18)},  # 8 relevant: Recall@5 capped at 5
}
SYNTHETIC_ANSWERS = {
    "u-clean": ev.Answer([], None, "none"),
    "u-padded": ev.Answer(["x1", "x2", "x3"], None, "weak"),
    "u-error": ev.Answer([], "query is too long"),
    "u-silent": ev.Answer([]),
    "a-empty": ev.Answer([], None, "none"),
    "a-verdict": ev.Answer(["d2", "x9"], None, "none"),
    "a-error": ev.Answer([], "query is too long"),
    "a-good": ev.Answer([f"d{i}" for i in range(10, 15)], None, "good"),
}


def test_abstention_counts_clean_padded_left_empty_and_errors_apart() -> None:
    # GIVEN the synthetic answers
    rankings = {q: a.ranking for q, a in SYNTHETIC_ANSWERS.items()}
    errors = {q: a.error for q, a in SYNTHETIC_ANSWERS.items() if a.error}
    verdicts = {q: a.verdict for q, a in SYNTHETIC_ANSWERS.items() if a.verdict}
    unanswerable = {q for q in SYNTHETIC_QUERIES if q.startswith("u-")}
    # WHEN abstention is counted
    a = ev.abstention(list(SYNTHETIC_QUERIES), unanswerable, rankings, errors, verdicts)
    # THEN of 4 unanswerable: "no good match" with nothing and an empty list without a verdict
    # are clean, 3 invented results are padding, a failure is an error (neither)
    assert (a.unanswerable, a.clean, a.padded, a.padded_top5) == (4, 2, 1, 3)
    # AND of 4 answerable: one left empty (a false abstention), one "no good match" verdict
    # that still returned results, one error that is not counted as an abstention
    assert (a.answerable, a.left_empty, a.no_match_verdicts) == (4, 1, 2)
    assert a.errors == 2
    wire = a.wire()
    assert wire["clean_rate"] == 0.5 and wire["padding_rate"] == 0.25
    assert wire["padded_top5_mean"] == 0.75
    # AND with no unanswerable query the rates are absent, not a division by zero
    none = ev.abstention(["a-good"], set(), rankings, errors, verdicts).wire()
    assert none["clean_rate"] is None and none["answerable"] == 1


def test_a_synthetic_run_reports_abstention_and_means_per_split_over_answerable_queries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN a dataset of the 8 synthetic queries in two splits, and a system answering as above
    from types import SimpleNamespace

    from agentic_search.sync.files import CatalogRead
    from agentic_search_cli.evaluation import run, systems
    from agentic_search_cli.evaluation.table import abstention_table

    # (gc.freeze after warm-up is for a long benchmark process, not this test's heap)
    monkeypatch.setattr(run, "freeze_long_lived", lambda: 0)

    monkeypatch.setitem(systems.RUNNERS, "synthetic", lambda e, t: SYNTHETIC_ANSWERS[TEXT_IDS[t]])
    monkeypatch.setitem(systems.RUNNERS, "finds-all", lambda e, t: ev.Answer(["d1", "d2", "d4"]))
    split = {q: ("tuning" if q in ("u-clean", "a-empty") else "heldout") for q in SYNTHETIC_QUERIES}
    dataset = ev.BeirDataset(
        path=Path("/synthetic"),
        split="tuning,heldout",
        corpus=CatalogRead(),
        queries={q: t for q, t in SYNTHETIC_QUERIES.items()},
        qrels=SYNTHETIC_QRELS,
        types={q: "task" for q in SYNTHETIC_QUERIES},
        langs={q: "en" for q in SYNTHETIC_QUERIES},
        splits=split,
        unanswerable=frozenset(q for q in SYNTHETIC_QUERIES if q.startswith("u-")),
    )
    engine = SimpleNamespace(
        schema=SimpleNamespace(aspect_names=["content"]),
        deps=SimpleNamespace(
            embedder=SimpleNamespace(name="none"),
            keyword=SimpleNamespace(name="none"),
            store=SimpleNamespace(collection=lambda schema: "synthetic"),
        ),
    )
    # WHEN the evaluation runs it
    result = ev.evaluate(engine, dataset, ["synthetic", "finds-all"], warmup=0)  # type: ignore[arg-type]
    summary = result.summary()
    s = summary["systems"]["synthetic"]
    # THEN metrics are means over the 4 answerable queries only: a-good's 5 of 8 relevant in
    # the top 5 is Recall@5 1.0 (capped at 5), a-verdict's d2 at rank 1 of 2 relevant is 0.5
    assert summary["answerable"] == 4 and summary["unanswerable"] == 4
    assert s["recall@5"] == pytest.approx((0 + 0.5 + 0 + 1.0) / 4)
    assert result.systems["synthetic"].per_query.keys() == SYNTHETIC_QRELS.keys()
    # AND abstention is reported for the run and per split
    assert s["abstention"]["clean"] == 2 and s["abstention"]["left_empty"] == 1
    assert s["abstention"]["errors"] == 2
    assert s["by_split"]["tuning"]["abstention"]["clean"] == 1
    assert s["by_split"]["tuning"]["abstention"]["left_empty"] == 1
    assert s["by_split"]["heldout"]["abstention"]["padded"] == 1
    assert s["by_split"]["tuning"]["recall@5"] == 0.0
    assert s["by_split"]["heldout"]["by_type"]["task"]["recall@5"] == pytest.approx(1.5 / 3)
    assert summary["splits"] == {"tuning": 2, "heldout": 6}
    # AND a system that never abstains pads every unanswerable query
    f = summary["systems"]["finds-all"]["abstention"]
    assert (f["clean"], f["padded"], f["padding_rate"], f["left_empty"]) == (0, 4, 1.0, 0)
    # AND the table has one row per system and per split
    table = abstention_table(result)
    assert table is not None and table.row_count == 6


TEXT_IDS = {t: q for q, t in SYNTHETIC_QUERIES.items()}
