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
    add_embedder_flag,
    add_llm_flag,
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
            "wait for it).\n"
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
    the index taken while no writer is at work
    (:func:`~agentic_search_cli.serve_link.reader_settings`); either is the index as it was
    when the server started."""
    from agentic_search_cli.serve_link import ServeLinkError, reader_settings

    with contextlib.ExitStack() as readers:
        try:
            settings = readers.enter_context(reader_settings(settings_for(args), "mcp"))
        except ServeLinkError as exc:
            sys.stderr.write(f"agentic-search: error: {exc}\n")
            return 1
        return _serve_stdio(settings)


def _serve_stdio(settings: Any) -> int:
    """Serve MCP on stdio over ``settings`` (a reader's: :func:`run`)."""
    with stdout_on_stderr():
        from agentic_search_lambda.observability import outside_lambda

        outside_lambda()
        from agentic_search.service import SearchService
        from agentic_search_lambda.mcp_tools import build_server, index_lock
        from agentic_search_lambda.runtime import Runtime, use

        rt = Runtime(settings)
        use(rt)  # the tools search through this runtime
        service = SearchService(rt.deps("tools"))
        server = build_server()
    lock = index_lock()
    lock.acquire()  # released by prepare(), from its thread, once the index is ready
    threading.Thread(target=prepare, args=(service, lock), name="prepare", daemon=True).start()
    sys.stderr.write(
        f"agentic-search: MCP server on stdio ({rt.settings.store_location}); "
        "waiting for a client\n"
    )
    try:
        server.run("stdio")
    finally:
        rt.deps.close()  # type: ignore[attr-defined]
    return 0


def prepare(service: Any, lock: Any) -> None:
    """Complete an interrupted write and, on first use, ingest the bundled catalog; then
    release ``lock`` (the tools' index lock, held for this). A failure is reported on stderr;
    the tools then answer with the store's own error."""
    try:
        complete_interrupted_write(service)
        store = service.deps.store
        if service.never_written() and hasattr(store, "acquire_writer"):  # Qdrant Edge
            store.acquire_writer(service.schema)  # a reader's: waits for a writer
        if service.never_written():  # first use (an index a prune emptied stays empty)
            sys.stderr.write("agentic-search: first use: indexing the bundled catalog...\n")
            report = service.ensure_bundled_catalog()
            if report is not None:
                sys.stderr.write(f"agentic-search: indexed {report.valid} tools\n")
    except Exception as exc:  # the tools report it; the server stays up
        sys.stderr.write(f"agentic-search: warning: {exc}\n")
    finally:
        lock.release()
