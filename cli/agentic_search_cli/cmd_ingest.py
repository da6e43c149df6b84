"""``agentic-search ingest``: a JSONL catalog or a BEIR corpus into a domain's index."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from agentic_search_cli.common import (
    add_embedder_flag,
    console,
    open_service,
    progress_bar,
    usage_error,
)


def add_parser(sub: Any) -> None:
    """Register ``ingest``."""
    i = sub.add_parser(
        "ingest",
        help="ingest a JSONL catalog (or a BEIR dataset folder) into the index",
        description=(
            "Validate each record against the domain schema, embed each aspect and upsert into "
            "the domain's collection. Formats: JSON Lines (.jsonl), a JSON array (.json), CSV "
            "with the schema's field names as header (.csv; list fields separated by ';'); a "
            "UTF-8 BOM is skipped. Bad records are reported with their line (or item) number; "
            "the rest go in; blank lines are counted. Re-ingesting the same file changes "
            "nothing; changed records re-embed only the aspects whose content changed; records "
            "in the index but not in the file are listed (--prune deletes them; a record whose "
            "line was rejected is kept). An interrupted ingest is completed by the next command "
            "over the same folder; a refused one (another process writes the index, a prune "
            "refused) changes nothing.\n\n"
            "exit codes: 0 done; 1 a runtime failure (store, model), or a rejected record with "
            "--strict; 2 a usage error (no such file, unknown format, bad option)."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    i.add_argument(
        "path",
        type=Path,
        nargs="?",
        help="catalog file (.jsonl, .json array, .csv), or a BEIR dataset folder holding "
        "corpus.jsonl",
    )
    i.add_argument(
        "--domain",
        default=None,
        help="domain name or schema YAML path (default tools; a catalog of other fields needs "
        "its own: `agentic-search init-domain FILE` drafts one)",
    )
    i.add_argument(
        "--batch-size", type=int, default=64, help="records per write batch (default 64)"
    )
    i.add_argument("--json", action="store_true", help="print the ingest report as JSON")
    i.add_argument("--strict", action="store_true", help="exit 1 when any line was rejected")
    i.add_argument(
        "--prune",
        action="store_true",
        help="delete the records in the index that the file does not hold (the index then "
        "mirrors the file; without it they are listed and stay searchable). Refused (exit 1, "
        "nothing written) when no line of the file was accepted, or when it would delete more "
        "than half of the indexed records (unless --force)",
    )
    i.add_argument(
        "--force",
        action="store_true",
        help="with --prune, delete even when that is more than half of the indexed records",
    )
    i.add_argument(
        "--rebuild",
        action="store_true",
        help="the repair path: drop the domain's index (also one whose files cannot be read) "
        "and build it anew from the file (for tools, the bundled catalog when no file is "
        "given); an unreadable sync status is moved aside",
    )
    add_embedder_flag(i)
    i.add_argument(
        "--enrich",
        choices=("off", "local", "bedrock", "openai"),
        default=None,
        help="index-time LLM enrichment of the records (sets ENRICH for this command): the "
        "needs each catalog record answers, a situating sentence for each chunk of a long "
        "document. local = the model of `make llm`; bedrock = Bedrock Converse "
        "(ENRICH_MODEL); openai = the OpenAI-compatible API; off = none asked (answers kept "
        "from earlier runs and a bundled catalog's shipped ones still apply). Answers are "
        "kept as they come: a killed ingest resumes without asking again; a record whose "
        "enrichment fails (ENRICH_TIMEOUT_S, ENRICH_BUDGET_S) is indexed without it, listed, "
        "and asked again next time. docs/guides/enrichment.md",
    )
    i.add_argument(
        "--no-optimize",
        action="store_true",
        help="with Qdrant Edge (VECTOR_STORE=edge), skip building the HNSW indexes after a "
        "bulk ingest (searches then scan exactly; the next ingest builds them)",
    )
    i.add_argument(
        "--optimize-min-points",
        type=int,
        default=None,
        metavar="N",
        help="Qdrant Edge: build the HNSW indexes, in a worker process, when at least N points "
        "are outside one after the ingest (default 10000)",
    )


def foreign_fields(path: Path) -> list[str]:
    """The first record's fields (a CSV's header) when they are not a tools record's (fewer
    than half of the tools schema's required fields present), else []: such a file needs a
    domain of its own. A file that cannot be read is left to the ingest to report."""
    import csv
    import json

    from agentic_search.logic.schema import load_schema

    try:
        with path.open(encoding="utf-8-sig") as fh:
            if path.suffix.lower() == ".csv":
                keys = next(csv.reader(fh), [])
            else:
                first = next((line for line in fh if line.strip()), "")
                if first.lstrip().startswith("["):
                    return []
                keys = list(json.loads(first)) if first.strip() else []
    except (OSError, UnicodeDecodeError, ValueError, TypeError):
        return []
    schema = load_schema("tools")
    required = [n for n, f in schema.fields.items() if f.required]
    if not keys or 2 * sum(k in keys for k in required) >= len(required):
        return []
    return [k for k in keys if k not in schema.fields] or keys


def run(args: argparse.Namespace) -> int:
    """Run ``ingest``; returns the exit code (1 with ``--strict`` when a line was rejected)."""
    from agentic_search.sync.files import (
        CatalogFormatError,
        bundled_catalog_path,
        read_beir_corpus,
        read_catalog,
    )
    from agentic_search.sync.prune import PruneRefused
    from agentic_search_cli.render import print_ingest
    from agentic_search_cli.serve_link import serving

    path: Path | None = args.path
    if args.domain is None:
        if path is not None and path.is_file() and (fields := foreign_fields(path)):
            from agentic_search_cli.cmd_init_domain import domain_name

            usage_error(
                f"{path.name} has fields the tools schema does not ({', '.join(fields[:5])}) and "
                f"no --domain was given: draft a schema with `agentic-search init-domain "
                f"{path}`, then `agentic-search ingest {path} --domain {domain_name(path)}.yaml`"
            )
        args.domain = "tools"
    if args.batch_size < 1:
        usage_error("--batch-size must be at least 1")
    if args.optimize_min_points is not None and args.optimize_min_points < 1:
        usage_error("--optimize-min-points must be at least 1")
    if args.force and not args.prune:
        usage_error("--force goes with --prune")
    if path is None:
        if not (args.rebuild and args.domain == "tools"):
            usage_error("a catalog file is required (only `ingest --rebuild` of tools has one)")
        path = bundled_catalog_path()
    if not path.exists():
        usage_error(f"no such file or folder: {path}")
    if served := serving(args.domain):  # serve holds the index: it applies the write
        if getattr(args, "embedder", None) is not None:
            usage_error("--embedder needs serve stopped (serve embeds with its own model)")
        if args.enrich is not None:
            usage_error("--enrich needs serve stopped (serve writes with its own ENRICH)")
        from agentic_search_cli.serve_link import run_ingest

        return run_ingest(args, path, *served)
    if args.enrich is not None:  # before any Settings is made (the completion's too)
        os.environ["ENRICH"] = args.enrich
    # the repair path must open what an interrupted write's completion would fail on
    service = open_service(args.domain, recover=not args.rebuild)
    try:
        if path.is_dir():
            if not (path / "corpus.jsonl").is_file():
                usage_error(f"{path} is a folder without corpus.jsonl (BEIR layout expected)")
            read = read_beir_corpus(path, service.schema)
            source, id_key = path / "corpus.jsonl", "_id"
        else:
            id_key = "_id" if service.schema.name == "documents" else None
            try:
                read = read_catalog(path, service.schema, id_key=id_key)
            except CatalogFormatError as exc:
                usage_error(str(exc))
            source = path
        err = console(stderr=True)
        done = [0]

        def advance(n: int) -> None:
            done[0] += n
            progress.advance(task, n)

        enrich_task: list[Any] = []

        def enriched(n: int, total: int) -> None:  # one LLM answer (or failure) more
            if not enrich_task:
                model = getattr(service.deps.enricher, "model", "the LLM")
                enrich_task.append(progress.add_task(f"enriching with {model}", total=total))
            progress.advance(enrich_task[0], 1)

        try:
            with progress_bar(err) as progress:
                task = progress.add_task(
                    f"ingesting into {service.schema.name!r}", total=len(read.records)
                )
                if args.rebuild:
                    report, note = service.rebuild(
                        source.resolve(),
                        batch_size=args.batch_size,
                        on_progress=advance,
                        read=read,
                        id_key=id_key,
                        source="bundled" if args.path is None else None,
                    )
                    if note:
                        sys.stderr.write(f"agentic-search: {note}\n")
                else:
                    report = service.ingest_file(
                        source.resolve(),
                        batch_size=args.batch_size,
                        read=read,
                        on_progress=advance,
                        prune=args.prune,
                        force=args.force,
                        id_key=id_key,
                        on_enrich=enriched,
                    )
        except PruneRefused as exc:
            sys.stderr.write(f"agentic-search: error: {exc}\n")
            return 1
        except KeyboardInterrupt:
            sys.stderr.write(
                f"agentic-search: interrupted after {done[0]} of {len(read.records)} records: "
                "the index holds part of the file; the next agentic-search command over this "
                "folder completes the ingest (or run this one again)\n"
            )
            return 130
        if args.json:
            sys.stdout.write(json.dumps(report.wire(), indent=2) + "\n")
        else:
            print_ingest(console(), report)
        register(service)
        if not args.no_optimize and optimize_after_ingest(service, err, args.optimize_min_points):
            return 130
    finally:
        service.close()
    if args.strict and report.errors:
        return 1
    return 0


def register(service: Any) -> None:
    """Register the domain of a schema read from a YAML file in the home
    (:func:`~agentic_search.logic.schema.register_domain`), saying so on stderr when its copy
    is new or changed; a copy that cannot be written is a warning (the ingest is done)."""
    from agentic_search.logic.schema import DOMAINS_FOLDER, register_domain

    schema, home = service.schema, service.settings.agentic_search_home
    dest = home / DOMAINS_FOLDER / f"{schema.name}.yaml"
    before = dest.read_bytes() if dest.is_file() else None
    try:
        if register_domain(home, schema) is None or dest.read_bytes() == before:
            return
    except OSError as exc:
        sys.stderr.write(
            f"agentic-search: warning: domain {schema.name!r} not registered ({dest}: "
            f"{exc.strerror or exc}); name it by its YAML path\n"
        )
        return
    sys.stderr.write(
        f"agentic-search: registered domain {schema.name!r} ({dest}): `--domain "
        f"{schema.name}` names it, and `serve` serves it\n"
    )


def optimize_after_ingest(service: Any, err: Any, min_points: int | None = None) -> bool:
    """With Qdrant Edge, build the HNSW indexes of the domain's shard in a worker process when
    a bulk ingest left at least ``min_points`` points outside one, showing progress on ``err``
    ("optimizing <collection> ... done in X s"); searches of this process keep answering
    meanwhile (exactly). A failed optimize is a warning: the index is complete and is scanned
    exactly. Returns True when interrupted (Ctrl-C; the shard stays unoptimized)."""
    import time

    from agentic_search.wiring import build_maintenance
    from agentic_search_cli.progress import LINE_EVERY_S

    c = service.deps
    maintenance = build_maintenance(c.settings, c.store)
    if maintenance is None:
        return False
    threshold = min_points if min_points is not None else maintenance.MIN_POINTS
    if not maintenance.needs_optimize(c.schema, threshold):
        return False
    name = c.store.collection(c.schema)
    err.print(f"optimizing {name} (building HNSW indexes in a worker process) ...", markup=False)
    last = [time.monotonic()]

    def tick(elapsed: float) -> None:
        if time.monotonic() - last[0] >= LINE_EVERY_S:
            last[0] = time.monotonic()
            err.print(f"optimizing {name} ... {elapsed:.0f} s", markup=False)

    try:
        if err.is_terminal:
            with err.status(f"optimizing {name} ...") as status:
                result = maintenance.optimize(
                    c.schema,
                    on_tick=lambda s: status.update(f"optimizing {name} ... {s:.0f} s"),
                )
        else:
            result = maintenance.optimize(c.schema, on_tick=tick)
    except KeyboardInterrupt:
        sys.stderr.write(
            f"agentic-search: optimize of {name} interrupted: the index is complete and is "
            "searched exactly (slower); the next ingest builds the HNSW indexes\n"
        )
        return True
    if result.swapped:
        err.print(
            f"optimizing {name} ... done in {result.seconds:.1f} s "
            f"({result.indexed_vectors} vectors indexed, {result.points} points)",
            markup=False,
        )
    else:
        sys.stderr.write(
            f"agentic-search: warning: optimize of {name} not applied: {result.reason}; the "
            "index is complete and is searched exactly (slower)\n"
        )
    return False
