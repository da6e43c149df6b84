"""The index mirrors the catalog file (finding 6), ingest writes the sync status (finding 12),
and an interrupted ingest is completed by the next process (findings 1, 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_search.config import Settings
from agentic_search.service import SearchService
from agentic_search.sync.audit import audit


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture()
def small(catalog_records) -> list[dict]:
    return [dict(r) for r in catalog_records[:24]]


def _service(home: Path, embedder) -> SearchService:
    return SearchService.create(Settings(agentic_search_home=home), "tools", embedder=embedder)


def test_records_gone_from_the_file_are_reported_then_pruned(tmp_path, embedder, small):
    service = _service(tmp_path / "home", embedder)
    try:
        # GIVEN a file ingested, then the same file without three of its records
        service.ingest_file(_write(tmp_path / "a.jsonl", small))
        shorter = _write(tmp_path / "b.jsonl", small[3:])
        gone = sorted(r["id"] for r in small[:3])
        # WHEN it is ingested again without --prune
        report = service.ingest_file(shorter)
        # THEN the three are reported as not in the file, and still there
        assert report.stale == gone and report.pruned == 0
        assert report.wire()["notInFile"] == gone
        assert audit(service.deps, small).consistent
        # WHEN it is ingested with prune
        report = service.ingest_file(shorter, prune=True)
        # THEN they are deleted through the writer: store, keyword index, status all follow
        assert report.pruned == 3
        result = audit(service.deps, small[3:], status=True)
        assert result.consistent, result.wire()
        entries = service.deps.sync_status.get("tools", gone)
        assert all(entries[g].deleted for g in gone)
        # AND the status counts the index's records as synced, the tombstones apart (issue 25
        # item 14: "24 synced" while the index held 21)
        held = service.deps.store.count(service.schema)
        assert held == len(small) - 3
        counts = service.deps.sync_status.counts("tools")
        assert counts == {"synced": held, "pending": 0, "failed": 0, "deleted": 3}
        hits = service.search(small[0]["name"], limit=10).output.candidates
        assert small[0]["id"] not in {h.id for h in hits}
    finally:
        service.close()


def test_ingest_records_each_record_in_the_sync_status(tmp_path, embedder, small):
    service = _service(tmp_path / "home", embedder)
    try:
        service.ingest_file(_write(tmp_path / "a.jsonl", small))
        counts = service.deps.sync_status.counts("tools")
    finally:
        service.close()
    assert counts.get("synced") == len(small)


def test_an_interrupted_ingest_is_completed_by_the_next_process(tmp_path, embedder, small):
    # GIVEN an ingest interrupted (Ctrl-C) after its first batch of 8
    home, path = tmp_path / "home", _write(tmp_path / "a.jsonl", small)
    service = _service(home, embedder)

    def interrupt(n: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        service.ingest_file(path, batch_size=8, on_progress=interrupt)
    partial = audit(service.deps, small)
    service.close()
    assert partial.pending_write and len(partial.missing) == len(small) - 8
    # WHEN the next process opens the folder
    again = _service(home, embedder)
    try:
        assert again.pending_write() is not None
        message = again.recover()
        # THEN it completes the ingest, says so in one line, and the index equals the file
        assert message is not None and "\n" not in message
        assert message.startswith(f"completed an interrupted ingest of {path}")
        assert "16 inserted" in message
        result = audit(again.deps, small)
        assert result.consistent, result.wire()
        assert again.recover() is None  # nothing left to do
    finally:
        again.close()


def test_an_interrupted_first_use_index_is_completed_not_used(tmp_path, embedder, catalog_records):
    # GIVEN the bundled catalog's first-use ingest interrupted after 64 records
    home = tmp_path / "home"
    service = _service(home, embedder)
    seen = [0]

    def interrupt(n: int) -> None:
        seen[0] += n
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        service.ensure_bundled_catalog(on_progress=interrupt)
    assert not service.is_empty()  # a partial store: "not empty" is not "complete"
    service.close()
    # WHEN the next process opens it THEN the whole catalog is indexed before any search
    again = _service(home, embedder)
    try:
        message = again.recover()
        assert message is not None and "the bundled catalog" in message
        result = audit(again.deps, catalog_records)
        assert result.consistent, result.wire()
    finally:
        again.close()
