"""``agentic-search mcp``: the MCP server (:mod:`agentic_search_lambda.mcp_tools`) over stdio,
what desktop and IDE clients launch."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any

from agentic_search_cli.common import (
    add_as_flag,
    add_embedder_flag,
    add_llm_flag,
    caller_for,
    complete_interrupted_write,
    settings_for,
)


def add_parser(sub: Any) -> None:
    """Register ``mcp``."""
    m = sub.add_parser(
        "mcp",
        help="serve the MCP tools (search, explain, get_record, compare, list_domains) on stdio",
        description=(
            "Serve agentic-search as an MCP server (Model Context Protocol) on stdin/stdout, for\n"
            "a desktop or IDE client (Claude Desktop, an IDE agent, your own agent) to launch:\n"
            "tools search, explain, get_record, compare and list_domains (read-only, each with\n"
            "an input and an output JSON Schema), and each domain's schema and vocabularies as\n"
            "resources. stdout carries protocol messages only; progress and logs go to stderr.\n"
            "It answers at once; a first use indexes the bundled catalog meanwhile (searches\n"
            "wait for it). It searches a copy of the index; once the index is written (ingest,\n"
            "sync, here or through serve), the next tool call first takes a fresh copy.\n"
            "`agentic-search serve` answers the same over HTTP at /mcp; docs/guides/mcp.md has\n"
            "the client configuration.\n"
            "exit codes: 0 the client closed stdin; 2 a usage error. An index that cannot be\n"
            "read is said on stderr and in the error of each tool that reads it."
        ),
        epilog=(
            "a desktop client's configuration (claude_desktop_config.json):\n"
            '  {"mcpServers": {"agentic-search": {"command": "agentic-search", "args": ["mcp"]}}}\n'
            "try it by hand:\n"
            "  npx @modelcontextprotocol/inspector agentic-search mcp\n"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_llm_flag(m)
    add_embedder_flag(m)
    add_as_flag(m)


@contextlib.contextmanager
def stdout_on_stderr() -> Iterator[None]:
    """Point file descriptor 1 at stderr for the block: what a library prints while the
    server gets ready cannot reach the client, which reads stdout as protocol messages (the
    SDK's stdio transport diverts it the same way while it serves)."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def run(args: argparse.Namespace) -> int:
    """Serve MCP on stdio until the client closes stdin; returns the exit code.

    The server answers at once (a client gives up on a server that does not initialize
    within seconds); a first use's ingest of the bundled catalog runs meanwhile, and the
    tools that read the index wait for it. A reader, as ``search`` is (docs/concurrency.md):
    beside a running ``serve`` it searches a copy serve took for it, else a private copy of
    the index taken while no writer is at work. When the index is written later (by any
    process), the next tool call that reads it first takes a fresh copy the same way
    (:class:`FreshIndex`); while a write is at work it answers from the copy it has."""
    from agentic_search.logic.schema import SchemaError, available_domains
    from agentic_search.wiring import known_domains
    from agentic_search_cli.reader_copy import ReaderCopy
    from agentic_search_cli.serve_link import ServeLinkError

    settings = settings_for(args)
    try:
        domains = list(known_domains(settings))
    except SchemaError:  # a bad DOMAIN_FILES entry: the tools say why, as before
        domains = list(available_domains())
    reader = ReaderCopy(settings, "mcp", domains)
    try:
        copy = reader.take()
    except ServeLinkError as exc:
        reader.close()
        sys.stderr.write(f"agentic-search: error: {exc}\n")
        return 1
    assert copy is not None  # (it waited for serve's write)
    if copy.server is not None:
        sys.stderr.write(
            f"agentic-search: serve (pid {copy.server.pid}, port {copy.server.port}) holds the "
            f"index; reading a copy it took ({copy.folder})\n"
        )
    try:
        return _serve_stdio(reader, copy, caller_for(args))
    finally:  # (a server that did not start: what it took goes; a second close is nothing)
        reader.discard(copy)
        reader.close()


def _serve_stdio(reader: Any, copy: Any, caller: Any) -> int:
    """Serve MCP on stdio over ``copy`` of ``reader`` (:func:`run`) to ``caller`` (the local
    user's principals or ``--as``'s)."""
    with stdout_on_stderr():
        from agentic_search_lambda.observability import outside_lambda

        outside_lambda()
        from agentic_search.service import SearchService
        from agentic_search_lambda.mcp_tools import (
            build_server,
            index_lock,
            set_before_read,
            set_caller,
        )

        index = FreshIndex(reader, copy)
        rt = index.rt
        set_caller(caller)  # the one client of stdio
        service = SearchService(rt.deps("tools"))
        server = build_server()
    lock = index_lock()
    lock.acquire()  # released by prepare(), from its thread, once the index is ready
    threading.Thread(target=prepare, args=(service, lock), name="prepare", daemon=True).start()
    sys.stderr.write(
        f"agentic-search: MCP server on stdio ({rt.settings.store_location}); "
        "waiting for a client\n"
    )
    set_before_read(index.before_read)
    try:
        server.run("stdio")
    finally:
        set_before_read(None)
        index.close()
    return 0


class _WriterAtWork(Exception):
    """A writer holds a shard's read gate: no copy of it now (the reader asks again later)."""


def _give_up(pid: str) -> None:
    raise _WriterAtWork(pid)


def open_copies(rt: Any, names: set[str]) -> None:
    """Open now, in ``rt`` (a runtime over ``QDRANT_EDGE_READER`` settings), the shards of
    the collections ``names``: each is copied under its read gate, or not at all while a
    writer is at work.

    Raises:
        _WriterAtWork: a writer holds a gate (the copies taken so far go when ``rt`` closes).
        InterruptedWrite: a write was interrupted and is not completed yet.
        VectorStoreError: a shard cannot be read.
    """
    for domain in rt.domains():
        if rt.settings.collection_name(domain) not in names:
            continue
        deps = rt.deps(domain)
        store = deps.store
        store.waiting = _give_up
        try:
            store.count(deps.schema)
        finally:
            store.waiting = None


class FreshIndex:
    """The runtime ``agentic-search mcp`` answers from, over a copy of the index
    (:class:`~agentic_search_cli.reader_copy.ReaderCopy`) that follows the index's writes.

    Before each tool call that reads the index (:meth:`before_read`, holding the tools' index
    lock, so no read runs on the old copy meanwhile) it looks whether the index changed since
    its copy was taken; if so it takes a new copy as the first was taken (serve's, without
    waiting for a write at work; else copies of the shards it had open, each under its read
    gate, or none while a writer is at work), builds a runtime over it (the embedder kept:
    it depends on the model, not on the index), makes it the tools' runtime and closes the old
    one, deleting the old copy. When no copy can be taken now, the current copy answers and
    the next call tries again. The result cache answers by the catalog version of the copy
    searched (:class:`~agentic_search_cli.reader_copy.PinnedCatalog`).
    """

    def __init__(self, reader: Any, copy: Any) -> None:
        from agentic_search_lambda.runtime import use

        self.reader = reader
        self.copy = copy
        self.rt = self._runtime(copy)
        use(self.rt)  # the tools search through this runtime
        self._said: str | None = None

    def _runtime(self, copy: Any, embedder: Any = None) -> Any:
        from agentic_search.wiring import DomainRegistry
        from agentic_search_cli.reader_copy import PinnedCatalog
        from agentic_search_lambda.runtime import Runtime

        factories = None
        if self.reader.copies:
            cache, versions = self.reader.cache, dict(copy.stamp.versions)
            factories = {"cache": lambda c: PinnedCatalog(cache, versions)}
        shared = {"embedder": embedder} if embedder is not None else {}
        registry = DomainRegistry(copy.settings, factories=factories, **shared)
        return Runtime(copy.settings, deps=registry)

    def before_read(self) -> None:
        """Swap in a fresh copy when the index changed (see the class docstring); never
        raises: a copy that cannot be taken is said once on stderr and tried again later."""
        from agentic_search_lambda.runtime import use

        try:
            if not self.reader.changed(self.copy):
                return
            new = self.reader.take(wait=False)
            if new is None:
                return  # serve is writing: the copy this has answers, the next call asks again
            rt = None
            try:
                rt = self._runtime(new, self.rt.deps.shared("embedder"))
                if new.folder is None:
                    open_copies(rt, self._open_collections())
            except BaseException:
                if rt is not None:
                    with contextlib.suppress(Exception):
                        rt.deps.close()
                self.reader.discard(new)
                raise
            old, old_copy = self.rt, self.copy
            self.rt, self.copy = rt, new
            use(rt)
            old.deps.close()
            self.reader.discard(old_copy)
            self._said = None
            sys.stderr.write("agentic-search: the index changed; searching a fresh copy of it\n")
        except _WriterAtWork:
            return  # the copy this has answers; the next call looks again
        except Exception as exc:  # never a failed tool call for it
            reason = f"{type(exc).__name__}: {exc}"
            if reason != self._said:
                self._said = reason
                sys.stderr.write(
                    f"agentic-search: warning: the index changed but no fresh copy could be "
                    f"taken ({reason}); answering from the current one\n"
                )

    def _open_collections(self) -> set[str]:
        """The collections the current runtime's store has open (the new copy opens them
        now, so that a writer at work leaves the current copy answering)."""
        store = self.rt.deps.shared("store")
        shards = getattr(store, "shards", None)
        return set(getattr(shards, "open_shards", {}) or ())

    def close(self) -> None:
        """Close the runtime, delete its copy and close the reader's cache."""
        try:
            self.rt.deps.close()
        finally:
            self.reader.discard(self.copy)
            self.reader.close()


def prepare(service: Any, lock: Any) -> None:
    """Complete an interrupted write and, on first use, ingest the bundled catalog (then a
    reader's store gives the writer lock back and reads copies again); then release ``lock``
    (the tools' index lock, held for this). A failure is reported on stderr; the tools then
    answer with the store's own error."""
    try:
        wrote = service.pending_write() is not None
        complete_interrupted_write(service)
        store = service.deps.store
        if service.never_written() and hasattr(store, "acquire_writer"):  # Qdrant Edge
            store.acquire_writer(service.schema)  # a reader's: waits for a writer
        if service.never_written():  # first use (an index a prune emptied stays empty)
            wrote = True
            sys.stderr.write("agentic-search: first use: indexing the bundled catalog...\n")
            report = service.ensure_bundled_catalog()
            if report is not None:
                sys.stderr.write(f"agentic-search: indexed {report.valid} tools\n")
        if wrote and service.deps.settings.qdrant_edge_reader:
            # a reader again: the writer lock the write took is released (a later ingest by
            # another process is not refused) and the tools read copies of the index
            store.close()
    except Exception as exc:  # the tools report it; the server stays up
        sys.stderr.write(f"agentic-search: warning: {exc}\n")
    finally:
        lock.release()
