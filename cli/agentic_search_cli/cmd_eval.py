"""``agentic-search eval``: every system on one index of a BEIR dataset, pytrec_eval metrics
and latency percentiles."""

from __future__ import annotations

import argparse
import contextlib
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
        help="evaluate bm25, dense, dense-record, hybrid RRF and the executor on a BEIR dataset",
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
            "  dense-record     the whole-record named vector alone (one vector per record\n"
            "                   over every text field, cosine only: the first baseline a\n"
            "                   user would try)\n"
            "  hybrid-rrf       dense + bm25 fused by plain RRF (k = 60)\n"
            "  executor-1round  intent, plan and executor, one round (`search --rounds 1`)\n"
            "  executor         the multi-round executor, MAX_ROUNDS at most (what `search` runs)\n"
            "  hybrid-rrf-qdrant  only when named: Qdrant's own RRF of a dense and a sparse\n"
            "                   prefetch (the engine's own fusion, one call)\n\n"
            "Your own domain (--domain NAME|FILE.yaml): DIR holds your judged queries\n"
            '(queries.jsonl: {"_id", "text"} a line, optionally "type"; qrels/SPLIT.tsv:\n'
            "query-id, record id, grade) and the systems search the domain's own index as it\n"
            "is (nothing written), or, with --catalog FILE, an evaluation collection made to\n"
            "hold exactly that catalog. `agentic-search calibrate` proposes its quality:\n"
            "thresholds from tuning queries."
        ),
        epilog=(
            "examples:\n"
            "  agentic-search eval --dataset datasets/scifact\n"
            "  agentic-search eval --dataset datasets/scifact --json "
            "--out benchmarks/scifact\n"
            "  agentic-search eval --dataset DIR --systems bm25,dense --max-queries 50\n"
            "  agentic-search eval --dataset benchmarks/tools_queries --split tuning,heldout\n"
            "  agentic-search eval --domain npm.yaml --dataset my-queries --split heldout\n"
            "  agentic-search eval --domain npm --catalog npm.jsonl --dataset my-queries\n"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    e.add_argument("--dataset", type=Path, required=True, metavar="DIR", help="BEIR dataset folder")
    add_domain_args(e)
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
            "comma-separated systems (default all: bm25,dense,dense-record,hybrid-rrf,"
            "executor-1round,executor)"
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
        help="write into DIR: results.json (every figure, per query too), runs/ (a TREC run "
        "file per system) and three PNG plots: quality_vs_latency.png (nDCG@10 against p95 "
        "latency), latency.png (p50/p95/p99) and metrics.png (every metric per system)",
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


def add_domain_args(p: argparse.ArgumentParser) -> None:
    """``--domain`` and ``--catalog`` of ``eval`` and ``calibrate``."""
    p.add_argument(
        "--domain",
        default=None,
        metavar="NAME|FILE.yaml",
        help="evaluate your own domain (a registered name or its schema YAML) on the judged "
        "queries of --dataset: its own index as it is, or --catalog's",
    )
    p.add_argument(
        "--catalog",
        type=Path,
        default=None,
        metavar="FILE",
        help="with --domain: the catalog (.jsonl, .json, .csv) an evaluation collection is "
        "made to hold exactly (default: the domain's own index, searched as it is)",
    )


def needs(*modules: str) -> bool:
    """Whether ``modules`` import; the first that does not is named on stderr."""
    for module in modules:
        try:
            __import__(module)
        except ImportError:
            sys.stderr.write(
                f"agentic-search: error: {module} is not installed: "
                "pip install 'agentic-search[eval]'\n"
            )
            return False
    return True


def open_evaluation(args: argparse.Namespace) -> tuple[Any, Any, bool]:
    """The service, the judged queries (``args.max_queries`` at most) and whether the index
    is searched as it is (``--domain`` without ``--catalog``) of ``eval`` / ``calibrate``.
    No result cache (every system answers every query itself); rules unless ``LLM=on`` is
    set (the figures are reproducible and compare retrieval, not a remote model). An index
    searched as it is is read as a search reads it, beside a running ``serve`` too
    (:func:`~agentic_search_cli.serve_link.reader_settings`; the service's ``close`` deletes
    the copy).

    Raises:
        SystemExit: (2) for a dataset, domain or catalog that cannot be used.
    """
    from agentic_search.logic.schema import SchemaError
    from agentic_search.service import SearchService
    from agentic_search.sync.files import CatalogFormatError, CatalogRead, read_catalog
    from agentic_search.wiring import domain_schema
    from agentic_search_cli import evaluation as ev

    own = args.domain is not None
    if args.catalog is not None and not own:
        usage_error("--catalog goes with --domain")
    if args.catalog is not None and not args.catalog.is_file():
        usage_error(f"--catalog {args.catalog}: no such file")
    settings = settings_for()
    try:
        ev.check_dataset(args.dataset, args.split, corpus=not own)
        domain: Any = (
            domain_schema(settings, args.domain) if own else ev.dataset_domain(args.dataset)
        )
    except (ev.DatasetError, SchemaError) as exc:
        usage_error(str(exc))
    live = own and args.catalog is None
    name = re.sub(r"[^a-z0-9-]+", "-", args.dataset.resolve().name.lower()).strip("-") or "dataset"
    # one evaluation collection per local model: switching models never meets a mismatch
    # (EmbeddingGemma: one per graph and dimension, each its own identity)
    model = {"minilm": "", "e5-small": "e5-small-"}.get(
        settings.local_embedding_model, f"{settings.embedder_model}-"
    )
    prefix = args.collection_prefix
    if prefix is None:
        prefix = settings.collection_prefix if live else f"eval-{name}-{model}"
    chosen = settings_for(collection_prefix=prefix, cache_backend="none", llm=eval_llm())
    readers = contextlib.ExitStack()
    if live:  # the domain's own index, read as a search reads it (docs/concurrency.md)
        from agentic_search_cli.serve_link import ServeLinkError, reader_settings

        try:
            chosen = readers.enter_context(reader_settings(chosen, "eval"))
        except ServeLinkError as exc:
            readers.close()
            sys.stderr.write(f"agentic-search: error: {exc}\n")
            raise SystemExit(1) from None
    service = SearchService.create(chosen, domain)
    service.close = closing(service.close, readers.close)  # the copy goes with the service
    try:
        corpus = None
        if own:
            corpus = read_catalog(args.catalog, service.schema) if args.catalog else CatalogRead()
        if live and not service.deps.store.exists(service.schema):
            usage_error(
                f"domain {service.schema.name!r} has no index in {settings.store_location}: "
                "ingest its catalog first (`agentic-search ingest FILE --domain "
                f"{args.domain}`) or pass --catalog FILE"
            )
        dataset = ev.load_beir(args.dataset, args.split, service.schema, corpus)
    except (ev.DatasetError, CatalogFormatError) as exc:
        service.close()
        usage_error(str(exc))
    except SystemExit:
        service.close()
        raise
    return service, dataset.limit(args.max_queries), live


def closing(*steps: Any) -> Any:
    """A ``close`` that runs ``steps`` in order (the service, then its reader's copy)."""

    def close() -> None:
        for step in steps:
            step()

    return close


def sync_corpus(service: Any, dataset: Any, live: bool, progress: Any) -> Any:
    """Make the evaluation collection hold exactly the corpus (:func:`ensure_corpus`, with a
    progress task), or, for an index searched as it is, count what it holds; then load the
    model (before warm-up and timing). Warns of judged records the index does not hold."""
    from agentic_search_cli import evaluation as ev

    ingest_task = None

    def ingest_start(n: int) -> None:
        nonlocal ingest_task
        ingest_task = progress.add_task(f"ingesting {dataset.name} corpus", total=n)

    def ingest_step(n: int) -> None:
        if ingest_task is not None:
            progress.advance(ingest_task, n)

    if live:
        held = ev.indexed_ids(service)
        sync = ev.CorpusSync(documents=len(held), rejected_lines=0, ingested=False)
    else:
        sync = ev.ensure_corpus(service, dataset, ingest_start, ingest_step)
        held = dataset.corpus_ids
    judged = {d for rels in dataset.qrels.values() for d, grade in rels.items() if grade > 0}
    if missing := sorted(judged - held):
        console(stderr=True).print(
            f"[yellow]{len(missing)} judged record id(s) are not in the index (they count as "
            f"never found), e.g. {', '.join(missing[:3])}[/yellow]"
        )
    service.deps.embedder  # noqa: B018 - load the model before warm-up and timing
    return sync


def run(args: argparse.Namespace) -> int:
    """Run ``eval``; returns the exit code."""
    from agentic_search_cli import evaluation as ev

    try:
        systems = ev.parse_systems(args.systems)
    except ValueError as exc:
        usage_error(str(exc))
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        usage_error(f"--out {args.out} exists and is not a folder")
    if not needs("pytrec_eval", *(["matplotlib"] if args.out is not None else [])):
        return 1
    from agentic_search_cli.evaluation.table import print_evaluation

    service, dataset, live = open_evaluation(args)
    settings = service.settings
    try:
        err = console(stderr=True)
        if dataset.corpus.errors:
            err.print(
                f"[yellow]{len(dataset.corpus.errors)} corpus line(s) rejected, first: "
                f"{dataset.corpus.errors[0]}[/yellow]"
            )
        with progress_bar(err) as progress:
            sync = sync_corpus(service, dataset, live, progress)
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
