"""A long-running reader's copy of the index (``agentic-search mcp``, issue 45): when it reads
as stale, the result cache's catalog version it answers by, and serve's copy route, which a
reader that has a copy asks without waiting for a write at work."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from agentic_search.adapters.caches import SqliteCache
from agentic_search.adapters.journal import FileJournal
from agentic_search.config import Settings
from agentic_search_cli.reader_copy import PinnedCatalog, ReaderCopy
from agentic_search_cli.serve_writer import ServeWriter


def _reader(home: Path, **settings: Any) -> ReaderCopy:
    base = Settings(agentic_search_home=home, vector_store="edge", **settings)
    return ReaderCopy(base, "mcp", ["tools", "documents"])


def test_a_journaled_write_makes_the_copy_stale_and_a_new_copy_is_not(tmp_path: Path) -> None:
    reader = _reader(tmp_path, cache_backend="none")
    copy = reader.take()
    assert copy is not None and copy.settings.qdrant_edge_reader is True
    assert reader.changed(copy) is False
    journal = FileJournal(tmp_path / "journal")  # what ingest and sync write, from any process
    journal.begin("tools", {"op": "ingest"})
    assert reader.changed(copy) is True
    journal.finish("tools")
    assert reader.changed(copy) is True
    fresh = reader.take()
    assert fresh is not None and reader.changed(fresh) is False


def test_a_catalog_version_bump_makes_the_copy_stale(tmp_path: Path) -> None:
    reader = _reader(tmp_path, cache_backend="sqlite")
    copy = reader.take()
    assert copy is not None and copy.stamp.version("documents") == 0
    SqliteCache(tmp_path / "cache.sqlite").bump_catalog_version("documents")  # another process
    assert reader.changed(copy) is True
    assert reader.stamp().version("documents") == 1
    reader.close()


def test_a_qdrant_server_is_searched_as_it_is_and_never_reads_as_stale(tmp_path: Path) -> None:
    reader = _reader(tmp_path, cache_backend="none", qdrant_url="http://127.0.0.1:6333")
    copy = reader.take()
    assert copy is not None and copy.settings is reader.base and copy.folder is None
    FileJournal(tmp_path / "journal").begin("tools", {"op": "ingest"})
    assert reader.changed(copy) is False


def test_the_pinned_catalog_answers_by_the_version_of_the_copy(tmp_path: Path) -> None:
    inner = SqliteCache(tmp_path / "cache.sqlite")
    inner.bump_catalog_version("tools")
    pinned = PinnedCatalog(inner, {"tools": 1, "documents": None})
    assert inner.bump_catalog_version("tools") == 2  # a write after the copy was taken
    assert pinned.catalog_version("tools") == 1
    assert pinned.catalog_version("documents") == 0  # not read with the copy: the live one
    assert pinned.bump_catalog_version("tools") == 3 and inner.catalog_version("tools") == 3
    pinned.put("k", {"a": 1}, 60)
    assert inner.get("k") == {"a": 1} and pinned.name == inner.name
    inner.close()


class _Snapshots:
    """Serve's Edge maintenance, reduced to the snapshot: it makes the copy's folder."""

    def snapshot(self, dest: Path) -> list[str]:
        dest.mkdir(parents=True)
        return ["tools"]


def test_serve_answers_busy_at_once_while_it_writes_when_asked_not_to_wait(
    tmp_path: Path,
) -> None:
    rt = SimpleNamespace(settings=Settings(agentic_search_home=tmp_path))
    writer = ServeWriter(rt, "token", maintenance=_Snapshots())
    (tmp_path / "run" / "mcp-1").mkdir(parents=True)
    dest = tmp_path / "run" / "mcp-1" / "edge"
    said: list[dict] = []
    with writer._write:  # a write at work
        writer.copy({"dest": str(dest), "wait": False}, said.append)
    assert said == [{"busy": "serve is writing the index"}] and not dest.exists()
    said.clear()
    held = threading.Event()
    release = threading.Event()

    def write() -> None:
        with writer._write:
            held.set()
            release.wait()

    thread = threading.Thread(target=write)
    thread.start()
    held.wait()
    waiting = threading.Thread(target=writer.copy, args=({"dest": str(dest)}, said.append))
    waiting.start()  # without "wait": false it waits for the write, then copies
    release.set()
    waiting.join()
    thread.join()
    assert said == [{"copied": ["tools"], "dest": str(dest.resolve())}] and dest.is_dir()
