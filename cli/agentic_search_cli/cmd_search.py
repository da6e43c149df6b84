"""``agentic-search search``: ranked candidates with why each matched (first use ingests the
bundled catalog)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from agentic_search_cli.common import (
    EXAMPLES,
    add_embedder_flag,
    add_llm_flag,
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


def run(args: argparse.Namespace) -> int:
    """Run ``search``; returns the exit code (1 when no source could answer)."""
    query = args.query
    from agentic_search.wire.search import query_problem

    if not query.strip():
        usage_error("query is empty")
    problem = query_problem(query)  # the API's validation: length bounds, characters
    if problem:
        usage_error(problem)
    from agentic_search.logic.availability import unanswered, unavailable_message

    settings = settings_for(args)
    service = open_service(args.domain, settings)
    try:
        # a cache hit opens neither the store nor the model (see SearchService.cached)
        resp = service.cached(query, limit=args.limit, rounds=args.rounds)
        if resp is None:  # a miss: the search's work begins (see common.collector_paused)
            resume_collector()
            code = _before_first_search(service)
            if code is not None:
                return code
            resp = service.search(query, limit=args.limit, rounds=args.rounds)
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

            note = embedder_note(service, settings) if args.explain else None
            print_search(console(), resp, args.explain, embedder=note)
    finally:
        service.close()
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


def _before_first_search(service: Any) -> int | None:
    """First use: ingest the bundled catalog into a tools index never written (one a prune
    emptied stays empty); any other empty domain is a usage error. The exit code when
    interrupted, else None."""
    if service.schema.name == "tools" and service.never_written():
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
