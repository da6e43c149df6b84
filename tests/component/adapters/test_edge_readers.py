"""Readers of a Qdrant Edge folder (``QDRANT_EDGE_READER``, what ``agentic-search search``
opens), against the real engine (docs/concurrency.md).

Readers share and only writers exclude: a reader opens a private copy taken under the read
gate (shared), so readers never hold each other up nor take the writer lock; a reader waits
for a writer at work and then copies its committed state; a write from a reader goes to the
shard itself, under the writer lock (waited for, never failed on); a journaled write with no
writer at work is refused as interrupted. Every wait is observed through the ``waiting`` hook
(an event), never a clock.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from agentic_search.adapters.edge.lock import ShardLock
from agentic_search.adapters.edge.store import EdgeStore
from agentic_search.config import Settings
from agentic_search.logic.schema import DomainSchema
from agentic_search.ports import InterruptedWrite, VectorStoreError
from agentic_search.wire import PointWrite


def _points(schema: DomainSchema, records: list[dict]) -> list[PointWrite]:
    return [
        PointWrite(r["id"], {a: [1.0, 0.0] for a in schema.aspect_names}, dict(r)) for r in records
    ]


def _store(home: Path, reader: bool, **kw) -> EdgeStore:
    settings = Settings(agentic_search_home=home, qdrant_edge_reader=reader)
    return EdgeStore(settings, root=home / "edge", **kw)


@pytest.fixture()
def home(tmp_path: Path, tools_schema: DomainSchema, catalog_records) -> Path:
    """A folder whose shard holds 20 records (written and closed)."""
    writer = _store(tmp_path, reader=False)
    writer.ensure_collection(tools_schema, dim=2)
    writer.upsert(tools_schema, _points(tools_schema, catalog_records[:20]))
    writer.close()
    return tmp_path


class _Waits:
    """A ``waiting`` hook: the pids it was told, and an event set on the first."""

    def __init__(self) -> None:
        self.pids: list[str] = []
        self.started = threading.Event()

    def __call__(self, pid: str) -> None:
        self.pids.append(pid)
        self.started.set()


def _in_thread(job) -> tuple[threading.Thread, dict]:
    out: dict = {}

    def run() -> None:
        try:
            out["value"] = job()
        except BaseException as exc:
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


def test_readers_share_and_never_take_the_writer_lock(home: Path, tools_schema) -> None:
    """GIVEN two reader stores with the shard open THEN both count it, the live directory
    holds no open engine of theirs (a writer takes the lock at once), and closing them
    deletes their copies."""
    a, b = _store(home, reader=True), _store(home, reader=True)
    try:
        assert a.count(tools_schema) == b.count(tools_schema) == 20
        copies = [a.shard_dir(tools_schema), b.shard_dir(tools_schema)]
        assert len({*copies, home / "edge" / "tools"}) == 3  # each its own copy
        lock = ShardLock(home / "edge" / "tools")
        lock.acquire()  # no reader holds it
        lock.release()
    finally:
        a.close()
        b.close()
    assert not any(c.exists() for c in copies)


def test_a_reader_waits_for_a_writer_then_copies_its_committed_state(
    home: Path, tools_schema, catalog_records
) -> None:
    """GIVEN a writer that wrote 5 more records and is still open WHEN a reader opens the
    shard THEN it waits (told the writer's pid) until the writer closes, then counts 25."""
    writer = _store(home, reader=False)
    writer.upsert(tools_schema, _points(tools_schema, catalog_records[20:25]))
    reader = _store(home, reader=True)
    waits = _Waits()
    reader.waiting = waits
    thread, out = _in_thread(lambda: reader.count(tools_schema))
    try:
        assert waits.started.wait(timeout=300), out
        assert "value" not in out  # still waiting while the writer is open
    finally:
        writer.close()
    thread.join(timeout=300)
    try:
        assert out.get("value") == 25, out
        assert waits.pids[0] == str(os.getpid())
    finally:
        reader.close()


def test_a_write_of_a_reader_goes_to_the_shard_under_the_writer_lock(
    home: Path, tools_schema, catalog_records
) -> None:
    """GIVEN a reader with its copy open and another writer holding the lock WHEN the reader
    writes THEN it waits for that writer (never fails), then writes the shard itself: a
    writer opened afterwards counts the record."""
    reader = _store(home, reader=True)
    assert reader.count(tools_schema) == 20
    other = ShardLock(home / "edge" / "tools")
    other.acquire()
    waits = _Waits()
    reader.waiting = waits
    thread, out = _in_thread(
        lambda: reader.upsert(tools_schema, _points(tools_schema, catalog_records[20:21]))
    )
    try:
        assert waits.started.wait(timeout=300), out
    finally:
        other.release()
    thread.join(timeout=300)
    assert "error" not in out, out
    reader.close()
    writer = _store(home, reader=False)
    try:
        assert writer.count(tools_schema) == 21
    finally:
        writer.close()


def test_a_writer_still_fails_at_once_on_another_writer(home: Path, tools_schema) -> None:
    """GIVEN a writer holding the shard WHEN a second writer opens it THEN one line naming
    the holder's pid, at once (writers exclude)."""
    first = _store(home, reader=False)
    first.count(tools_schema)
    second = _store(home, reader=False)
    try:
        with pytest.raises(VectorStoreError, match=r"open for writing by another process"):
            second.count(tools_schema)
    finally:
        second.close()
        first.close()


def test_a_journaled_write_with_no_writer_at_work_is_not_read(home: Path, tools_schema) -> None:
    """GIVEN a write journaled and no writer holding the shard (it was killed) WHEN a reader
    opens it THEN InterruptedWrite: the half-written state is not copied."""
    reader = _store(home, reader=True, pending=lambda schema: True)
    try:
        with pytest.raises(InterruptedWrite, match="interrupted"):
            reader.count(tools_schema)
        assert not (home / "run").exists() or not any((home / "run").iterdir())
    finally:
        reader.close()
