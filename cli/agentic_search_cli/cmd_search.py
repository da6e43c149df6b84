"""``agentic-search search``: ranked candidates with why each matched (first use ingests the
bundled catalog)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from agentic_search_cli.common import (
    EXAMPLES,
    add_as_flag,
    add_embedder_flag,
    add_llm_flag,
    caller_for,
    console,
    open_service,
    positive_limit,
    progress_bar,
    resume_collector,
    rounds_arg,
    settings_for,
    usage_error,
)


def add_parser(sub: Any) -> None:
    """Register ``search``."""
    s = sub.add_parser(
        "search",
        help="search the catalog (ingests the bundled catalog on first use)",
        description="Search a domain and print ranked candidates with why each matched.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument(
        "query",
        # the bounds are agentic_search.wire.search's (not imported here: CLI start-up time)
        help="natural-language query, a phrase or a pasted paragraph: up to 4,000 characters "
        "and 1,000 words",
    )
    s.add_argument(
        "--limit", "-n", type=positive_limit, default=10, help="results, 1..100 (default 10)"
    )
    s.add_argument(
        "--json",
        action="store_true",
        help="print the QueryExecutorOutput (plus intent and plan) as JSON",
    )
    s.add_argument(
        "--explain",
        action="store_true",
        help="also show the intent, the plan, each executor round (queries, what it added, "
        "coverage) and why it stopped, and stage timings",
    )
    s.add_argument(
        "--rounds",
        type=rounds_arg,
        default=None,
        metavar="N",
        help="executor rounds at most, 1..5 (default MAX_ROUNDS or 3); 1 = one-shot hybrid "
        "search without evidence selection",
    )
    s.add_argument(
        "--domain",
        default="tools",
        help="domain name (tools, documents) or schema YAML path (default tools)",
    )
    add_llm_flag(s)
    add_embedder_flag(s)
    add_as_flag(s)


def run(args: argparse.Namespace) -> int:
    """Run ``search``; returns the exit code (1 when no source could answer).

    A reader (docs/concurrency.md): with ``serve`` running over the folder, the search is
    asked of it over loopback; otherwise this process searches a private copy of the index,
    taken while no writer is at work (it waits for one, saying so)."""
    query = args.query
    from agentic_search.wire.search import query_problem

    if not query.strip():
        usage_error("query is empty")
    problem = query_problem(query)  # the API's validation: length bounds, characters
    if problem:
        usage_error(problem)
    settings = settings_for(args, qdrant_edge_reader=True)
    server = _serving(settings, args.domain)
    if server is not None:
        return _ask_serve(args, server)
    caller = caller_for(args)
    service = open_service(args.domain, settings)
    try:
        # a cache hit opens neither the store nor the model (see SearchService.cached)
        resp = service.cached(query, limit=args.limit, rounds=args.rounds, caller=caller)
        if resp is None:  # a miss: the search's work begins (see common.collector_paused)
            resume_collector()
            _open_index(service)
            code = _before_first_search(service)
            if code is not None:
                return code
            resp = service.search(query, limit=args.limit, rounds=args.rounds, caller=caller)
        return _show(args, resp, embedder_note(service, settings) if args.explain else None)
    except _ServeStarted as started:  # serve took the index while this search waited
        server = started.server
    finally:
        service.close()
    return _ask_serve(args, server)


def _show(args: argparse.Namespace, resp: Any, embedder: str | None = None) -> int:
    """Print a response (table, ``--explain`` or ``--json``; ``embedder``: what
    ``--explain`` says of the embedder); 1 when no source answered."""
    from agentic_search.logic.availability import unanswered, unavailable_message

    # the executor's output is all the check reads: a cache hit's table then parses
    # neither the intent, the plan nor the evidence pack (SearchResponse.from_wire)
    output = resp.output.wire()
    failed = unanswered(output)
    if failed:  # an empty list here would read as "nothing matches"
        sys.stderr.write(
            f"agentic-search: error: {unavailable_message(failed, output['errors'])}\n"
        )
        return 1
    if args.json:
        wire = resp.wire()
        sys.stdout.write(json.dumps(wire, indent=2, ensure_ascii=False) + "\n")
    else:
        from agentic_search_cli.render import print_search

        print_search(console(), resp, args.explain, embedder=embedder)
    return 0


def embedder_note(service: Any, configured: Any) -> str:
    """What ``--explain`` says of the embedder: its model, and whether it is the one that
    built the index, taken from it because ``configured`` (the command's settings) named none
    (:func:`~agentic_search.wiring.index_embedder_settings`)."""
    from agentic_search.logic.embedder_identity import identity_of
    from agentic_search.wiring import identity_embedder

    embedder = identity_embedder(service.deps)
    model = identity_of(embedder).model if embedder is not None else service.settings.embedder_model
    if service.settings.embedder_model != configured.embedder_model:
        return (
            f"{model}, the model that built the index (--embedder or LOCAL_EMBEDDING_MODEL "
            "chooses another)"
        )
    return model


def _serving(settings: Any, domain: str) -> Any:
    """The ``serve`` running over this folder when it serves ``domain`` (a bundled domain's
    name: it holds those shards), else None."""
    from agentic_search.logic.schema import available_domains
    from agentic_search_cli.serve_link import running_server

    if domain not in available_domains():
        return None
    return running_server(settings)


def _ask_serve(args: argparse.Namespace, server: Any) -> int:
    """The search asked of the running ``serve`` over loopback (``POST /search``), shown as a
    search of this process would be; its own settings (model, LLM) answer it."""
    from agentic_search.wire import SearchResponse
    from agentic_search_cli.serve_link import ServeLinkError, post_json

    err = console(stderr=True)
    err.print(
        f"agentic-search: serve (pid {server.pid}, port {server.port}) holds the index; asking it",
        markup=False,
        soft_wrap=True,
    )
    if args.llm is not None or args.embedder is not None:
        err.print(
            "agentic-search: note: serve answers with its own settings; --llm and --embedder "
            "apply to a search run by this process",
            markup=False,
            soft_wrap=True,
        )
    body: dict[str, Any] = {"query": args.query, "limit": args.limit, "domain": args.domain}
    if args.rounds is not None:
        body["rounds"] = args.rounds
    principals = caller_for(args).principals
    try:  # serve trusts the principals header: it is bound to loopback and checks its token
        status, answer = post_json(server, "/search", body, principals=principals)
    except ServeLinkError as exc:
        sys.stderr.write(f"agentic-search: error: {exc}\n")
        return 1
    if status == 422:
        usage_error(str(answer.get("message") or answer))
    if status != 200:
        message = answer.get("message") or answer.get("error") or f"status {status}"
        sys.stderr.write(f"agentic-search: error: serve (pid {server.pid}): {message}\n")
        return 1
    return _show(args, SearchResponse.from_wire(answer))


class _ServeStarted(Exception):
    """``serve`` started over the folder while this search waited for the index."""

    def __init__(self, server: Any) -> None:
        super().__init__(f"serve (pid {server.pid})")
        self.server = server


def _open_index(service: Any) -> None:
    """Open the domain's index for reading before the search (a reader's private copy): while
    a writer is at work, wait for it, saying so once on stderr (and, should it be a ``serve``
    that started meanwhile, ask it: :class:`_ServeStarted`); a write found interrupted is
    completed first.

    Raises:
        VectorStoreError: when the index cannot be opened (one line).
    """
    from agentic_search.ports import InterruptedWrite
    from agentic_search_cli.common import complete_interrupted_write
    from agentic_search_cli.serve_link import running_server

    said: list[str] = []
    settings = service.settings

    def waiting(pid: str) -> None:
        if not said:
            said.append(pid)
            sys.stderr.write(
                f"agentic-search: the {service.schema.name!r} index is being written by "
                f"another process (pid {pid}); waiting for it to finish...\n"
            )
            sys.stderr.flush()
        server = running_server(settings)
        if server is not None and str(server.pid) == pid:
            raise _ServeStarted(server)

    store = service.deps.store
    if hasattr(store, "waiting"):  # Qdrant Edge (a server has no lock to wait for)
        store.waiting = waiting
    for attempt in range(3):
        try:
            service.is_empty()  # opens the index (a reader: copies it)
            return
        except InterruptedWrite:
            if attempt == 2:
                raise
            complete_interrupted_write(service)


def _before_first_search(service: Any) -> int | None:
    """First use: ingest the bundled catalog into a tools index never written (one a prune
    emptied stays empty); any other empty domain is a usage error. The exit code when
    interrupted, else None.

    Two first searches at once: the first takes the writer lock and indexes, the other waits
    for that lock (as a reader waits for a writer) and then finds the index written."""
    first = service.schema.name == "tools" and service.never_written()
    if first and hasattr(service.deps.store, "acquire_writer"):  # Qdrant Edge
        service.deps.store.acquire_writer(service.schema)  # a reader's: waits for a writer
        first = service.never_written()
    if first:
        err = console(stderr=True)
        try:
            with progress_bar(err) as progress:
                task = progress.add_task("first use: ingesting the bundled catalog", total=None)
                report = service.ensure_bundled_catalog(
                    on_start=lambda n: progress.update(task, total=n),
                    on_progress=lambda n: progress.advance(task, n),
                )
        except KeyboardInterrupt:
            sys.stderr.write(
                "agentic-search: interrupted while indexing the bundled catalog: the next "
                "command completes the index before searching it\n"
            )
            return 130
        if report is not None:
            err.print(
                f"indexed {report.valid} tools in {report.seconds:.1f} s into "
                f"{service.settings.store_location}"
            )
    elif service.is_empty():
        usage_error(
            f"domain {service.schema.name!r} is empty: run "
            f"`agentic-search ingest PATH --domain {service.schema.name}` first"
        )
    return None
