"""Measured figures live on one page, docs/benchmarks.md, each with its machine, date and
command, and agree with the result files the benchmark scripts wrote.

GIVEN the README WHEN read THEN it quotes no measured figure (a fresh clone did not reproduce
"about 2 minutes" for `make test` or "about 15 s" for the first use, once given there without
machine, load or date). GIVEN docs/benchmarks.md WHEN each section is read THEN it names a
machine, a date and the command that made its figures, and every figure a script wrote to JSON
is quoted as the JSON holds it (a re-run that changes the file, or an edit of the page, fails
here until the two agree).
"""

from __future__ import annotations

import json
import re

import pytest
from support.paths import REPO

README = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
PAGE = (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")

#: A measured figure: a number with a unit of time, memory, throughput or a retrieval metric.
FIGURE = re.compile(
    r"\b\d[\d,.]*\s?(?:ms|s wall|min \d+ s|MiB|GB|requests/s|inserts/s|tokens/s)\b"
    r"|\bnDCG@10 \d|\bRecall@5 \d"
)
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
MACHINE = re.compile(r"2-core|2 cores|2 vCPU|2 CPUs|2 shared cores|do(?:es)? not depend")
COMMAND = re.compile(r"`(?:python |make |agentic-search |[A-Z_]+=\S+ python )[^`]+`")


def _sections() -> dict[str, str]:
    parts = re.split(r"^## (.+)$", PAGE, flags=re.M)
    return {
        title: " ".join(body.split()) for title, body in zip(parts[1::2], parts[2::2], strict=True)
    }


def _json(path: str) -> dict:
    return json.loads((REPO / path).read_text(encoding="utf-8"))


def test_the_readme_quotes_no_measured_figure_and_says_where_they_are() -> None:
    assert not FIGURE.findall(README), FIGURE.findall(README)
    assert "docs/benchmarks.md" in README
    for vague in ("about 2 minutes", "about 15 s"):
        assert vague not in README and vague not in PAGE


@pytest.mark.parametrize("title", sorted(_sections()))
def test_each_benchmark_section_names_machine_date_and_command(title: str) -> None:
    text = _sections()[title]
    if not FIGURE.search(text) and not re.search(r"\d", text):
        pytest.skip("no figure in this section")
    assert MACHINE.search(text), f"{title}: no machine"
    assert DATE.search(text), f"{title}: no date"
    assert COMMAND.search(text) or "command was not recorded" in text, f"{title}: no command"


def test_the_make_test_figure_names_machine_load_and_date() -> None:
    text = _sections()["make test"]
    assert re.search(r"quiet 2-core \w+", text) and "load average" in text
    assert re.search(r"pytest took \d+ min \d+ s", text) and DATE.search(text)


def test_the_first_use_figure_names_machine_load_and_date() -> None:
    text = _sections()["First use"]
    assert "2-core" in text and "load average" in text and "CPU time" in text
    assert DATE.search(text)


def _quoted(section: str, *figures: str) -> None:
    text = _sections()[section]
    missing = [f for f in figures if f not in text]
    assert not missing, f"{section}: {missing} not quoted as the result file holds them"


def test_serve_under_load_quotes_its_result_files() -> None:
    two, one = (
        _json("benchmarks/load/edge-workers2.json"),
        _json("benchmarks/load/edge-workers0.json"),
    )
    cached = _json("benchmarks/load/load_cached.json")
    _quoted(
        "Serve under load",
        f"median {two['requests_per_s']:.1f}",
        f"p50 {two['latency_ms']['p50']:.0f} ms",
        f"p95 {two['latency_ms']['p95']:.0f} ms",
        f"{one['requests_per_s']:.1f} requests/s",
        f"{cached['requests_per_s']:.0f} requests/s",
    )
    assert two["errors"] == one["errors"] == cached["errors"] == 0
    during = _json("benchmarks/sync/ingest_while_serving.json")
    _quoted(
        "Serve under load",
        f"{during['during']['errors']} errors in {during['during']['requests']:,}",
        f"the {during['ingest_seconds']} s ingest",
        f"p95 {during['during']['p95_ms']:.0f} ms during vs {during['before']['p95_ms']:.0f} ms",
        during["measured_at"][:10],
    )


def test_interrupted_writes_quote_their_result_file() -> None:
    crash = _json("benchmarks/reliability/crash.json")
    summary = crash["summary"]
    _quoted(
        "Interrupted writes",
        f"{summary['consistent']} of {summary['runs']} runs",
        crash["date"][:10],
    )


def test_the_iam_findings_quote_their_result_file() -> None:
    iam = _json("benchmarks/fuzz/iam.json")
    _quoted("IAM findings", f"{iam['roles']} roles, {iam['statements']} statements")
    assert iam["wildcard_actions"] == []


def test_catalog_sync_quotes_its_result_file() -> None:
    sync = _json("benchmarks/sync/sync.json")
    put, saved = sync["throughput"], sync["savings"]
    _quoted(
        "Catalog sync",
        f"{put['median_handler_insert_records_per_s']} inserts/s",
        f"{put['median_handler_modify_one_aspect_records_per_s']} one-aspect modifies/s",
        f"{put['median_core_insert_records_per_s']} inserts/s",
        f"embeds {saved['embedded_texts']} texts instead of {saved['naive_texts']:,}",
        f"{saved['texts_saved_share']:.0%} of the embeddings saved",
        f"{saved['calls_saved_share']:.0%} of the embedder calls",
        sync["measured_at"][:10],
    )


def _cost_report() -> dict:
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(
        "benchmarks_cost", REPO / "benchmarks" / "cost" / "cost.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.report(
        module.load_template(REPO / "template.yaml"),
        _json("benchmarks/cost/measured.json"),
        _json("benchmarks/cost/prices.json"),
    )


def test_the_cost_table_is_what_the_cost_command_prints_on_both_pages() -> None:
    # benchmarks/cost/cost.py over the committed measurements, prices and template: a re-run
    # of measure.py, a price or a memory size changed, and the pages disagree until updated
    rep = _cost_report()
    deploy = " ".join((REPO / "docs/guides/deploy.md").read_text(encoding="utf-8").split())
    for text in (_sections()["What a search costs"], deploy):
        for kind, row in rep["per_1000_searches"].items():
            figures = f"${row['edge-s3']['total']:.4f} | ${row['qdrant']['total']:.4f}"
            assert f"per 1,000 {kind} searches | {figures}" in text, kind
        idle = rep["idle_month"]
        assert f"| ${idle['edge-s3']['total']:.2f} | ${idle['qdrant']['total']:.2f}" in text
        floor = rep["opensearch_serverless_kb_idle_month"]
        assert f"${floor['redundant']:.2f} (dev/test ${floor['dev_test']:.2f})" in text
        assert rep["prices_as_of"] in text


def test_edge_s3_cold_start_and_publish_quote_their_result_files() -> None:
    text = _sections()["edge-s3 snapshots: cold start and publish"]
    for path in ("benchmarks/edge_s3/results-284.json", "benchmarks/edge_s3/results-100k.json"):
        [row] = _json(path)["rows"]
        assert f"| {row['points']:,} | {row['archive_mib']} MiB | {row['publish_s']:.2f} s" in text
        assert f"{row['cold_open_s']:.2f} s" in text and row["opens"] >= 5, path
    sync = _json("benchmarks/cost/measured.json")["sync"]
    for kind in ("modify-1", "modify-1000", "insert-1"):
        batch = sync[kind]
        assert f"{batch['handler_s']:.2f} s | {batch['publish_s']:.2f} s" in text, kind
        assert batch["runs"] >= 5, kind
    assert f"load average {sync['load_before']:.1f} before" in text


def test_the_follow_up_figures_quote_their_result_file() -> None:
    summary = _json("benchmarks/follow_ups/results.json")["summary"]
    held, tuning = summary["heldout"], summary["tuning"]
    _quoted(
        "Follow-up conversations",
        *(f"{s[k]:.4f}" for s in (held, tuning) for k in ("ndcg@10_history", "ndcg@10_alone")),
        f"+{held['gain']:.4f}",
        f"+{tuning['gain']:.4f}",
        f"{held['standalone_misread']} of {held['standalone']}",
        f"{tuning['standalone_misread']} of {tuning['standalone']}",
    )


def test_the_npm_domain_quotes_its_result_files() -> None:
    section = "A second domain nobody tuned for: npm (12,000 packages)"
    first = _json("benchmarks/npm_queries/results.json")["systems"]
    named = _json("benchmarks/npm_queries/entities/results.json")["systems"]
    for systems in (first, named):
        _quoted(
            section,
            *(
                f"{systems[s]['by_split'][split]['ndcg@10']:.4f}"
                for s in ("bm25", "dense", "hybrid-rrf", "executor-1round", "executor")
                for split in ("tuning", "heldout")
            ),
            *(
                f"{systems['executor']['by_split']['heldout']['by_type'][kind]['ndcg@10']:.4f}"
                for kind in ("task", "plain", "alternative", "typo", "non-english")
            ),
        )
    cli, cli_named = (
        _json("benchmarks/npm_queries/speed_cli.json"),
        _json("benchmarks/npm_queries/speed_cli_entities.json"),
    )
    serve, serve_named = (
        _json("benchmarks/npm_queries/speed_serve.json"),
        _json("benchmarks/npm_queries/speed_serve_entities.json"),
    )
    _quoted(
        section,
        f"{cli['median_s']:.3f} s | {cli_named['median_s']:.3f} s",
        f"{serve['latency_ms']['p50']} ms / {serve['latency_ms']['p95']} ms",
        f"{serve_named['latency_ms']['p50']} ms / {serve_named['latency_ms']['p95']} ms",
        cli["measured_at"][:10],
    )
    assert 0 == cli["failures"] == cli_named["failures"] == serve["failures"]
    calibrated = _json("benchmarks/npm_queries/calibrated/results.json")["systems"]
    held = calibrated["executor"]["by_split"]["heldout"]
    _quoted(
        section,
        f"its nDCG@10 ({held['ndcg@10']:.4f})",
        f"{calibrated['hybrid-rrf']['by_split']['heldout']['ndcg@10']:.4f} on this index",
        f"{held['abstention']['clean']} of the {held['abstention']['unanswerable']} unanswerable",
        f"leaves none of the {held['abstention']['answerable']} answerable",
    )
    assert held["abstention"]["left_empty"] == 0


@pytest.mark.parametrize("model", ["embeddinggemma_int8", "minilm"])
def test_the_npm_embedder_figures_quote_their_result_files(model: str) -> None:
    """GIVEN the npm eval with one embedder WHEN the EmbeddingGemma section is read THEN every
    system's nDCG@10 on both splits and the executor's held-out kinds it names are quoted."""
    systems = _json(f"benchmarks/embedders/results/npm_{model}.json")["systems"]
    _quoted(
        "EmbeddingGemma-300M",
        *(
            str(s["by_split"][split]["ndcg@10"])
            for s in systems.values()
            for split in ("tuning", "heldout")
        ),
        *(
            str(systems["executor"]["by_split"]["heldout"]["by_type"][kind]["ndcg@10"])
            for kind in ("task", "alternative", "non-english")
        ),
    )
    assert all(s["errors"] == 0 for s in systems.values())


def test_the_aws_domain_quotes_its_result_file() -> None:
    """GIVEN the one eval of the AWS services domain WHEN its section is read THEN every
    system's nDCG@10 on both splits and the executor's held-out kinds are quoted as the file
    holds them."""
    systems = _json("benchmarks/aws_services/results.json")["systems"]
    _quoted(
        "A third domain of another shape: AWS services (445 service models)",
        *(
            f"{systems[s]['by_split'][split]['ndcg@10']:.4f}"
            for s in ("bm25", "dense", "hybrid-rrf", "executor-1round", "executor")
            for split in ("tuning", "heldout")
        ),
        *(
            f"{systems[s]['by_split']['heldout']['by_type'][kind]['ndcg@10']:.4f}"
            for s in ("executor", "hybrid-rrf")
            for kind in ("task", "alternative", "time", "constraint", "identity", "non-english")
        ),
    )


@pytest.mark.parametrize(
    "name",
    [
        "scifact_test_embeddinggemma_int8",
        "cacm_test_embeddinggemma_int8",
        "cacm_test_minilm",
        "hotpotqa_test_embeddinggemma_int8",
        "hotpotqa_test_minilm",
    ],
)
def test_the_embedder_figures_quote_their_result_files(name: str) -> None:
    """GIVEN the eval summary of a full test split (EmbeddingGemma int8, and MiniLM in CACM's
    sitting) WHEN the page is read THEN the section quotes each system's nDCG@10 as the file
    holds it."""
    result = _json(f"benchmarks/embedders/results/{name}.json")
    assert name.startswith(f"{result['dataset']}_{result['split']}_")
    _quoted("EmbeddingGemma-300M", *(str(s["ndcg@10"]) for s in result["systems"].values()))
    assert all(s["errors"] == 0 for s in result["systems"].values())


def test_the_sitting_quotes_its_result_files() -> None:
    """GIVEN the one sitting's result files WHEN its section is read THEN every system's
    nDCG@10 of every set, HotpotQA's both@10, the tools kinds against dense-record, the
    abstention and golden Recall@5 are quoted as the files hold them."""
    section = "After the alternative-to changes: every public figure in one sitting"
    systems = ("bm25", "dense", "hybrid-rrf", "executor-1round", "executor")
    for name in ("scifact", "cacm", "hotpotqa"):
        got = _json(f"benchmarks/sitting/{name}.json")["systems"]
        _quoted(section, *(f"{got[s]['ndcg@10']:.4f}" for s in systems))
        assert all(got[s]["errors"] == 0 for s in systems), name
    hotpot = _json("benchmarks/sitting/hotpotqa.json")["systems"]
    _quoted(section, *(f"({hotpot[s]['both@10']:.3f})" for s in systems))
    tools = _json("benchmarks/sitting/tools.json")["systems"]
    _quoted(
        section,
        *(
            f"{tools[s]['by_split'][split]['ndcg@10']:.4f}"
            for s in (*systems, "dense-record")
            for split in ("tuning", "heldout")
        ),
    )
    held = tools["executor"]["by_split"]["heldout"]
    record = tools["dense-record"]["by_split"]["heldout"]["by_type"]
    for kind, figures in held["by_type"].items():
        pair = f"{figures['ndcg@10']:.3f} / {record[kind]['ndcg@10']:.3f}"
        assert pair in " ".join(_sections()[section].split()), (kind, pair)
    abstention = held["abstention"]
    _quoted(
        section,
        f"{abstention['clean']} of {abstention['unanswerable']} unanswerable clean",
        f"{abstention['left_empty']} of {abstention['answerable']} answerable left empty",
        f"Recall@5: {_json('benchmarks/sitting/golden.json')['recall_at_5']}",
    )
