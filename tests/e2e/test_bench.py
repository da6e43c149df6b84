"""``agentic-search bench`` on the tiny synthetic BEIR dataset of ``support.datasets`` (real
embedder, real embedded stores, real onnxruntime session, real subprocess imports; small counts)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.datasets import DOCS, make_dataset

from agentic_search.config import Settings
from agentic_search.service import SearchService
from agentic_search_cli import bench
from agentic_search_cli.main import main

QUERIES = 4  # judged test queries of the tiny dataset
REPEAT = 2
COMMON_STAGES = {"intent", "plan", "embed", "dense", "sparse", "retrieve", "fusion", "hydrate"}
MULTI_ROUND_STAGES = {"evidence", "select", "grade"}
SEQUENTIAL = ("intent", "plan", "embed", "retrieve", "fusion", "hydrate")


@pytest.fixture(scope="module")
def dataset_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_dataset(tmp_path_factory.mktemp("bench-beir"))


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project root with two handlers: one that imports, one that fails at import."""
    root = tmp_path_factory.mktemp("bench-root")
    (root / "functions" / "hello").mkdir(parents=True)
    (root / "functions" / "hello" / "app.py").write_text("import json\n\nVALUE = 1\n")
    (root / "functions" / "broken").mkdir(parents=True)
    (root / "functions" / "broken" / "app.py").write_text("raise RuntimeError('boom')\n")
    (root / "functions" / "no_handler").mkdir(parents=True)  # no app.py: not timed
    return root


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder) -> Iterator[SearchService]:
    home = tmp_path_factory.mktemp("bench-home") / "home"
    settings = bench.without_cache(
        Settings(agentic_search_home=home, collection_prefix="eval-tiny-")
    )
    eng = SearchService.create(settings, "documents", embedder=embedder)
    yield eng
    eng.close()


@pytest.fixture(scope="module")
def result(engine: SearchService, dataset_dir: Path, root: Path) -> dict[str, Any]:
    config = bench.BenchConfig(
        dataset=dataset_dir, warmup=1, repeat=REPEAT, golden=False, import_runs=1
    )
    started: list[tuple[str, int | None]] = []

    def track(description: str, total: int | None):
        started.append((description, total))
        return lambda n: None

    out = bench.run_bench(config, engine.settings, dataset_engine=engine, track=track, root=root)
    out["_tracked"] = started
    return out


def test_every_stage_has_ordered_percentiles_and_the_expected_names(result):
    block = result["search"]["dataset"]
    assert block["queries"] == QUERIES and block["repeat"] == REPEAT and block["limit"] == 100
    assert set(block["modes"]) == set(bench.MODES)
    for mode, mb in block["modes"].items():
        stages = mb["stages"]
        expected = COMMON_STAGES | {"total"} | (MULTI_ROUND_STAGES if mode == "executor" else set())
        assert expected <= set(stages), (mode, sorted(stages))
        assert list(stages)[-1] == "total"
        for name, row in stages.items():
            assert 0 <= row["p50"] <= row["p95"] <= row["p99"], (mode, name, row)
            assert 1 <= row["n"] <= QUERIES * REPEAT, (mode, name, row)
        # every timed search has a wall-clock total, and it bounds its sequential stages
        assert stages["total"]["n"] == QUERIES * REPEAT
        assert stages["total"]["p50"] > 0
        assert sum(mb["rounds_run"].values()) == QUERIES * REPEAT
    assert set(block["modes"]["executor-1round"]["rounds_run"]) == {"1"}
    assert block["sync"]["documents"] == len(DOCS)


def test_per_search_stages_are_bounded_by_the_wall_time(engine):
    # GIVEN single searches of each mode, the source calls recorded
    for rounds in bench.MODES.values():
        with bench.record_sources(engine) as calls:
            resp = engine.search("pancreas hormone regulating blood sugar", limit=10, rounds=rounds)
        stages = bench.search_stages(resp, calls, wall_ms=10_000.0)
        # THEN the sources ran and were attributed to their kinds
        assert calls and stages["dense"] > 0 and stages["sparse"] > 0
        assert stages["embed"] > 0
        # AND the executor's own stage times are consistent with its total
        executor_total = resp.output.execution_stats.stage_ms.get("total")
        if executor_total is not None:
            inside = sum(stages.get(s, 0.0) for s in ("embed", "retrieve", "fusion", "hydrate"))
            assert inside <= executor_total * 1.05 + 1.0, (stages, executor_total)
    # AND the recorder stopped recording
    assert engine.deps.caches.source_log is None


