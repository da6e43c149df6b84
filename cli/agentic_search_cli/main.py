"""``agentic-search``: search and ingest from the command line, on the embedded defaults.

Exit codes: 0 success; 1 a runtime failure (store, model, file); 2 a usage error (unknown
option, empty or over-long query, bad value), always with a one-line reason on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import warnings
from pathlib import Path
from typing import NoReturn

EXAMPLES = """\
examples:
  agentic-search search "AI code completion tools that work locally"
  agentic-search search "free alternative to Cursor" --json
  agentic-search search "open source vector database I can self-host" --explain --limit 5
  agentic-search ingest my-catalog.jsonl --domain tools
  agentic-search ingest ../shared/datasets/scifact --domain documents
  agentic-search eval --dataset ../shared/datasets/scifact --out benchmarks/scifact
  agentic-search serve --port 8080     # then POST {"query": "..."} to localhost:8080/search
  agentic-search sync events/sync/stream_mixed_batch.json   # apply catalog change events

The first search ingests the bundled catalog (284 AI and developer tools) into the embedded
store under ./.agentic-search (set AGENTIC_SEARCH_HOME or QDRANT_PATH to move it; set
QDRANT_URL, MONGODB_URI, OPENAI_BASE_URL/EMBEDDING_MODEL to use servers instead).
"""


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors are one line on stderr and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _usage_error(message: str) -> NoReturn:
    sys.stderr.write(f"agentic-search: error: {message}\n")
    raise SystemExit(2)


def _positive_limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid limit {text!r}: not an integer") from None
    if not 1 <= value <= 100:
        raise argparse.ArgumentTypeError(f"invalid limit {value}: must be between 1 and 100")
    return value


def _add_llm_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--llm",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="intent and plan by the LLM of OPENAI_BASE_URL / OPENAI_API_KEY (model LLM_MODEL), "
        "falling back to the rules on a timeout, an error or an answer outside the schema; "
        "--no-llm: rules only (default: the LLM when an endpoint or key is set)",
    )


def _apply_llm_flag(args: argparse.Namespace) -> None:
    """``--llm`` / ``--no-llm`` set ``LLM`` for the settings the engine reads."""
    flag = getattr(args, "llm", None)
    if flag is None:
        return
    if flag and not (os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_KEY")):
        _usage_error(
            "--llm needs an endpoint: set OPENAI_BASE_URL (e.g. http://127.0.0.1:8000/v1 for a "
            "local llama.cpp server) or OPENAI_API_KEY"
        )
    os.environ["LLM"] = "on" if flag else "off"


def _eval_llm() -> str:
    """``eval`` and ``bench`` measure the rule-based path unless ``LLM`` is set explicitly."""
    return os.environ.get("LLM") or "off"


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number {text!r}: not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"invalid number {value}: must be at least 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The CLI's argument parser (subcommands: search, ingest, eval, bench, serve, sync)."""
    parser = _Parser(
        prog="agentic-search",
        description=(
            "Agentic search over a schema-driven catalog: intent extraction, query planning, "
            "hybrid retrieval (dense vectors per aspect, BM25, structured filters), fusion and "
            "candidates with provenance."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    s = sub.add_parser(
        "search",
        help="search the catalog (ingests the bundled catalog on first use)",
        description="Search a domain and print ranked candidates with why each matched.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("query", help="natural-language query, 1 to 1,000 characters")
    s.add_argument(
        "--limit", "-n", type=_positive_limit, default=10, help="results, 1..100 (default 10)"
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
        type=_rounds,
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
    _add_llm_flag(s)

    i = sub.add_parser(
        "ingest",
        help="ingest a JSONL catalog (or a BEIR dataset folder) into the index",
        description=(
            "Validate each line against the domain schema, embed each aspect and upsert into the "
            "domain's collection. Bad lines are reported with their line number; the rest go in. "
            "Re-ingesting the same file changes nothing; changed records re-embed only the aspects "
            "whose content changed."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    i.add_argument(
        "path", type=Path, help="JSONL file, or a BEIR dataset folder holding corpus.jsonl"
    )
    i.add_argument(
        "--domain", default="tools", help="domain name or schema YAML path (default tools)"
    )
    i.add_argument(
        "--batch-size", type=int, default=64, help="records per write batch (default 64)"
    )
    i.add_argument("--json", action="store_true", help="print the ingest report as JSON")
    i.add_argument("--strict", action="store_true", help="exit 1 when any line was rejected")

    e = sub.add_parser(
        "eval",
        help="evaluate bm25, dense, hybrid RRF and the executor on a BEIR dataset",
        description=(
            "Ingest a BEIR-layout dataset (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv) into\n"
            "the 'documents' domain when needed, run every system on the same index and the\n"
            "judged queries of the split, and report nDCG@10, Recall@100, MRR@10 (pytrec_eval)\n"
            "and latency p50/p95/p99 per system (top 100 each).\n\n"
            "systems:\n"
            "  bm25             the keyword index alone\n"
            "  dense            the 'content' named vector alone\n"
            "  hybrid-rrf       dense + bm25 fused by plain RRF (k = 60)\n"
            "  executor-1round  intent, plan and executor, one round (`search --rounds 1`)\n"
            "  executor         the multi-round executor, MAX_ROUNDS at most (what `search` runs)\n"
            "  hybrid-rrf-qdrant  only when named: Qdrant's own RRF of a dense and a sparse\n"
            "                   prefetch (needs QDRANT_URL)"
        ),
        epilog=(
            "examples:\n"
            "  agentic-search eval --dataset ../shared/datasets/scifact\n"
            "  agentic-search eval --dataset ../shared/datasets/scifact --json "
            "--out benchmarks/scifact\n"
            "  agentic-search eval --dataset DIR --systems bm25,dense --max-queries 50\n"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    e.add_argument("--dataset", type=Path, required=True, metavar="DIR", help="BEIR dataset folder")
    e.add_argument("--split", default="test", help="qrels split: qrels/SPLIT.tsv (default test)")
    e.add_argument(
        "--systems",
        default=None,
        metavar="LIST",
        help=(
            "comma-separated systems (default all: bm25,dense,hybrid-rrf,executor-1round,executor)"
        ),
    )
    e.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    e.add_argument(
        "--collection-prefix",
        default=None,
        metavar="PREFIX",
        help=(
            "collection prefix of the evaluation index (default eval-<dataset>-): the eval "
            "owns that collection and makes it hold exactly the corpus, so your own "
            "'documents' collection is never touched"
        ),
    )
    e.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="write results.json and two PNG plots into DIR",
    )
    e.add_argument(
        "--max-queries",
        type=_positive_int,
        default=None,
        metavar="N",
        help="evaluate only the first N judged queries",
    )
    _add_bench_parser(sub)  # agentic-search bench
    _add_serve_parser(sub)  # agentic-search serve
    from agentic_search_cli.sync_cmd import add_sync_parser

    add_sync_parser(sub)  # agentic-search sync
    return parser


def _console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


def _progress(console):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )


def _engine(domain: str):
    from agentic_search.domain.schema import SchemaError
    from agentic_search.engine import SearchEngine

    try:
        return SearchEngine(domain=domain)
    except SchemaError as exc:
        _usage_error(str(exc))


def _cmd_search(args: argparse.Namespace) -> int:
    query = args.query
    if not query.strip():
        _usage_error("query is empty")
    if len(query) > 1000:
        _usage_error(f"query is {len(query)} characters; the maximum is 1000")
    from agentic_search.domain.availability import unanswered, unavailable_message
    from agentic_search_cli.render import print_search

    engine = _engine(args.domain)
    try:
        err = _console(stderr=True)
        if engine.schema.name == "tools" and engine.is_empty():
            with _progress(err) as progress:
                task = progress.add_task("first use: ingesting the bundled catalog", total=None)
                report = engine.ensure_bundled_catalog(
                    on_start=lambda n: progress.update(task, total=n),
                    on_progress=lambda n: progress.advance(task, n),
                )
            if report is not None:
                err.print(
                    f"indexed {report.valid} tools in {report.seconds:.1f} s into "
                    f"{engine.settings.resolved_qdrant_path}"
                )
        elif engine.is_empty():
            _usage_error(
                f"domain {engine.schema.name!r} is empty: run "
                f"`agentic-search ingest PATH --domain {engine.schema.name}` first"
            )
        resp = engine.search(query, limit=args.limit, rounds=args.rounds)
        wire = resp.wire()
        failed = unanswered(wire)
        if failed:  # an empty list here would read as "nothing matches"
            sys.stderr.write(
                f"agentic-search: error: {unavailable_message(failed, wire['errors'])}\n"
            )
            return 1
        if args.json:
            sys.stdout.write(json.dumps(wire, indent=2, ensure_ascii=False) + "\n")
        else:
            print_search(_console(), resp, args.explain)
    finally:
        engine.close()
    return 0


def _rounds(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if not 1 <= value <= 5:
        raise argparse.ArgumentTypeError(f"must be between 1 and 5, got {value}")
    return value


def _cmd_ingest(args: argparse.Namespace) -> int:
    from agentic_search.sync.files import read_beir_corpus, read_catalog
    from agentic_search_cli.render import print_ingest

    path: Path = args.path
    if args.batch_size < 1:
        _usage_error("--batch-size must be at least 1")
    if not path.exists():
        _usage_error(f"no such file or folder: {path}")
    engine = _engine(args.domain)
    try:
        if path.is_dir():
            if not (path / "corpus.jsonl").is_file():
                _usage_error(f"{path} is a folder without corpus.jsonl (BEIR layout expected)")
            read = read_beir_corpus(path, engine.schema)
            source = path / "corpus.jsonl"
        else:
            id_key = "_id" if engine.schema.name == "documents" else None
            read = read_catalog(path, engine.schema, id_key=id_key)
            source = path
        err = _console(stderr=True)
        with _progress(err) as progress:
            task = progress.add_task(
                f"ingesting into {engine.schema.name!r}", total=len(read.records)
            )
            report = engine.ingest_file(
                source,
                batch_size=args.batch_size,
                read=read,
                on_progress=lambda n: progress.advance(task, n),
            )
        if args.json:
            sys.stdout.write(json.dumps(report.wire(), indent=2) + "\n")
        else:
            print_ingest(_console(), report)
    finally:
        engine.close()
    if args.strict and report.errors:
        return 1
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    from agentic_search_cli import evaluation as ev

    try:
        systems = ev.parse_systems(args.systems)
    except ValueError as exc:
        _usage_error(str(exc))
    try:
        ev.check_dataset(args.dataset, args.split)
    except ev.DatasetError as exc:
        _usage_error(str(exc))
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        _usage_error(f"--out {args.out} exists and is not a folder")
    needed = ["pytrec_eval"] + (["matplotlib"] if args.out is not None else [])
    for module in needed:
        try:
            __import__(module)
        except ImportError:
            sys.stderr.write(
                f"agentic-search: error: {module} is not installed: "
                "pip install 'agentic-search[eval]'\n"
            )
            return 1
    from agentic_search.config import Settings
    from agentic_search.engine import SearchEngine
    from agentic_search_cli.render import print_evaluation

    name = re.sub(r"[^a-z0-9-]+", "-", args.dataset.resolve().name.lower()).strip("-") or "dataset"
    prefix = args.collection_prefix if args.collection_prefix is not None else f"eval-{name}-"
    # No result cache: every system answers every query itself. Rules unless LLM=on is set:
    # the figures are reproducible and compare retrieval, not a remote model.
    engine = SearchEngine(
        Settings(collection_prefix=prefix, cache_backend="none", llm=_eval_llm()),
        domain="documents",
    )
    try:
        try:
            dataset = ev.load_beir(args.dataset, args.split, engine.schema).limit(args.max_queries)
        except ev.DatasetError as exc:
            _usage_error(str(exc))
        err = _console(stderr=True)
        if dataset.corpus.errors:
            err.print(
                f"[yellow]{len(dataset.corpus.errors)} corpus line(s) rejected, first: "
                f"{dataset.corpus.errors[0]}[/yellow]"
            )
        with _progress(err) as progress:
            ingest_task = None

            def ingest_start(n: int) -> None:
                nonlocal ingest_task
                ingest_task = progress.add_task(f"ingesting {dataset.name} corpus", total=n)

            def ingest_step(n: int) -> None:
                if ingest_task is not None:
                    progress.advance(ingest_task, n)

            sync = ev.ensure_corpus(engine, dataset, ingest_start, ingest_step)
            engine.embedder  # noqa: B018 - load the model before the warm-up and timing
            query_task = progress.add_task(
                f"querying ({len(dataset.queries)} queries x systems)", total=None
            )
            result = ev.evaluate(
                engine,
                dataset,
                systems,
                on_start=lambda n: progress.update(query_task, total=n),
                on_progress=lambda n: progress.advance(query_task, n),
                sync=sync,
            )
        if sync.removed:
            err.print(
                f"removed {sync.removed} document(s) not in the corpus from the evaluation "
                f"collection {engine.store.collection(engine.schema)!r}"
            )
        if args.out is not None:
            paths = ev.write_outputs(result, args.out)
            err.print("wrote " + ", ".join(str(p) for p in paths))
        if args.json:
            sys.stdout.write(json.dumps(result.summary(), ensure_ascii=False) + "\n")
        else:
            print_evaluation(_console(), result)
    finally:
        engine.close()
    return 0


# ----- bench (agentic-search bench) --------------------------------------------------------------


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number {text!r}: not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"invalid number {value}: must be at least 0")
    return value


def _add_bench_parser(sub) -> None:
    b = sub.add_parser(
        "bench",
        help="measure per-stage search latency, ingest and raw model throughput, import time",
        description=(
            "Benchmark on this machine and write bench.json and bench.md:\n"
            "  - search latency per stage (intent, plan, embed, dense, sparse, structured,\n"
            "    fusion, evidence, select, grade, hydrate, total) p50/p95/p99 over the golden\n"
            "    queries of the bundled catalog and the dataset's judged queries, after warm-up,\n"
            "    for the multi-round executor and the one-round executor;\n"
            "  - raw model throughput: one onnxruntime session, pre-tokenized length-sorted\n"
            "    fixed batches, non-padding tokens/s (the physical limit of ingest);\n"
            "  - ingest throughput of the dataset (or the bundled catalog) into a throwaway\n"
            "    collection: docs/s, tokens/s, their ratio to the raw tokens/s, peak RSS;\n"
            "  - import time of agentic_search.engine and each functions/*/app.py in fresh\n"
            "    interpreters."
        ),
        epilog=(
            "examples:\n"
            "  agentic-search bench\n"
            "  agentic-search bench --dataset ../shared/datasets/scifact --max-queries 100 "
            "--ingest-docs 1000\n"
            "  agentic-search bench --dataset DIR --no-golden --import-runs 1 --json\n"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    b.add_argument(
        "--dataset", type=Path, default=None, metavar="DIR", help="BEIR dataset folder (optional)"
    )
    b.add_argument("--split", default="test", help="qrels split: qrels/SPLIT.tsv (default test)")
    b.add_argument(
        "--max-queries",
        type=_positive_int,
        default=None,
        metavar="N",
        help="time only the first N judged queries of the dataset",
    )
    b.add_argument(
        "--warmup",
        type=_non_negative_int,
        default=5,
        metavar="N",
        help="untimed warm-up queries per query set and mode (default 5)",
    )
    b.add_argument(
        "--repeat",
        type=_positive_int,
        default=1,
        metavar="N",
        help="timed passes over each query set (default 1)",
    )
    b.add_argument(
        "--ingest-docs",
        type=_positive_int,
        default=None,
        metavar="N",
        help="ingest only the first N documents for the throughput figures (default all)",
    )
    b.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="folder for bench.json and bench.md (default benchmarks/bench)",
    )
    b.add_argument("--json", action="store_true", help="print the result as one JSON object")
    b.add_argument(
        "--collection-prefix",
        default=None,
        metavar="PREFIX",
        help="collection prefix of the dataset's index (default eval-<dataset>-, as eval)",
    )
    b.add_argument(
        "--import-runs",
        type=_positive_int,
        default=5,
        metavar="N",
        help="fresh interpreters per import timing, median reported (default 5)",
    )
    b.add_argument(
        "--no-golden", action="store_true", help="skip the golden queries of the bundled catalog"
    )


def _cmd_bench(args: argparse.Namespace) -> int:
    from agentic_search_cli import bench
    from agentic_search_cli import evaluation as ev

    if args.dataset is not None:
        try:
            ev.check_dataset(args.dataset, args.split)
        except ev.DatasetError as exc:
            _usage_error(str(exc))
    out = args.out if args.out is not None else bench.DEFAULT_OUT
    if out.exists() and not out.is_dir():
        _usage_error(f"--out {out} exists and is not a folder")
    from agentic_search.config import Settings
    from agentic_search.engine import SearchEngine

    config = bench.BenchConfig(
        dataset=args.dataset,
        split=args.split,
        max_queries=args.max_queries,
        warmup=args.warmup,
        repeat=args.repeat,
        ingest_docs=args.ingest_docs,
        golden=not args.no_golden,
        import_runs=args.import_runs,
    )
    settings = Settings()
    engine = None
    if args.dataset is not None:
        prefix = args.collection_prefix
        if prefix is None:
            prefix = bench.default_collection_prefix(args.dataset)
        settings = bench.without_cache(Settings(collection_prefix=prefix, llm=_eval_llm()))
        engine = SearchEngine(settings, domain="documents")
    try:
        err = _console(stderr=True)
        with _progress(err) as progress:

            def track(description: str, total: int | None):
                task = progress.add_task(description, total=total)
                return lambda n: progress.advance(task, n)

            try:
                result = bench.run_bench(config, settings, dataset_engine=engine, track=track)
            except ev.DatasetError as exc:
                _usage_error(str(exc))
        paths = bench.write_outputs(result, out)
        err.print("wrote " + ", ".join(str(p) for p in paths))
        if args.json:
            sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
        else:
            from rich.markdown import Markdown

            _console().print(Markdown(bench.to_markdown(result)))
    finally:
        if engine is not None:
            engine.close()
    return 0


# ----- end of bench ------------------------------------------------------------------------------


# ----- serve -------------------------------------------------------------------------------------


def _add_serve_parser(sub) -> None:
    v = sub.add_parser(
        "serve",
        help="serve the HTTP API locally (the deployed SearchApiFunction handler)",
        description=(
            "Serve POST /search, GET /health and GET /openapi.json on a local port. Each request\n"
            "becomes an API Gateway HTTP API (v2) event and goes through the same handler that\n"
            "template.yaml deploys, with the state machine replaced by the local runner.\n"
            "With the embedded Qdrant (local mode) searches run one at a time; set QDRANT_URL\n"
            "to serve concurrent searches from a Qdrant server."
        ),
        epilog=(
            "examples:\n"
            "  agentic-search serve --port 8080\n"
            '  curl -s -X POST localhost:8080/search -d \'{"query": "free code editor"}\'\n'
            "  curl -s localhost:8080/openapi.json\n"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    v.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    v.add_argument("--port", type=int, default=8080, help="port (default 8080; 0 picks a free one)")
    _add_llm_flag(v)


def _cmd_serve(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        _usage_error(f"--port {args.port}: must be between 0 and 65535")
    try:
        from agentic_search_cli.local_server import make_server
    except ImportError as exc:  # pragma: no cover - powertools is a core dependency
        sys.stderr.write(f"agentic-search: error: {exc}: pip install 'agentic-search'\n")
        return 1
    # Powertools' metrics go to CloudWatch in Lambda; locally they would only flood stdout.
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    from agentic_search_lambda.runtime import registry

    engine = registry()("tools")
    if engine.is_empty():
        err = _console(stderr=True)
        err.print("[dim]first use: ingesting the bundled catalog...[/dim]")
        engine.ensure_bundled_catalog()
    engine.warm_up()  # the first request does not pay the model load; no full-GC pauses
    server = make_server(args.host, args.port)
    host, port = server.server_address[:2]
    sys.stderr.write(f"agentic-search: serving on http://{host}:{port} (Ctrl-C to stop)\n")
    sys.stderr.flush()
    try:
        server.serve_forever()
    finally:
        server.server_close()
        registry().close()
    return 0


def _cmd_sync(args: argparse.Namespace) -> int:
    from agentic_search_cli.sync_cmd import run_sync

    if args.batch_size < 1:
        _usage_error("--batch-size must be at least 1")
    if args.events is not None and not args.events.is_file():
        _usage_error(f"no such file: {args.events}")
    engine = _engine(args.domain)
    try:
        return run_sync(args, engine)
    finally:
        engine.close()


# ----- end of serve ------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    warnings.filterwarnings("ignore", category=UserWarning)
    parser = build_parser()
    args = parser.parse_args(argv)
    from agentic_search.adapters.embedders import EmbedderError
    from agentic_search.adapters.qdrant.store import VectorStoreError

    _apply_llm_flag(args)
    try:
        if args.command == "search":
            return _cmd_search(args)
        if args.command == "eval":
            return _cmd_eval(args)
        if args.command == "bench":
            return _cmd_bench(args)
        if args.command == "serve":
            return _cmd_serve(args)
        if args.command == "sync":
            return _cmd_sync(args)
        return _cmd_ingest(args)
    except (VectorStoreError, EmbedderError, FileNotFoundError, OSError) as exc:
        sys.stderr.write(f"agentic-search: error: {exc}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("agentic-search: interrupted\n")
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
