"""``agentic-search ingest`` with Qdrant Edge builds the HNSW indexes after a bulk load in a
worker process, with progress, unless told not to (issue 18)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _ingest(home: Path, catalog: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentic_search_cli.main", "ingest", str(catalog), *flags],
        env={**os.environ, "AGENTIC_SEARCH_HOME": str(home), "VECTOR_STORE": "edge"},
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_ingest_optimizes_a_bulk_load_once_with_progress(tmp_path: Path, catalog_records) -> None:
    """GIVEN 30 records and a threshold of 20 points WHEN they are ingested with --no-optimize
    THEN nothing is optimized; WHEN ingested again without it THEN stderr says "optimizing
    <collection> ... done in X s" and the search answers; AND a third, unchanged ingest does
    not optimize again."""
    catalog = tmp_path / "catalog.jsonl"
    catalog.write_text("".join(json.dumps(r) + "\n" for r in catalog_records[:30]))
    first = _ingest(tmp_path, catalog, "--optimize-min-points", "20", "--no-optimize")
    assert first.returncode == 0, first.stderr
    assert "optimizing" not in first.stderr
    second = _ingest(tmp_path, catalog, "--optimize-min-points", "20")
    assert second.returncode == 0, second.stderr
    assert "optimizing tools (building HNSW indexes in a worker process) ..." in second.stderr
    assert "optimizing tools ... done in" in second.stderr
    third = _ingest(tmp_path, catalog, "--optimize-min-points", "20")
    assert third.returncode == 0 and "optimizing" not in third.stderr, third.stderr
    found = subprocess.run(
        [sys.executable, "-m", "agentic_search_cli.main", "search", "code editor", "--json"],
        env={**os.environ, "AGENTIC_SEARCH_HOME": str(tmp_path), "VECTOR_STORE": "edge"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["candidates"]
    assert list(tmp_path.glob("edge/.*optimizing*")) == []


def test_a_bad_threshold_is_a_usage_error(tmp_path: Path) -> None:
    """--optimize-min-points 0 exits 2 with a one-line reason."""
    catalog = tmp_path / "c.jsonl"
    catalog.write_text("")
    out = _ingest(tmp_path, catalog, "--optimize-min-points", "0")
    assert out.returncode == 2
    assert "--optimize-min-points must be at least 1" in out.stderr