def test_raw_model_and_ingest_measure_the_same_tokens(result):
    model, ingest = result["model"], result["ingest"]
    assert model["available"] and len(model["runs"]) == 2
    for run in model["runs"]:
        assert run["max_length"] == 256 and run["batch_size"] == 32
        assert run["texts"] == len(DOCS) and run["tokens_per_s"] > 0
        assert run["session_options"]["graph_optimization_level"] == "ORT_ENABLE_ALL"
        assert Path(run["model_file"]).is_file()
    # every document is one short chunk with one aspect: 12 texts, the same as the raw input
    assert ingest["documents"] == ingest["points"] == ingest["embedded_texts"] == len(DOCS)
    assert ingest["texts_match_raw_input"]
    assert ingest["tokens"] == model["runs"][0]["tokens"] > len(DOCS) * 2
    assert isinstance(ingest["ratio"], float) and ingest["ratio"] > 0
    assert ingest["ratio"] == pytest.approx(
        ingest["tokens_per_s"] / model["tokens_per_s"], rel=0.01
    )
    assert 0 < ingest["embed_seconds"] <= ingest["seconds"]
    assert ingest["docs_per_s"] == pytest.approx(len(DOCS) / ingest["seconds"], rel=0.01)
    assert ingest["peak_rss_bytes"] >= ingest["rss_before_bytes"] > 50 * 1024**2
    assert ingest["collection"] == "bench-documents"
    assert result["targets"]["ingest_tokens_ratio"]["value"] == ingest["ratio"]


def test_imports_time_the_engine_and_each_handler_and_report_failures(result, root):
    imp = result["imports"]
    assert imp["functions_found"] and imp["runs"] == 1
    targets = imp["targets"]
    assert list(targets) == [
        "agentic_search.service",
        "functions/broken/app.py",
        "functions/hello/app.py",
    ]
    engine_row, hello = targets["agentic_search.service"], targets["functions/hello/app.py"]
    assert engine_row["wall_ms_median"] > imp["interpreter_start_ms"] > 0
    assert engine_row["import_ms_median"] > hello["import_ms_median"] >= 0
    assert hello["cwd"] == str(root / "functions" / "hello")
    assert "boom" in targets["functions/broken/app.py"]["error"]


def test_imports_without_a_functions_folder(tmp_path):
    imp = bench.measure_imports(tmp_path, runs=1)
    assert not imp["functions_found"] and "no functions/ folder" in imp["note"]
    assert list(imp["targets"]) == ["agentic_search.service"]


def test_machine_and_progress_are_recorded(result):
    m = result["machine"]
    assert m["logical_cpus"] >= 1 and m["ram_bytes"] > 0 and m["cpu_model"]
    tracked = [d for d, _ in result["_tracked"]]
    assert any(d.startswith("raw model") for d in tracked)
    assert any(d.startswith("ingesting 12 records into a throwaway") for d in tracked)


def _md_stage_rows(md: str) -> dict[str, dict[str, list[float]]]:
    """{section heading: {stage: [p50, p95, p99, mean, n]}} from the markdown tables."""
    rows: dict[str, dict[str, list[float]]] = {}
    section = mode = ""
    for line in md.splitlines():
        if line.startswith("## "):
            section = line
        elif line.startswith("### "):
            mode = line[4:].split(" ", 1)[0]
        elif line.startswith("| ") and section.startswith("## Search latency") and mode:
            cells = [c.strip() for c in line.strip("|").split("|")]
            if cells[0] in ("stage", "---"):
                continue
            rows.setdefault(f"{section} {mode}", {})[cells[0]] = [float(c) for c in cells[1:]]
    return rows


