"""``agentic-search``: search and ingest from the command line, on the embedded defaults.

One module per command (``cmd_search``, ``cmd_chat``, ``cmd_ingest``, ``cmd_init_domain``,
``cmd_config``, ``cmd_eval``, ``cmd_calibrate``, ``cmd_bench``, ``cmd_serve``, ``cmd_mcp``,
``sync_cmd``, ``cmd_migrate``), each with ``add_parser(sub)`` and ``run(args)``.

Exit codes: 0 success; 1 a runtime failure (store, model, file); 2 a usage error (unknown
option, empty or over-long query, bad value), always with a one-line reason on stderr.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import warnings

from agentic_search_cli import (
    cmd_bench,
    cmd_calibrate,
    cmd_chat,
    cmd_config,
    cmd_eval,
    cmd_ingest,
    cmd_init_domain,
    cmd_mcp,
    cmd_migrate,
    cmd_search,
    cmd_serve,
    sync_cmd,
)
from agentic_search_cli.common import (
    EXAMPLES,
    Parser,
    apply_embedder_flag,
    collector_paused,
    resume_collector,
)

COMMANDS = {
    "search": cmd_search,
    "chat": cmd_chat,
    "ingest": cmd_ingest,
    "init-domain": cmd_init_domain,
    "config": cmd_config,
    "eval": cmd_eval,
    "calibrate": cmd_calibrate,
    "bench": cmd_bench,
    "serve": cmd_serve,
    "mcp": cmd_mcp,
    "sync": sync_cmd,
    "migrate": cmd_migrate,
}


def build_parser() -> argparse.ArgumentParser:
    """The CLI's argument parser (subcommands: search, chat, ingest, init-domain, config, eval,
    calibrate, bench, serve, mcp, sync, migrate)."""
    parser = Parser(
        prog="agentic-search",
        description=(
            "Agentic search over a schema-driven catalog: intent extraction, query planning, "
            "hybrid retrieval (dense vectors per aspect, BM25, structured filters), fusion and "
            "candidates with provenance."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for command in COMMANDS.values():
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code. The garbage collector is
    paused while the command starts (:func:`~agentic_search_cli.common.collector_paused`)
    and on again when its work begins: before any command but ``search``, whose cache miss
    resumes it (a hit ends without)."""
    with collector_paused():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    warnings.filterwarnings("ignore", category=UserWarning)
    parser = build_parser()
    args = parser.parse_args(argv)
    apply_embedder_flag(args)
    if args.command != "search":  # (search resumes it on a cache miss: cmd_search.run)
        resume_collector()
    from agentic_search.ports import (
        EmbedderError,
        KeywordIndexError,
        SyncStatusError,
        VectorStoreError,
    )
    from agentic_search.wire.errors import SearchFailed

    try:
        code = COMMANDS[args.command].run(args)
    except (
        VectorStoreError,
        EmbedderError,
        KeywordIndexError,
        SyncStatusError,
        FileNotFoundError,
        OSError,
    ) as exc:
        sys.stderr.write(f"agentic-search: error: {exc}\n")
        code = 1
    except SearchFailed as exc:  # no path of the graph could answer (the ASL's SearchFailed)
        sys.stderr.write(f"agentic-search: error: the search failed: {exc}\n")
        code = 1
    except KeyboardInterrupt:
        sys.stderr.write("agentic-search: interrupted\n")
        code = 130
    return code


def entry() -> int:
    """The console script: :func:`main`, then exit with its code once no embedding call is
    still running in native code (a source that missed its deadline leaves one behind). When
    one is still running after the drain, flush and end the process with ``os._exit``:
    tearing the interpreter down under onnxruntime aborts it with rc 134 instead of the
    documented 0/1/2. (``main`` itself never exits the process: tests call it.)"""
    code = main()
    # The process ends: what it made goes to the permanent generation, so the interpreter's
    # final collections do not walk tens of thousands of live objects (a good share of a
    # cache hit's CPU: docs/benchmarks.md). atexit handlers, the streams' flush and reference
    # counting all run as before; only reference cycles left at exit are not collected,
    # which exit frees.
    gc.freeze()
    embedding = sys.modules.get("agentic_search.pipeline.embedding")
    if embedding is None or embedding.drain_embedding_threads() == 0:
        return code  # (never imported: nothing was embedded)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(entry())
