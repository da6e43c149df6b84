"""What a user sees of entity-aware search: the comparison table, the links and bridges in
--explain, "no good match", and eval's both@k by question type with TREC run files."""

from __future__ import annotations

import json

from rich.console import Console
from support.multihop import make_multihop_dataset

from agentic_search_cli.main import main
from agentic_search_cli.render import print_search


def rendered(resp, explain: bool = True) -> str:
    console = Console(record=True, width=140)
    print_search(console, resp, explain)
    return console.export_text()


def test_a_comparison_prints_the_tools_side_by_side(tools_engine):
    out = rendered(tools_engine.search("Cursor vs Windsurf", limit=5))
    # the table: one column per tool, the compared fields as rows
    head = next(line for line in out.splitlines() if "Cursor" in line and "Windsurf" in line)
    assert head.index("Cursor") < head.index("Windsurf")
    price = next(
        line for line in out.splitlines() if line.strip("│ ").startswith("price_monthly_usd")
    )
    assert "20" in price and "15" in price
    # --explain: the links, the pins and why the first result is there
    assert "linked: Cursor (exact 1.00)" in out
    assert "pinned: cursor, windsurf" in out
    assert "named in the query (Cursor)" in out


def test_a_typo_is_explained(tools_engine):
    out = rendered(tools_engine.search("copilt", limit=3))
    assert "GitHub Copilot (fuzzy 0.86) <- 'copilt'" in out
    out = rendered(tools_engine.search("vectr databse", limit=3))
    assert "read as: 'vectr databse' -> 'vector database'" in out


def test_no_good_match_is_said_and_nothing_is_padded(tools_engine):
    out = rendered(tools_engine.search("restaurant table reservation system", limit=10), False)
    assert "No good match for 'restaurant table reservation system'" in out
    assert "10 weak result(s) withheld" in out
    assert "results for" not in out


def test_eval_reports_both_at_k_by_question_type(tmp_path, monkeypatch, capsys):
    ds = make_multihop_dataset(tmp_path)
    monkeypatch.setenv("AGENTIC_SEARCH_HOME", str(tmp_path / "home"))
    out = tmp_path / "out"
    code = main(
        ["eval", "--dataset", str(ds), "--json", "--out", str(out), "--systems", "bm25,executor"]
    )
    assert code == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["types"] == {"bridge": 1, "comparison": 1}
    ex = obj["systems"]["executor"]
    assert {"both@2", "both@5", "both@10", "recall@10"} <= set(ex)
    assert set(ex["by_type"]) == {"bridge", "comparison"}
    # the comparison names both paragraphs: pinned, both in the top 2
    assert ex["by_type"]["comparison"]["both@2"] == 1.0
    run = (out / "runs" / "executor.run").read_text().splitlines()
    assert run[0].split()[:2] == ["q1", "Q0"] and run[0].split()[3] == "1"
    # the systems x metrics figure has the per-type panel beside the metrics (11 in at 120 dpi)
    png = (out / "metrics.png").read_bytes()
    assert png.startswith(b"\x89PNG") and int.from_bytes(png[16:20], "big") == 1320
