"""serve's writer applies a handed-over ``ingest --prune`` as the CLI's own ingest does (issue
25, found by the random operations test's serve step): ``--force`` is honoured, and a refused
prune is the same one line, nothing written or journaled."""

from __future__ import annotations

import json

import pytest
from support.fakes import MemoEmbedder
from support.lambdas import runtime_over

from agentic_search.config import Settings
from agentic_search.service import SearchService
from agentic_search.sync.prune import PruneRefused
from agentic_search_cli.serve_writer import ServeWriter


def test_a_handed_over_prune_is_refused_in_one_line_and_force_applies_it(
    tmp_path, embedder, catalog_records
):
    # GIVEN serve's writer over an index of 4 records
    service = SearchService.create(
        Settings(agentic_search_home=tmp_path / "home"), "tools", embedder=MemoEmbedder(embedder)
    )
    try:
        service.ingest_records([dict(r) for r in catalog_records[:4]])
        writer = ServeWriter(runtime_over(service), token="t")
        one = tmp_path / "one.jsonl"
        one.write_text(json.dumps(catalog_records[0]) + "\n")
        others = sorted(r["id"] for r in catalog_records[1:4])
        body = {"path": str(one), "prune": True, "optimize": False}
        # WHEN `ingest one.jsonl --prune` is handed over: 3 of 4 records would go
        lines: list[dict] = []
        writer.handle("/_local/ingest", body, lines.append)
        # THEN refused with the CLI's own one line (no exception name), nothing journaled
        with pytest.raises(PruneRefused) as refused:  # what the in-process ingest says
            service.ingest_file(one, prune=True)
        assert lines[-1] == {"error": str(refused.value)}
        assert service.pending_write() is None
        assert service.deps.store.count(service.schema) == 4
        # WHEN the same with --force THEN the prune is applied and reported
        lines.clear()
        writer.handle("/_local/ingest", {**body, "force": True}, lines.append)
        report = lines[-1]["report"]
        assert report["notInFile"] == others and report["pruned"] == 3, report
        assert service.deps.store.count(service.schema) == 1
    finally:
        service.close()