def test_json_and_markdown_files_hold_the_same_numbers(result, tmp_path):
    clean = {k: v for k, v in result.items() if not k.startswith("_")}
    paths = bench.write_outputs(clean, tmp_path / "out")
    assert [p.name for p in paths] == [bench.JSON_FILE, bench.MD_FILE, bench.STAGES_PLOT]
    assert paths[2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads(paths[0].read_text())
    md = paths[1].read_text()
    tables = _md_stage_rows(md)
    block = data["search"]["dataset"]
    for mode, mb in block["modes"].items():
        key = next(k for k in tables if "tiny (test)" in k and k.endswith(f" {mode}"))
        assert list(tables[key]) == list(mb["stages"])
        for stage, row in mb["stages"].items():
            expected = [row["p50"], row["p95"], row["p99"], row["mean"], row["n"]]
            assert tables[key][stage] == pytest.approx(expected, abs=0.006), (mode, stage)
        # the plot draws the same percentiles, every stage but the total
        drawn = bench.stage_grid(data)[f"dataset {mode}"]
        assert list(drawn) == [s for s in mb["stages"] if s != "total"]
        for stage, bars in drawn.items():
            row = mb["stages"][stage]
            assert bars == (row["p50"], row["p95"], row["p99"]), (mode, stage)
    ingest = data["ingest"]
    assert f"**{ingest['ratio']:,.3f}**" in md
    assert f"| ingest tokens/s | {ingest['tokens_per_s']:,.1f} " in md
    assert f"| raw model tokens/s (mean) | {data['model']['tokens_per_s']:,.1f} |" in md
    engine_ms = data["imports"]["targets"]["agentic_search.service"]["wall_ms_median"]
    assert re.search(rf"\| agentic_search.service \| {engine_ms:.1f} \|", md)
    assert data["machine"]["cpu_model"] in md


def test_cli_bench_help_lists_the_options(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for option in (
        "--dataset",
        "--split",
        "--max-queries",
        "--warmup",
        "--repeat",
        "--ingest-docs",
        "--out",
        "--json",
        "--collection-prefix",
        "--import-runs",
        "--no-golden",
    ):
        assert option in out, option
    assert "tokens/s" in out and "bench.json" in out


def test_cli_bench_json_writes_both_files(dataset_dir, tmp_path, monkeypatch, capsys):
    # GIVEN a fresh working folder WHEN bench runs on the dataset with small counts
    monkeypatch.setenv("AGENTIC_SEARCH_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)  # no functions/ here: only the service import is timed
    out = tmp_path / "bench"
    code = main(
        [
            "bench",
            "--dataset",
            str(dataset_dir),
            "--max-queries",
            "2",
            "--warmup",
            "0",
            "--ingest-docs",
            "5",
            "--import-runs",
            "1",
            "--no-golden",
            "--json",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    captured = capsys.readouterr()
    # THEN stdout is one JSON object, the same as bench.json
    lines = captured.out.strip().splitlines()
    assert len(lines) == 1
    obj = json.loads(lines[0])
    assert obj == json.loads((out / bench.JSON_FILE).read_text())
    assert obj["dataset"]["queries"] == 2 and obj["ingest"]["documents"] == 5
    assert obj["search"]["dataset"]["collection"] == "eval-tiny-documents"
    assert "golden" not in obj["search"]
    assert list(obj["imports"]["targets"]) == ["agentic_search.service"]
    assert (out / bench.MD_FILE).read_text().startswith("# agentic-search bench")
    assert "wrote" in captured.err


def test_cli_bench_piped_prints_the_markdown_report_whole(
    dataset_dir, tmp_path, monkeypatch, capsys
):
    # issue 25 finding 13: piped, rich rendered the report at 80 columns (tables truncated);
    # now stdout that is not a terminal gets the Markdown itself, the same as bench.md
    monkeypatch.setenv("AGENTIC_SEARCH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "bench"
    argv = ["bench", "--dataset", str(dataset_dir), "--max-queries", "2", "--warmup", "0"]
    argv += ["--ingest-docs", "5", "--import-runs", "1", "--no-golden", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "…" not in printed
    assert printed.strip() == (out / bench.MD_FILE).read_text().strip()


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        (["--warmup", "-1"], "must be at least 0"),
        (["--repeat", "0"], "must be at least 1"),
        (["--split", "dev"], "no qrels/dev.tsv"),
        (["--out", __file__], "exists and is not a folder"),
    ],
)
def test_cli_bench_usage_errors_exit_2(extra, reason, dataset_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AGENTIC_SEARCH_HOME", str(tmp_path))
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--dataset", str(dataset_dir), *extra])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert reason in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "qdrant").exists()


def test_golden_queries_latency_on_the_bundled_catalog(tools_engine):
    # GIVEN the session's tools engine, without a result cache
    engine = SearchService.create(
        bench.without_cache(tools_engine.settings),
        "tools",
        store=tools_engine.deps.store,
        embedder=tools_engine.deps.embedder,
        keyword=tools_engine.deps.keyword,
    )
    golden = bench.read_golden()
    assert len(golden) >= 30
    # WHEN ten golden queries are timed
    block = bench.measure_search(engine, golden[:10], bench.GOLDEN_LIMIT, warmup=1)
    # THEN the structured source shows up (the catalog has vocabularies) and percentiles order
    for mb in block["modes"].values():
        assert {"dense", "sparse", "structured", "total"} <= set(mb["stages"])
        for row in mb["stages"].values():
            assert row["p50"] <= row["p95"] <= row["p99"]


def test_search_latency_refuses_a_cached_engine(engine):
    cached = engine.settings.model_copy(update={"cache_backend": "sqlite"})
    other = SearchService.create(
        cached, "documents", store=engine.deps.store, embedder=engine.deps.embedder
    )
    with pytest.raises(ValueError, match="without a result cache"):
        bench.measure_search(other, ["anything"], 10)
