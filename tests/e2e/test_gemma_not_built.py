"""`--embedder embeddinggemma` before `make embedder` has built it: the CLI stops with one line
on stderr naming the command that builds it (exit 1), on search and on ingest alike."""

from __future__ import annotations

import pytest

from tests.support.cli import run_cli


@pytest.mark.parametrize(
    "argv",
    [
        ("search", "open source vector database", "--embedder", "embeddinggemma"),
        ("ingest", "--rebuild", "--embedder", "embeddinggemma"),
    ],
)
def test_missing_artefact_is_one_line_naming_make_embedder(tmp_path, argv) -> None:
    done = run_cli(tmp_path / "home", *argv)
    assert done.returncode == 1, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("agentic-search: error: EmbeddingGemma is not built at ")
    assert "make embedder MODEL=embeddinggemma" in lines[0]
