"""A refused or rejected write never changes the index (issue 25, findings 1-3).

1. An ingest refused because another process writes the index (``serve`` holds the shard
   lock) journals nothing, so no later command applies it.
2. ``--prune`` refuses when no line of the file was accepted, or (without ``--force``) when it
   would delete more than half of the index; first-use seeding of the bundled catalog happens
   only in a folder never written, never in one emptied by deletes.
3. ``--prune`` keeps a record whose line was rejected (it is in the file) and says so.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from agentic_search.adapters.edge.store import EdgeStore
from agentic_search.config import Settings
from agentic_search.logic.schema import load_schema
from agentic_search.ports import VectorStoreError
from agentic_search.service import SearchService
from agentic_search.sync.apply import apply_changes
from agentic_search.sync.audit import audit
from agentic_search.sync.changes import CatalogChange, ChangeOp
from agentic_search.sync.prune import PruneRefused
from agentic_search_cli import main as cli


def _write(path: Path, records: list[dict], extra: str = "") -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + extra)
    return path


def _service(home: Path, embedder) -> SearchService:
    return SearchService.create(Settings(agentic_search_home=home), "tools", embedder=embedder)


@pytest.fixture()
def small(catalog_records) -> list[dict]:
    return [dict(r) for r in catalog_records[:10]]


@pytest.fixture()
def home(tmp_path, embedder, small) -> Path:
    """A folder holding the first 6 records of ``small``, closed (no lock held)."""
    home = tmp_path / "home"
    service = _service(home, embedder)
    try:
        service.ingest_file(_write(tmp_path / "base.jsonl", small[:6]))
    finally:
        service.close()
    return home


def _journal_files(home: Path) -> list[Path]:
    return sorted((home / "journal").glob("*.json*")) if (home / "journal").is_dir() else []


def test_an_ingest_refused_by_another_writer_journals_nothing(tmp_path, embedder, small, home):
    # GIVEN another process writing the index: a store holding the shard lock as serve does
    # (two locks conflict inside one process too: each holds its own open file description)
    settings = Settings(agentic_search_home=home)
    writer = EdgeStore(settings)
    writer.acquire_writer(load_schema("tools"))
    mine = _write(tmp_path / "mine.jsonl", small[6:])
    service = _service(home, embedder)
    try:
        # WHEN an ingest of new records runs
        with pytest.raises(VectorStoreError, match="open for writing by another process"):
            service.ingest_file(mine)
        # THEN it is refused and leaves no intent behind
        assert service.pending_write() is None
        assert _journal_files(home) == []
    finally:
        service.close()
        writer.close()
    # WHEN the next process opens the folder THEN there is nothing to complete: the refused
    # records never land in the index
    again = _service(home, embedder)
    try:
        assert again.recover() is None
        result = audit(again.deps, small[:6])
        assert result.consistent, result.wire()
    finally:
        again.close()


def test_the_ingest_command_refused_by_another_writer_exits_1_leaving_nothing(
    tmp_path, embedder, small, home, monkeypatch, capsys
):
    # GIVEN serve's lock held on the folder
    monkeypatch.setenv("AGENTIC_SEARCH_HOME", str(home))
    settings = Settings(agentic_search_home=home)
    writer = EdgeStore(settings)
    writer.acquire_writer(load_schema("tools"))
    try:
        # WHEN `agentic-search ingest mine.jsonl` runs
        code = cli.main(["ingest", str(_write(tmp_path / "mine.jsonl", small[6:]))])
    finally:
        writer.close()
    # THEN it exits 1 with one line naming the other writer, and no journal is left
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert [line for line in err if "error" in line] == [err[-1]]
    assert "open for writing by another process" in err[-1]
    assert _journal_files(home) == []


def test_prune_of_a_file_with_no_accepted_line_is_refused(tmp_path, embedder, small, home):
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text('{"id": \n[1, 2]\n{"name": "no id"}\n')
    service = _service(home, embedder)
    try:
        # WHEN a file whose every line is rejected is ingested with prune (with force too)
        for force in (False, True):
            with pytest.raises(PruneRefused, match="no line of the file was accepted"):
                service.ingest_file(garbage, prune=True, force=force)
        # THEN nothing was written or journaled
        assert service.pending_write() is None
        result = audit(service.deps, small[:6])
        assert result.consistent, result.wire()
    finally:
        service.close()


def test_the_prune_command_refusal_is_one_line_exit_1(tmp_path, home, small, monkeypatch, capsys):
    monkeypatch.setenv("AGENTIC_SEARCH_HOME", str(home))
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("not json\n" * 3)
    code = cli.main(["ingest", str(garbage), "--prune"])
    captured = capsys.readouterr()
    assert code == 1
    errors = [line for line in captured.err.splitlines() if "error" in line]
    assert len(errors) == 1 and "--prune refused" in errors[0], captured.err
    assert _journal_files(home) == []


def test_prune_of_more_than_half_the_index_needs_force(tmp_path, embedder, small, home):
    # GIVEN 6 records indexed and a file holding 2 of them (4 of 6 would go)
    two = _write(tmp_path / "two.jsonl", small[:2])
    service = _service(home, embedder)
    try:
        with pytest.raises(PruneRefused, match="delete 4 of the 6 indexed records"):
            service.ingest_file(two, prune=True)
        result = audit(service.deps, small[:6])
        assert result.consistent, result.wire()
        # WHEN forced THEN the index mirrors the file
        report = service.ingest_file(two, prune=True, force=True)
        assert report.pruned == 4
        result = audit(service.deps, small[:2])
        assert result.consistent, result.wire()
        # and half of the index (not more) goes without force
        four = _write(tmp_path / "four.jsonl", small[:4])
        service.ingest_file(four)
        assert service.ingest_file(_write(tmp_path / "b.jsonl", small[:2]), prune=True).pruned == 2
    finally:
        service.close()


def test_a_folder_emptied_by_deletes_is_not_seeded_with_the_bundled_catalog(
    tmp_path, embedder, small, home
):
    # GIVEN a tools folder whose every record was deleted through the writer
    service = _service(home, embedder)
    try:
        removes = [
            CatalogChange(op=ChangeOp.REMOVE, domain="tools", record_id=r["id"]) for r in small[:6]
        ]
        apply_changes(service.deps, removes, service.deps.sync_status)
        assert service.is_empty()
        # WHEN first-use seeding is asked for THEN it does nothing: the folder was written
        assert service.ensure_bundled_catalog() is None
        assert service.is_empty()
    finally:
        service.close()
    # while a folder never written is first use
    fresh = _service(tmp_path / "fresh", embedder)
    try:
        assert fresh.never_written()
    finally:
        fresh.close()


def test_search_in_an_emptied_tools_folder_says_empty_and_seeds_nothing(
    embedder, small, home, monkeypatch, capsys
):
    service = _service(home, embedder)
    try:
        removes = [
            CatalogChange(op=ChangeOp.REMOVE, domain="tools", record_id=r["id"]) for r in small[:6]
        ]
        apply_changes(service.deps, removes, service.deps.sync_status)
    finally:
        service.close()
    monkeypatch.setenv("AGENTIC_SEARCH_HOME", str(home))
    with pytest.raises(SystemExit) as exit_:
        cli.main(["search", "code editor"])
    assert exit_.value.code == 2
    assert "is empty" in capsys.readouterr().err
    again = _service(home, embedder)
    try:
        assert again.is_empty()
    finally:
        again.close()


def test_prune_keeps_a_record_whose_line_was_rejected(tmp_path, embedder, small, home):
    # GIVEN 6 records indexed, and a file where record 0's line has a NaN price and record
    # 5's line is cut short (its id still readable)
    bad_price = {**small[0], "price_monthly_usd": float("nan")}
    cut = json.dumps(small[5])[:60]
    path = _write(tmp_path / "mixed.jsonl", [bad_price, *small[1:5]], extra=cut + "\n")
    service = _service(home, embedder)
    try:
        # WHEN it is ingested with prune
        report = service.ingest_file(path, prune=True)
        # THEN both rejected records keep their indexed version; nothing is pruned
        assert {e.record_id for e in report.errors} == {small[0]["id"], small[5]["id"]}
        assert report.kept == sorted([small[0]["id"], small[5]["id"]])
        assert report.pruned == 0 and report.stale == []
        assert report.wire()["keptRejected"] == report.kept
        result = audit(service.deps, small[:6])
        assert result.consistent, result.wire()
    finally:
        service.close()
    # AND the report says so
    from agentic_search_cli.render import print_ingest

    out = io.StringIO()
    print_ingest(Console(file=out, width=200), report)
    assert f"kept 2 record(s) whose line was rejected: {', '.join(report.kept)}" in out.getvalue()


def test_a_sync_refused_by_another_writer_journals_and_records_nothing(
    tmp_path, small, home, monkeypatch, capsys, embedder
):
    # GIVEN serve's lock held, and a batch of catalog changes (a new record, a removal)
    monkeypatch.setenv("AGENTIC_SEARCH_HOME", str(home))
    events = tmp_path / "changes.jsonl"
    details = [
        {"operation": "insert", "recordId": small[7]["id"], "version": 1, "record": small[7]},
        {"operation": "remove", "recordId": small[0]["id"], "version": 2},
    ]
    events.write_text(
        "".join(json.dumps({"detail-type": "catalog.changed", "detail": d}) + "\n" for d in details)
    )
    writer = EdgeStore(Settings(agentic_search_home=home))
    writer.acquire_writer(load_schema("tools"))
    try:
        # WHEN `agentic-search sync changes.jsonl` runs
        code = cli.main(["sync", str(events)])
    finally:
        writer.close()
    # THEN it is refused in one line; no intent, no pending change to re-apply later
    err = capsys.readouterr().err
    assert code == 1 and "open for writing by another process" in err, err
    assert _journal_files(home) == []
    service = _service(home, embedder)
    try:
        entries = service.deps.sync_status.get("tools", [small[7]["id"], small[0]["id"]])
        assert small[7]["id"] not in entries
        assert entries[small[0]["id"]].status == "synced"
        result = audit(service.deps, small[:6])
        assert result.consistent, result.wire()
    finally:
        service.close()


def test_an_interrupted_prune_whose_file_lost_every_line_is_completed_without_pruning(
    tmp_path, embedder, small, home
):
    # GIVEN an ingest --prune cut short (its intent journaled), and its file since broken
    path = tmp_path / "catalog.jsonl"
    path.write_text("not json\n" * 4)
    service = _service(home, embedder)
    try:
        intent = {"op": "ingest", "source": str(path), "idKey": None, "prune": True}
        service.deps.journal.begin("tools", {**intent, "startedAt": 0})
        # WHEN the next command completes it
        message = service.recover()
        # THEN nothing is pruned, the line says why, and the write is done
        assert message is not None and "\n" not in message
        assert "not pruned: no line of the file was accepted" in message
        result = audit(service.deps, small[:6])
        assert result.consistent, result.wire()
    finally:
        service.close()
