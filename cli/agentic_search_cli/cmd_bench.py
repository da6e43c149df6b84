"""``agentic-search bench``: per-stage search latency, raw model and ingest throughput, handler
import times."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from agentic_search_cli.common import (
    console,
    eval_llm,
    non_negative_int,
    positive_int,
    progress_bar,
    settings_for,
    usage_error,
)


def add_parser(sub: Any) -> None:
    """Register ``bench``."""
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
            "  - import time of agentic_search.service and each functions/*/app.py in fresh\n"
            "    interpreters."
        ),
        epilog=(
            "examples:\n"
            "  agentic-search bench\n"
            "  agentic-search bench --dataset datasets/scifact --max-queries 100 "
            "--ingest-docs 1000\n"
            "  agentic-search bench --dataset DIR --no-golden --import-runs 1 --json\n"
            "  agentic-search bench --list-suites\n"
            "  agentic-search bench --suite golden -- --runs 3\n"
            "\n"
            "--suite NAME runs one benchmark script of benchmarks/ instead (arguments after --\n"
            "go to the script) and writes benchmarks/NAME/RESULTS.md (or --out DIR/RESULTS.md)\n"
            "with the command, date, machine, load average, git commit and the script's output;\n"
            "a failing script leaves RESULTS.md as it was and exits with the script's code.\n"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    b.add_argument(
        "--dataset", type=Path, default=None, metavar="DIR", help="BEIR dataset folder (optional)"
    )
    b.add_argument("--split", default="test", help="qrels split: qrels/SPLIT.tsv (default test)")
    b.add_argument(
        "--max-queries",
        type=positive_int,
        default=None,
        metavar="N",
        help="time only the first N judged queries of the dataset",
    )
    b.add_argument(
        "--warmup",
        type=non_negative_int,
        default=5,
        metavar="N",
        help="untimed warm-up queries per query set and mode (default 5)",
    )
    b.add_argument(
        "--repeat",
        type=positive_int,
        default=1,
        metavar="N",
        help="timed passes over each query set (default 1)",
    )
    b.add_argument(
        "--ingest-docs",
        type=positive_int,
        default=None,
        metavar="N",
        help="ingest only the first N documents for the throughput figures (default all)",
    )
    b.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="folder for bench.json and bench.md (default benchmarks/bench); with --suite, "
        "the folder of RESULTS.md (default benchmarks/NAME)",
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
        type=positive_int,
        default=5,
        metavar="N",
        help="fresh interpreters per import timing, median reported (default 5)",
    )
    b.add_argument(
        "--no-golden", action="store_true", help="skip the golden queries of the bundled catalog"
    )
    b.add_argument(
        "--suite",
        default=None,
        metavar="NAME",
        help="run the named benchmark suite instead (--suite list: the suites)",
    )
    b.add_argument(
        "--list-suites", action="store_true", help="print the suites (name and description)"
    )
    b.add_argument(
        "script_args",
        nargs="*",
        metavar="-- ARGS",
        help="with --suite: arguments passed to the suite's script, after --",
    )


def run(args: argparse.Namespace) -> int:
    """Run ``bench``; returns the exit code."""
    if args.list_suites or args.suite is not None:
        return run_suite(args)
    if args.script_args:
        usage_error("arguments after -- go to a suite's script: give --suite NAME")
    from agentic_search_cli import bench
    from agentic_search_cli import evaluation as ev

    if args.dataset is not None:
        try:
            ev.check_dataset(args.dataset, args.split)
        except ev.DatasetError as exc:
            usage_error(str(exc))
    out = args.out if args.out is not None else bench.DEFAULT_OUT
    if out.exists() and not out.is_dir():
        usage_error(f"--out {out} exists and is not a folder")
    from agentic_search.service import SearchService

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
    settings = settings_for()
    service = None
    if args.dataset is not None:
        prefix = args.collection_prefix
        if prefix is None:
            prefix = bench.default_collection_prefix(args.dataset)
        settings = bench.without_cache(settings_for(collection_prefix=prefix, llm=eval_llm()))
        service = SearchService.create(settings, "documents")
    try:
        err = console(stderr=True)
        with progress_bar(err) as progress:

            def track(description: str, total: int | None):
                task = progress.add_task(description, total=total)
                return lambda n: progress.advance(task, n)

            try:
                result = bench.run_bench(config, settings, dataset_engine=service, track=track)
            except ev.DatasetError as exc:
                usage_error(str(exc))
        paths = bench.write_outputs(result, out)
        err.print("wrote " + ", ".join(str(p) for p in paths))
        if args.json:
            sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
        elif (out_console := console()).is_terminal:
            from rich.markdown import Markdown

            out_console.print(Markdown(bench.to_markdown(result)))
        else:  # piped: the Markdown itself, every table row whole
            sys.stdout.write(bench.to_markdown(result).rstrip("\n") + "\n")
    finally:
        if service is not None:
            service.close()
    return 0


#: The whole-stage bench's own options and their defaults (with --suite, none may be given).
_STAGE_DEFAULTS: tuple[tuple[str, Any], ...] = (
    ("dataset", None),
    ("split", "test"),
    ("max_queries", None),
    ("warmup", 5),
    ("repeat", 1),
    ("ingest_docs", None),
    ("json", False),
    ("collection_prefix", None),
    ("import_runs", 5),
    ("no_golden", False),
)


def run_suite(args: argparse.Namespace) -> int:
    """``bench --suite NAME [-- ARGS]`` and ``bench --list-suites``; returns the exit code
    (2 for an unknown suite, the script's own code when it fails)."""
    import shlex

    from agentic_search_cli.bench import suites

    if args.list_suites or args.suite == "list":
        sys.stdout.write(suites.list_suites())
        return 0
    given = [
        f"--{dest.replace('_', '-')}"
        for dest, default in _STAGE_DEFAULTS
        if getattr(args, dest) != default
    ]
    if given:
        usage_error(
            f"{', '.join(given)} is an option of the whole-stage bench: with --suite, give the "
            "script's own options after --"
        )
    err = console(stderr=True)
    try:
        suite = suites.get_suite(args.suite)
        invocation = shlex.join(["agentic-search", "bench", "--suite", suite.name])
        if args.script_args:
            invocation += " -- " + shlex.join(args.script_args)
        _path, output = suites.run_suite(
            suite,
            args.script_args,
            out=args.out,
            invocation=invocation,
            say=lambda line: err.print(line, markup=False),
        )
    except suites.SuiteError as exc:
        sys.stderr.write(f"agentic-search: error: {exc}\n")
        return exc.code
    sys.stdout.write(output)
    return 0
