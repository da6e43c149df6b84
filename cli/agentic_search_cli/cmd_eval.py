"""``agentic-search eval``: every system on one index of a BEIR dataset, pytrec_eval metrics
and latency percentiles."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from agentic_search_cli.common import (
    add_embedder_flag,
    console,
    eval_llm,
    positive_int,
    progress_bar,
    settings_for,
    usage_error,
)


def add_parser(sub: Any) -> None:
    """Register ``eval``."""
    e = sub.add_parser(
        "eval",
        help="evaluate bm25, dense, hybrid RRF and the executor on a BEIR dataset",
        description=(
            "Ingest a BEIR-layout dataset (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv) into\n"
            "the 'documents' domain when needed, run every system on the same index and the\n"
            "judged queries of the split, and report nDCG@10, Recall@5/10/100, MRR@10\n"
            "(pytrec_eval) and latency p50/p95/p99 per system (top 100 each). A folder with a\n"
            "dataset.json naming a bundled catalog (benchmarks/tools_queries) is evaluated on\n"
            "that catalog, and its unanswerable queries are scored for abstention.\n\n"
            "systems:\n"
            "  bm25             the keyword index alone\n"
            "  dense            the 'content' named vector alone\n"
            "  hybrid-rrf       dense + bm25 fused by plain RRF (k = 60)\n"
            "  executor-1round  intent, plan and executor, one round (`search --rounds 1`)\n"
            "  executor         the multi-round executor, MAX_ROUNDS at most (what `search` runs)\n"
            "  hybrid-rrf-qdrant  only when named: Qdrant's own RRF of a dense and a sparse\n"
            "                   prefetch (the engine's own fusion, one call)"
        ),
        epilog=(
            "examples:\n"
            "  agentic-search eval --dataset datasets/scifact\n"
            "  agentic-search eval --dataset datasets/scifact --json "
            "--out benchmarks/scifact\n"
            "  agentic-search eval --dataset DIR --systems bm25,dense --max-queries 50\n"
            "  agentic-search eval --dataset benchmarks/tools_queries --split tuning,heldout\n"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    e.add_argument("--dataset", type=Path, required=True, metavar="DIR", help="BEIR dataset folder")
    e.add_argument(
        "--split",
        default="test",
        help=(
            "qrels split: qrels/SPLIT.tsv (default test); several, comma-separated "
            "(tuning,heldout), are evaluated together and reported per split"
        ),
    )
    e.add_argument(
        "--systems",
        default=None,
        metavar="LIST",
        help=(
            "comma-separated systems (default all: bm25,dense,hybrid-rrf,executor-1round,executor)"
        ),
    )
    e.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    add_embedder_flag(e)
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
        "--allow-errors",
        action="store_true",
        help="exit 0 even when a system failed on some queries (by default such a run exits "
        "1: each failed query scores 0, so its figures are not the system's)",
    )
    e.add_argument(
        "--max-queries",
        type=positive_int,
        default=None,
        metavar="N",
        help="evaluate only the first N judged queries",
    )


def run(args: argparse.Namespace) -> int:
    """Run ``eval``; returns the exit code."""
    from agentic_search_cli import evaluation as ev

    try:
        systems = ev.parse_systems(args.systems)
    except ValueError as exc:
        usage_error(str(exc))
    try:
        ev.check_dataset(args.dataset, args.split)
        domain = ev.dataset_domain(args.dataset)
    except ev.DatasetError as exc:
        usage_error(str(exc))
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        usage_error(f"--out {args.out} exists and is not a folder")
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
    from agentic_search.service import SearchService
    from agentic_search_cli.evaluation.table import print_evaluation

    name = re.sub(r"[^a-z0-9-]+", "-", args.dataset.resolve().name.lower()).strip("-") or "dataset"
    settings = settings_for()
    # one evaluation collection per local model: switching models never meets a mismatch
    # (EmbeddingGemma: one per graph and dimension, each its own identity)
    model = {"minilm": "", "e5-small": "e5-small-"}.get(
        settings.local_embedding_model, f"{settings.embedder_model}-"
    )
    prefix = (
        args.collection_prefix if args.collection_prefix is not None else f"eval-{name}-{model}"
    )
    # No result cache: every system answers every query itself. Rules unless LLM=on is set:
    # the figures are reproducible and compare retrieval, not a remote model.
    service = SearchService.create(
        settings_for(collection_prefix=prefix, cache_backend="none", llm=eval_llm()),
        domain,
    )
    try:
        try:
            dataset = ev.load_beir(args.dataset, args.split, service.schema).limit(args.max_queries)
        except ev.DatasetError as exc:
            usage_error(str(exc))
        err = console(stderr=True)
        if dataset.corpus.errors:
            err.print(
                f"[yellow]{len(dataset.corpus.errors)} corpus line(s) rejected, first: "
                f"{dataset.corpus.errors[0]}[/yellow]"
            )
        with progress_bar(err) as progress:
            ingest_task = None

            def ingest_start(n: int) -> None:
                nonlocal ingest_task
                ingest_task = progress.add_task(f"ingesting {dataset.name} corpus", total=n)

            def ingest_step(n: int) -> None:
                if ingest_task is not None:
                    progress.advance(ingest_task, n)

            sync = ev.ensure_corpus(service, dataset, ingest_start, ingest_step)
            service.deps.embedder  # noqa: B018 - load the model before warm-up and timing
            query_task = progress.add_task(
                f"querying ({len(dataset.queries)} queries x systems)", total=None
            )
            result = ev.evaluate(
                service,
                dataset,
                systems,
                on_start=lambda n: progress.update(query_task, total=n),
                on_progress=lambda n: progress.advance(query_task, n),
                sync=sync,
            )
        if sync.removed:
            err.print(
                f"removed {sync.removed} document(s) not in the corpus from the evaluation "
                f"collection {service.deps.store.collection(service.schema)!r}"
            )
        if args.out is not None:
            paths = ev.write_outputs(result, args.out)
            err.print("wrote " + ", ".join(str(p) for p in paths))
        kept = ev.record_last(result, settings.agentic_search_home)
        err.print(f"kept as the last evaluation (serve's page shows it): {kept[0].parent}")
        if args.json:
            sys.stdout.write(json.dumps(result.summary(), ensure_ascii=False) + "\n")
            for name, s in result.systems.items():  # the table says it; a JSON run too
                if s.errors:
                    qid, error = next(iter(s.errors.items()))
                    err.print(
                        f"[yellow]{name}: {len(s.errors)} query(ies) with errors, "
                        f"e.g. {qid}: {error}[/yellow]",
                        markup=True,
                        highlight=False,
                    )
        else:
            print_evaluation(console(), result)
    finally:
        service.close()
    errored = {name: len(s.errors) for name, s in result.systems.items() if s.errors}
    if errored and not args.allow_errors:  # a failed query scores 0: the figures are not its
        counts = ", ".join(f"{name} {n}" for name, n in errored.items())
        sys.stderr.write(
            f"agentic-search: error: queries failed ({counts}; scored 0, listed in "
            "results.json with --out); rerun with --allow-errors to accept the figures\n"
        )
        return 1
    return 0
