"""Output contract and CLI: every --json output validates against the output contract's JSON
Schemas (ARCHITECTURE.md, "Contracts"), stored verbatim in agentic_search/contracts; Candidate
is referenced from QueryExecutorOutput by $ref.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from agentic_search_cli.main import main

GOLDEN = Path(str(resources.files("agentic_search_cli") / "data" / "tools_golden.jsonl"))
CONTRACT_QUERIES = [
    "AI code completion tools that work locally",
    "free alternative to Cursor",
    "open source vector database I can self-host",
    "text to speech under $20",
    "something like Midjourney but not paid",
    'tools with "pull request review"',
    "zzzz qqqq",  # no signal at all: still a valid (maybe empty) output
]


@pytest.fixture(scope="module")
def output_validator() -> Draft202012Validator:
    base = resources.files("agentic_search") / "contracts"
    cand = json.loads((base / "candidate.schema.json").read_text())
    out = json.loads((base / "query-executor-output.schema.json").read_text())
    registry = Registry().with_resources(
        [(cand["$id"], Resource.from_contents(cand)), (out["$id"], Resource.from_contents(out))]
    )
    return Draft202012Validator(out, registry=registry)


def _queries() -> list[str]:
    queries = list(CONTRACT_QUERIES)
    if GOLDEN.is_file():
        queries += [json.loads(line)["query"] for line in GOLDEN.read_text().splitlines() if line]
    return queries


def test_every_output_validates_against_the_seed_contract(tools_engine, output_validator):
    # GIVEN the engine over the bundled catalog and many queries (golden set + odd ones)
    for query in _queries():
        # WHEN the response is serialized as the CLI's --json does
        wire = json.loads(json.dumps(tools_engine.search(query, limit=10).wire()))
        # THEN it validates against QueryExecutorOutput (and Candidate via $ref)
        errors = sorted(output_validator.iter_errors(wire), key=str)
        assert not errors, f"{query!r}: {errors[0].message} at {list(errors[0].path)}"
        for c in wire["candidates"]:
            assert 0.0 <= c["score"] <= 1.0
            assert c["provenance"]["collection"] == "tools"
            assert c["provenance"]["hits"], "every candidate names the sources that found it"


def test_contract_validator_rejects_a_broken_output(tools_engine, output_validator):
    # GIVEN a valid output WHEN a candidate's score leaves [0, 1] and its source the enum
    wire = json.loads(json.dumps(tools_engine.search("vector database", limit=3).wire()))
    wire["candidates"][0]["score"] = 1.5
    wire["candidates"][1]["source"] = "fusion"
    # THEN the validator catches both (the contract test can fail)
    messages = [e.message for e in output_validator.iter_errors(wire)]
    assert any("1.5" in m for m in messages)
    assert any("fusion" in m for m in messages)


def test_cli_first_use_ingests_and_prints_valid_json(tmp_path, output_validator):
    # GIVEN a fresh working folder (no index yet)
    env = {**os.environ, "AGENTIC_SEARCH_HOME": str(tmp_path / "home")}
    # WHEN the README's kind of search runs with --json
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentic_search_cli.main",
            "search",
            "free alternative to Cursor",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    # THEN it ingested the bundled catalog (progress on stderr) and printed valid JSON on stdout
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "indexed 284 tools" in proc.stderr
    # AND it names the folder that holds the index (Qdrant Edge's; issue 25 finding 9)
    assert f"into {tmp_path / 'home' / 'edge'}" in proc.stderr
    assert (tmp_path / "home" / "edge").is_dir() and not (tmp_path / "home" / "qdrant").exists()
    wire = json.loads(proc.stdout)
    assert not list(output_validator.iter_errors(wire))
    ids = [c["id"] for c in wire["candidates"]]
    assert ids and "cursor" not in ids
    sources = {h["source"] for c in wire["candidates"] for h in c["provenance"]["hits"]}
    aspects = {s.split(":")[1] for s in sources if s.startswith("dense:")}
    assert len(aspects) >= 2 and any(s.startswith("sparse:") for s in sources)
    # AND a second run reuses the index (no re-ingest)
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentic_search_cli.main",
            "search",
            "vector database",
            "--limit",
            "3",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert again.returncode == 0, again.stderr[-2000:]
    assert "indexed" not in again.stderr
    assert "3 results" in again.stdout


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["search", ""], "query is empty"),
        (["search", "   "], "query is empty"),
        (["search", "x" * 4001], "query is 4,001 characters; the maximum is 4,000"),
        (["search", "ok", "--limit", "0"], "between 1 and 100"),
        (["search", "ok", "--limit", "abc"], "not an integer"),
        (["search", "ok", "--bogus"], "unrecognized arguments: --bogus"),
        (["frobnicate"], "invalid choice"),
        (["search", "ok", "--domain", "nope"], "unknown domain 'nope'"),
        (["ingest", "/definitely/not/here.jsonl"], "no such file"),
    ],
)
def test_cli_usage_errors_exit_2_with_one_line(argv, reason, capsys, tmp_path, monkeypatch):
    # GIVEN a bad command line WHEN the CLI runs
    monkeypatch.setenv("AGENTIC_SEARCH_HOME", str(tmp_path))
    with pytest.raises(SystemExit) as exc:
        main(argv)
    # THEN it exits 2 with a single line naming the reason
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert reason in err
    assert len(err.splitlines()) == 1, err


def test_cli_help_teaches(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["search", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--explain" in out and "examples:" in out and "up to 4,000 characters" in out


def test_help_names_the_variable_that_moves_the_edge_store():
    # issue 25 finding 9: --help said QDRANT_PATH moves the store; with Qdrant Edge (the
    # default) only AGENTIC_SEARCH_HOME or QDRANT_EDGE_PATH do
    proc = subprocess.run(
        [sys.executable, "-m", "agentic_search_cli.main", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "in the per-user data folder (~/.local/share/agentic-search on Linux)" in text
    assert "AGENTIC_SEARCH_HOME or QDRANT_EDGE_PATH moves it anywhere" in text
    assert "QDRANT_PATH" not in text.replace("QDRANT_EDGE_PATH", "")
