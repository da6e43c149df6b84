"""``agentic-search serve``: the HTTP API on a local port, through the deployed handler."""

from __future__ import annotations

import argparse
import itertools
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from agentic_search_cli.common import (
    add_llm_flag,
    complete_interrupted_write,
    console,
    settings_for,
    usage_error,
)


def add_parser(sub: Any) -> None:
    """Register ``serve``."""
    v = sub.add_parser(
        "serve",
        help="serve the HTTP API locally (the deployed SearchApiFunction handler)",
        description=(
            "Serve POST /search, GET /health, GET /openapi.json, the MCP server (POST /mcp:\n"
            "streamable HTTP, stateless; docs/guides/mcp.md) and the search page (GET /: open\n"
            "http://127.0.0.1:8080/ in a browser; it also shows the last `eval` run here, from\n"
            "$AGENTIC_SEARCH_HOME/eval/last, GET /eval/last) on a local port. Each request\n"
            "becomes an API Gateway HTTP API (v2) event and goes through the same handler that\n"
            "template.yaml deploys, with the state machine replaced by the local runner.\n"
            "With Qdrant Edge (VECTOR_STORE=edge) or a Qdrant server (QDRANT_URL), N worker\n"
            "processes (--workers, default: the CPU count) answer searches in parallel, each on\n"
            "its own copy of the Edge index. This process holds every domain's write lock:\n"
            "`agentic-search ingest` and `sync` while it runs hand their write to it (over\n"
            "loopback, found through $QDRANT_EDGE_PATH/serve.json), which applies it and gives\n"
            "the workers fresh copies before the command returns; no request fails meanwhile.\n"
            "exit codes: 0 stopped by SIGTERM/SIGINT; 1 the port is in use, another process\n"
            "(another serve) holds the index, or the workers did not start; 2 a usage error.\n"
            "With the embedded Qdrant local mode, searches run one at a time in this process.\n"
            "Domains: the built-ins (tools, documents), every domain registered in\n"
            "$AGENTIC_SEARCH_HOME/domains (`ingest FILE --domain YOUR.yaml` registers it) and\n"
            "each --domain FILE.yaml; POST /search takes their names, GET /domains lists them."
        ),
        epilog=(
            "examples:\n"
            "  agentic-search serve --port 8080     # then open http://127.0.0.1:8080/\n"
            '  curl -s -X POST localhost:8080/search -d \'{"query": "free code editor"}\'\n'
            "  npx @modelcontextprotocol/inspector   # then connect to http://127.0.0.1:8080/mcp\n"
            "  curl -s localhost:8080/openapi.json\n"
            "  agentic-search serve --domain npm.yaml   # also serve a domain of your own\n"
            "  curl -s -X POST localhost:8080/search \\\n"
            '       -d \'{"query": "yaml parser", "domain": "npm"}\'\n'
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    v.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    v.add_argument("--port", type=int, default=8080, help="port (default 8080; 0 picks a free one)")
    v.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="worker processes answering searches (default: the CPU count; 0: in this "
        "process, one search at a time). Needs VECTOR_STORE=edge or QDRANT_URL",
    )
    v.add_argument(
        "--domain",
        dest="domains",
        action="append",
        type=Path,
        default=[],
        metavar="FILE.yaml",
        help="also serve the domain of this schema YAML, by the name it declares (repeatable; "
        "it replaces a registered domain of that name)",
    )
    add_llm_flag(v)


def domain_states(rt: Any) -> list[tuple[str, str]]:
    """Each served domain's index health (what ``GET /health?deep=true`` reports)."""
    from agentic_search.sync.audit import domain_health

    return [(d, domain_health(rt.deps(d))) for d in rt.domains()]


#: Interfaces of this machine only, and the names a local client's Host header gives them:
#: bound to one, ``/mcp`` refuses another Host or Origin (DNS rebinding; MCP_ALLOWED_HOSTS
#: set in the environment wins).
LOOPBACK = ("127.0.0.1", "localhost", "::1")
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")

#: Seconds a stop (SIGTERM, SIGINT) waits for the requests in flight to finish.
DRAIN_S = 25.0


def run(args: argparse.Namespace) -> int:
    """Run ``serve`` until SIGTERM or SIGINT; then stop accepting, let the requests in flight
    finish (up to :data:`DRAIN_S` s), log, and return 0."""
    if not 0 <= args.port <= 65535:
        usage_error(f"--port {args.port}: must be between 0 and 65535")
    try:
        from agentic_search_cli.local_server import make_server
    except ImportError as exc:  # pragma: no cover - powertools is a core dependency
        sys.stderr.write(f"agentic-search: error: {exc}: pip install 'agentic-search'\n")
        return 1
    # Powertools' metrics go to CloudWatch in Lambda; locally they would only flood stdout.
    from agentic_search_lambda.observability import outside_lambda

    outside_lambda()
    from agentic_search.ports import KeywordIndexError, VectorStoreError
    from agentic_search.service import SearchService
    from agentic_search.wiring import build_maintenance
    from agentic_search_lambda.runtime import Runtime, use

    if args.workers is not None and args.workers < 0:
        usage_error(f"--workers {args.workers}: must be 0 or more")
    if args.host in LOOPBACK:  # /mcp answers only these Host and Origin headers (the workers' too)
        os.environ.setdefault("MCP_ALLOWED_HOSTS", ",".join(f"{h}:*" for h in LOOPBACK_NAMES))
    files = [p.resolve() for p in args.domains]
    for path in files:
        if not path.is_file():
            usage_error(f"--domain {path}: no such file")
    rt = Runtime(settings_for(args, domain_files=files))
    from agentic_search.logic.schema import SchemaError

    try:
        served = rt.domains()
    except SchemaError as exc:
        usage_error(str(exc))
    use(rt)  # the handler serves from this runtime
    service = SearchService(rt.deps("tools"))
    maintenance = build_maintenance(rt.settings, service.deps.store)
    workers = args.workers if args.workers is not None else (os.cpu_count() or 1)
    if workers and maintenance is None and not rt.settings.qdrant_url:
        if args.workers:
            sys.stderr.write(
                "agentic-search: note: --workers needs VECTOR_STORE=edge or QDRANT_URL (Qdrant "
                "local mode is one process's); searches run here, one at a time\n"
            )
        workers = 0
    if maintenance is not None:
        # every domain's shard lock first: a second serve on the folder stops here, in one line
        try:
            maintenance.hold_writes()
        except VectorStoreError as exc:
            from agentic_search_cli.serve_link import held_message

            sys.stderr.write(f"agentic-search: error: {held_message(rt.settings, exc)}\n")
            rt.deps.close()  # type: ignore[attr-defined]
            return 1
    try:  # the port next: one taken fails before any worker starts
        server = make_server(args.host, args.port)
    except OSError as exc:
        sys.stderr.write(
            f"agentic-search: error: cannot listen on {args.host}:{args.port}: "
            f"{exc.strerror or exc}"
            + (" (pick another with --port)" if exc.errno == 98 else "")
            + "\n"
        )
        rt.deps.close()  # type: ignore[attr-defined]
        return 1
    try:
        complete_interrupted_write(service)
        if service.never_written():  # first use (an index a prune emptied stays empty)
            err = console(stderr=True)
            err.print("[dim]first use: ingesting the bundled catalog...[/dim]")
            service.ensure_bundled_catalog()
        if not workers:
            service.warm_up()  # the first request does not pay the model load; no full-GC pauses
    except (VectorStoreError, KeywordIndexError) as exc:
        # a damaged index fails its own domain's requests, not the server
        sys.stderr.write(f"agentic-search: warning: {exc}\n")
    for domain, state in domain_states(rt):
        if state.startswith("error"):
            sys.stderr.write(f"agentic-search: warning: domain {domain!r}: {state}\n")
    try:
        pool = start_pool(rt.settings, maintenance, workers) if workers else None
    except (RuntimeError, OSError) as exc:
        sys.stderr.write(f"agentic-search: error: {exc}\n")
        server.server_close()
        rt.deps.close()  # type: ignore[attr-defined]
        return 1
    from agentic_search_cli import serve_link
    from agentic_search_cli.local_server import attach, search_lock
    from agentic_search_cli.serve_writer import ServeWriter

    writer = None
    if maintenance is not None:  # ingest and sync of the CLI come here (serve_link)
        host, port = server.server_address[:2]
        info = serve_link.write_info(rt.settings, host, port, tuple(served))
        writer = ServeWriter(rt, info.token, pool, search_lock(), maintenance)
    attach(pool, writer)
    try:
        return _serve(args, rt, server)
    finally:
        if writer is not None:
            serve_link.remove_info(rt.settings)
        if pool is not None:
            pool.close()


def start_pool(settings: Any, maintenance: Any, workers: int) -> Any:
    """Start ``workers`` worker processes (:class:`~agentic_search_cli.serve_pool.WorkerPool`),
    each with its own copy of the Edge shards (none with a Qdrant server) in a run dir under
    ``$AGENTIC_SEARCH_HOME/run`` (left-overs of servers no longer running are deleted first).

    With Edge, :func:`run` holds every bundled domain's shard lock first: the workers search
    copies, so every write goes through this process (:mod:`~agentic_search_cli.serve_writer`),
    which then gives them new copies.

    Raises:
        RuntimeError: when the workers do not start (the reason).
    """
    from agentic_search.adapters.edge.copying import private_folder
    from agentic_search_cli.serve_pool import WorkerPool

    run_dir = private_folder(settings.agentic_search_home / "run", "serve")
    copies = itertools.count()

    def make_copy() -> Path:
        dest = run_dir / f"copy-{next(copies)}"
        maintenance.snapshot(dest)
        return dest

    pool = WorkerPool(workers, settings, make_copy if maintenance else None, run_dir)
    pids = pool.start()
    copy = "its own copy of the index" if maintenance is not None else "the Qdrant server"
    sys.stderr.write(
        f"agentic-search: {workers} worker process(es) (pid {', '.join(map(str, pids))}), "
        f"each searching {copy}\n"
    )
    return pool


def _serve(args: argparse.Namespace, rt: Any, server: Any) -> int:
    """Serve until SIGTERM or SIGINT, then drain (see :func:`run`)."""
    host, port = server.server_address[:2]
    stop = threading.Event()

    def on_signal(signum: int, _frame: Any) -> None:
        # serve_forever runs in this (the main) thread: shutdown() must come from another
        if not stop.is_set():
            stop.set()
            sys.stderr.write(f"agentic-search: {signal.Signals(signum).name}: stopping\n")
            threading.Thread(target=server.shutdown, name="shutdown", daemon=True).start()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    sys.stderr.write(
        f"agentic-search: serving on http://{host}:{port} (domains: "
        f"{', '.join(rt.domains())}; Ctrl-C to stop)\n"
    )
    sys.stderr.flush()
    try:
        server.serve_forever()
        server.server_close()  # no new connections; those in flight go on
        waiting = server.in_flight
        if waiting:
            sys.stderr.write(
                f"agentic-search: waiting up to {DRAIN_S:.0f} s for {waiting} request(s) "
                "in flight\n"
            )
        left = server.drain(DRAIN_S)
        sys.stderr.write(
            "agentic-search: stopped"
            + (f" ({left} request(s) still running were dropped)" if left else "")
            + "\n"
        )
    finally:
        server.server_close()
        rt.deps.close()  # type: ignore[attr-defined]
    return 0
