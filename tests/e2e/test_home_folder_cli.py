"""From another folder, a search finds the records ingested before (issue 47, item 3): with
neither ``AGENTIC_SEARCH_HOME`` nor a project-local ``.agentic-search``, every command uses the
one per-user data folder (here under a temp ``XDG_DATA_HOME``), says so once, and never builds
a second index of the bundled catalog in the current folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agentic_search.sync.files import bundled_catalog_path

RECORDS = [json.loads(x) for x in bundled_catalog_path().read_text().splitlines()[:3]]


def _cli(cwd: Path, xdg: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k.upper() != "AGENTIC_SEARCH_HOME"}
    return subprocess.run(
        [sys.executable, "-m", "agentic_search_cli.main", *argv],
        cwd=cwd,
        env={**env, "XDG_DATA_HOME": str(xdg), "OMP_WAIT_POLICY": "PASSIVE"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_a_search_from_another_folder_finds_what_was_ingested(tmp_path):
    xdg, first, second = tmp_path / "xdg", tmp_path / "project-a", tmp_path / "b" / "c"
    first.mkdir()
    second.mkdir(parents=True)
    catalog = first / "mine.jsonl"
    catalog.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    # GIVEN a catalog ingested from one folder
    done = _cli(first, xdg, "ingest", str(catalog), "--no-optimize")
    assert done.returncode == 0, done.stderr
    home = xdg / "agentic-search"
    said = [line for line in done.stderr.splitlines() if str(home) in line]
    assert len(said) == 1 and "per-user data folder" in said[0], done.stderr
    # WHEN a search runs from another folder
    found = _cli(second, xdg, "search", RECORDS[1]["name"], "--json", "--limit", "3")
    assert found.returncode == 0, found.stderr
    # THEN it answers from the same index: the record is found, the bundled catalog is not
    # indexed anew, nothing is made in either current folder, and nothing more is said
    ids = [c["id"] for c in json.loads(found.stdout)["candidates"]]
    assert RECORDS[1]["id"] in ids
    assert "bundled catalog" not in found.stderr and str(home) not in found.stderr
    assert not (first / ".agentic-search").exists() and not (second / ".agentic-search").exists()
    assert (home / "edge").is_dir()
