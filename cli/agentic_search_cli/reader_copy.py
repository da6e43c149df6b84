"""A long-running reader's copy of the index (``agentic-search mcp``), and whether it is stale.

A reader never opens the index a writer writes (docs/concurrency.md): beside a running
``serve`` it searches a copy serve took for it (``POST /_local/copy``), else the copies its
Edge store takes under each shard's read gate while no writer is at work. A command that ends
soon may read the index as it was when it started; a server a desktop client keeps for hours
may not. :class:`ReaderCopy` tells when the index changed since a copy was taken
(:meth:`ReaderCopy.changed`: a stat and a small read per domain, no copy) and takes a new copy
the same safe ways, without waiting for a write at work (:meth:`ReaderCopy.take`).

What says the index changed is its :class:`Stamp`: the write journal's folder (every journaled
write, ``ingest``, ``sync`` and the completion of an interrupted one, adds and then removes its
domain's entry there, whichever process writes, serve's writer too) and each domain's catalog
version (what every write ends with, and what the result cache keys on). The stamp is read
before the copy is taken, so a copy is never older than its stamp: a write that lands while
the copy is taken only makes the next check take another.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Stamp:
    """What the index's writes leave behind, compared between two looks: the write journal
    folder's modification time (ns; None while there is none) and each domain's catalog
    version (None where the cache could not say)."""

    journal: int | None
    versions: tuple[tuple[str, int | None], ...] = ()

    def version(self, domain: str) -> int | None:
        """The domain's catalog version in this stamp (None: not read)."""
        return dict(self.versions).get(domain)


@dataclass(frozen=True)
class Copy:
    """One copy a reader searches: the settings that open it, the stamp read before it was
    taken, the private folder serve copied it into (None: the Edge store's own copies, taken
    when it opens a shard and deleted when it closes) and that serve."""

    settings: Any
    stamp: Stamp
    folder: Path | None = field(default=None)
    #: the ``serve`` that took it (a :class:`~agentic_search_cli.serve_link.ServeInfo`)
    server: Any = None


class ReaderCopy:
    """The copies of the index over ``settings`` that the reader command ``who`` searches
    (its private folders are ``$AGENTIC_SEARCH_HOME/run/<who>-<pid>-*``), the stamps of
    ``domains``.

    With a Qdrant server or a published index there is nothing to copy: the settings are used
    as they are and the index never reads as changed (the server is the live index; a
    published one swaps its snapshots itself).
    """

    def __init__(self, settings: Any, who: str, domains: Sequence[str]) -> None:
        self.base = settings
        self.who = who
        self.domains = tuple(domains)
        #: whether this reader searches copies (Qdrant Edge in a folder)
        self.copies = settings.vector_store == "edge" and not settings.qdrant_url
        self._journal = Path(settings.agentic_search_home) / "journal"

    @cached_property
    def cache(self) -> Any:
        """The result cache the reader answers from, the catalog versions read from it (built
        on first use).

        Raises:
            ValueError: for ``CACHE_BACKEND=dynamodb`` without ``CACHE_TABLE``.
        """
        from agentic_search.wiring import build_cache

        return build_cache(self.base)

    def stamp(self) -> Stamp:
        """The index's stamp now: one ``stat`` and a catalog version read per domain."""
        from agentic_search.ports import CacheError

        try:
            journal: int | None = self._journal.stat().st_mtime_ns
        except OSError:
            journal = None
        versions = []
        for domain in self.domains:
            version = None
            with contextlib.suppress(CacheError, ValueError):
                version = self.cache.catalog_version(domain)
            versions.append((domain, version))
        return Stamp(journal, tuple(versions))

    def take(self, wait: bool = True) -> Copy | None:
        """A new copy of the index: beside a running ``serve``, one it takes between writes
        (:func:`~agentic_search_cli.serve_link.serve_copy`; without ``wait``, None at once
        while it writes); else settings whose Edge store copies each shard under its read gate
        when it opens it (``QDRANT_EDGE_READER``: the caller opens the shards it needs now, see
        :func:`~agentic_search_cli.cmd_mcp.open_copies`).

        Raises:
            ServeLinkError: when ``serve`` could not make the copy.
        """
        from agentic_search_cli.serve_link import running_server, serve_copy

        stamp = self.stamp()  # before the copy: the copy is never older than its stamp
        if not self.copies:
            return Copy(self.base, stamp)
        info = running_server(self.base)
        if info is None:
            return Copy(self.base.model_copy(update={"qdrant_edge_reader": True}), stamp)
        folder = serve_copy(info, self.base, self.who, wait=wait)
        if folder is None:
            return None
        settings = self.base.model_copy(update={"qdrant_edge_path": folder / "edge"})
        return Copy(settings, stamp, folder, info)

    def changed(self, copy: Copy) -> bool:
        """Whether the index was written since ``copy`` was taken (False when this reader
        searches no copies)."""
        return self.copies and self.stamp() != copy.stamp

    def discard(self, copy: Copy) -> None:
        """Delete the private folder serve copied ``copy`` into (the store's own copies go
        when it closes)."""
        if copy.folder is not None:
            shutil.rmtree(copy.folder, ignore_errors=True)

    def close(self) -> None:
        """Close the result cache (a SQLite connection), when it was built."""
        close = getattr(self.__dict__.get("cache"), "close", None)
        if callable(close):
            close()


class PinnedCatalog:
    """The reader's result cache (a :class:`~agentic_search.ports.ResultCache`) with each
    domain's catalog version as it was when the copy searched was taken (``versions``; a
    domain it lacks reads the live one). An answer is found and stored under the version of
    the index it was searched in: an answer from the copy before a write is never found once
    the copy after it is searched, nor stored under the version after the write while the old
    copy still answers (a write at work: the copy is renewed later). It has no ``close``: the
    cache is the reader's, shared by its copies."""

    def __init__(self, inner: Any, versions: dict[str, int | None]) -> None:
        self.inner = inner
        self.versions = versions
        self.name: str = inner.name

    def get(self, key: str) -> dict[str, Any] | None:
        """The live value under ``key`` or None (the inner cache's).

        Raises:
            CacheError: when the cache cannot be read.
        """
        return self.inner.get(key)

    def put(self, key: str, value: dict[str, Any], ttl_s: int) -> None:
        """Store ``value`` for ``ttl_s`` seconds in the inner cache.

        Raises:
            CacheError: when the cache cannot be written.
        """
        self.inner.put(key, value, ttl_s)

    def catalog_version(self, domain: str) -> int:
        """The domain's catalog version when the copy was taken (else the live one).

        Raises:
            CacheError: when the live version cannot be read.
        """
        pinned = self.versions.get(domain)
        return pinned if pinned is not None else self.inner.catalog_version(domain)

    def bump_catalog_version(self, domain: str) -> int:
        """Bump the live version (a write of this process: first use, a completed write).

        Raises:
            CacheError: when the cache cannot be written.
        """
        return self.inner.bump_catalog_version(domain)


__all__ = ["Copy", "PinnedCatalog", "ReaderCopy", "Stamp"]
