"""The tools query set (``benchmarks/tools_queries``) through the evaluation on the real
bundled catalog index (real MiniLM, real Edge store): every query answered or counted as an
error, abstention counted from what the systems returned, reported per split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_search.service import SearchService
from agentic_search_cli import evaluation as ev
from agentic_search_cli.main import main

FOLDER = Path(__file__).resolve().parents[2] / "benchmarks" / "tools_queries"
SYSTEMS = ["bm25", "hybrid-rrf", "executor-1round"]


@pytest.fixture(scope="module")
def tools_run(tools_engine: SearchService) -> tuple[ev.BeirDataset, ev.CorpusSync, object]:
    """Both splits of the set, bm25, hybrid RRF and the one-round executor, on the session's
    catalog."""
    dataset = ev.load_beir(FOLDER, "tuning,heldout", tools_engine.schema)
    sync = ev.ensure_corpus(tools_engine, dataset)
    result = ev.evaluate(tools_engine, dataset, SYSTEMS, warmup=0, sync=sync)
    return dataset, sync, result


def test_the_set_runs_on_the_bundled_catalog_without_reindexing(tools_run) -> None:
    dataset, sync, result = tools_run
    # THEN the session's catalog index already holds exactly the corpus: nothing written
    assert not sync.ingested and sync.removed == 0
    # AND every system answered every query (an over-long one is an error, not a crash)
    for name in SYSTEMS:
        assert result.systems[name].rankings.keys() == dataset.queries.keys(), name
    # AND the dense side searched a named vector the tools schema has (it has no "content")
    # (its first aspect: name, vendor, category, description), and found something
    assert result.info["settings"]["dense_aspect"] == "identity"
    assert all(result.systems["hybrid-rrf"].rankings.values())


def test_abstention_is_counted_from_what_each_system_returned(tools_run) -> None:
    dataset, _, result = tools_run
    summary = json.loads(json.dumps(result.summary()))
    assert summary["unanswerable"] == len(dataset.unanswerable) >= 20
    for name in SYSTEMS:
        s = result.systems[name]
        a = summary["systems"][name]["abstention"]
        # GIVEN what the system returned, recounted here from its rankings and errors
        failed = {q for q in dataset.queries if q in s.errors and not s.rankings[q]}
        empty = {q for q in dataset.queries if not s.rankings[q]} - failed
        # THEN clean / padded split the unanswerable queries, errors aside
        assert a["padded"] == sum(1 for q in dataset.unanswerable if s.rankings[q])
        assert a["clean"] == sum(
            1 for q in empty & dataset.unanswerable if s.verdicts.get(q) in (None, "none")
        )
        # AND answerable queries left empty are false abstentions, never errors
        assert a["left_empty"] == len(empty - dataset.unanswerable)
        assert a["errors"] == len(failed)
        # AND each split reports its own share, adding up to the whole
        by_split = summary["systems"][name]["by_split"]
        assert set(by_split) == {"tuning", "heldout"}
        assert sum(b["abstention"]["unanswerable"] for b in by_split.values()) == a["unanswerable"]
        assert sum(b["abstention"]["left_empty"] for b in by_split.values()) == a["left_empty"]
    # AND the keyword index never fails; the executor fails only on a query it refuses for
    # its length (a pasted paragraph), which the eval counts instead of scoring it 0 silently
    assert not result.systems["bm25"].errors
    for q, message in result.systems["executor-1round"].errors.items():
        if not result.systems["executor-1round"].rankings[q]:
            assert len(dataset.queries[q]) > 1000, (q, message)
    # AND every answerable query's metrics are in the means, no unanswerable one is
    assert result.systems["bm25"].per_query.keys() == dataset.qrels.keys()


def test_cli_eval_of_the_set_without_a_split_names_its_splits(tmp_path, monkeypatch, capsys):
    # GIVEN the set, whose splits are tuning and heldout, and no --split (default test)
    monkeypatch.setenv("AGENTIC_SEARCH_HOME", str(tmp_path))
    with pytest.raises(SystemExit) as exc:
        main(["eval", "--dataset", str(FOLDER)])
    # THEN a one-line usage error lists them, before any store is opened
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "available splits: heldout, tuning" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "qdrant").exists()
