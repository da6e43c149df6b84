"""``agentic-search sync``: apply catalog change events to the embedded index (the CLI's part of
:mod:`agentic_search.sync`; :mod:`agentic_search_cli.main` registers it)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_search_cli.common import open_service, progress_bar, usage_error

if TYPE_CHECKING:
    from agentic_search.dependencies import Dependencies

DESCRIPTION = """\
Apply catalog change events to the domain's index, the way the deployed CatalogSync
function does: per record only the newest change counts, a change not newer than the version
already applied is skipped (replaying a file changes nothing), only the aspects whose content
hash changed are re-embedded, payload-only changes embed nothing, and removes delete the point.

EVENTS.json may hold:
  * a DynamoDB stream batch      {"Records": [{"eventName": "INSERT", "dynamodb": {...}}, ...]}
  * one EventBridge event        {"detail-type": "catalog.changed", "detail": {"operation":
                                  "modify", "recordId": "cursor", "version": 7, "record": {...}}}
  * a JSON list mixing them, or JSON Lines (one record or event per line)

A record that cannot be parsed is rejected: reported with its position (item N of a JSON
document or line N of JSON Lines, both counted from 1) and its id, and the others are still
applied (as `ingest` does: exit 0 unless --strict). A change that fails (embedder or store
error) is left pending in the sync status ($AGENTIC_SEARCH_HOME/sync.sqlite); `--redrive`
retries the pending ones that are due (backoff 1, 2, 4, 8 minutes; parked after 5 attempts),
`--retry-failed` re-queues the parked ones first and says why any cannot be (a refused
change: only a valid new one syncs it). With an enricher (ENRICH=local|bedrock|openai),
`--redrive` also asks again for the records whose enrichment failed, with the same backoff
and parking (`--retry-failed` unparks them too). While `agentic-search serve` runs over the folder,
the command hands all this to it (it holds the index) and prints the same summary.
"""

EPILOG = """\
examples:
  agentic-search sync events/sync/stream_mixed_batch.json   # its item 4 is malformed on
                                                            # purpose: rejected, the rest applied
  agentic-search sync events/sync/eventbridge_modify.json --json
  agentic-search sync changes.jsonl --batch-size 200
  agentic-search sync --redrive --retry-failed
  agentic-search sync --status

exit codes: 0 every valid change applied or skipped as already applied (rejected records are
listed on stderr and counted in the summary); 1 a change failed and is left pending, or a
record was rejected with --strict; 2 a usage error.
"""


def add_parser(sub: Any) -> None:
    """Register ``sync`` on the CLI's subparsers."""
    p = sub.add_parser(
        "sync",
        help="apply DynamoDB stream / EventBridge catalog change events to the index",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("events", type=Path, nargs="?", metavar="EVENTS.json", help="events file")
    p.add_argument(
        "--domain", default="tools", help="domain name or schema YAML path (default tools)"
    )
    p.add_argument(
        "--batch-size", type=int, default=64, help="changes per write batch (default 64)"
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--strict", action="store_true", help="exit 1 when any record was rejected")
    p.add_argument(
        "--redrive",
        action="store_true",
        help="then retry the pending changes that are due, and the enrichments that failed",
    )
    p.add_argument(
        "--retry-failed",
        action="store_true",
        help="re-queue the changes parked as failed (with --redrive: retry them now)",
    )
    p.add_argument("--status", action="store_true", help="print the sync status counts")


def _read_items(path: Path) -> list[tuple[str, Any]]:
    """(position label, item) pairs: JSON documents by item index, JSON Lines by line."""
    from agentic_search.sync.events import event_items
    from agentic_search.sync.files import json_error

    text = path.read_text(encoding="utf-8-sig")  # a byte-order mark is skipped
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        out: list[tuple[str, Any]] = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                out.append((f"line {number}", ValueError(f"malformed JSON: {json_error(exc)}")))
                continue
            for item in event_items(value):
                out.append((f"line {number}", item))
        return out
    return [(f"item {i}", item) for i, item in enumerate(event_items(document), start=1)]


def run(args: argparse.Namespace) -> int:
    """Run ``sync``; returns the exit code (1 when a change failed, or with ``--strict`` was
    rejected). While
    ``serve`` holds the index, the changes are handed to it (:mod:`~agentic_search_cli.
    serve_link`)."""
    from agentic_search_cli import serve_link

    if args.batch_size < 1:
        usage_error("--batch-size must be at least 1")
    if args.events is not None and not args.events.is_file():
        usage_error(f"no such file: {args.events}")
    if served := serve_link.serving(args.domain):
        info, name, fingerprint = served
        what = f"syncing into {name!r}" if args.events is not None else None
        body = {**serve_link.sync_body(args), "domain": name, "schemaFingerprint": fingerprint}
        done = serve_link.follow(info, "/_local/sync", body, what)
        return print_summary(args, done["summary"])
    service = open_service(args.domain)
    try:
        return run_sync(args, service.deps)
    finally:
        service.close()


def run_sync(args: argparse.Namespace, deps: Dependencies) -> int:
    """The ``sync`` command over one domain's dependencies; returns the exit code."""
    if args.events is None:  # nothing to apply: no progress bar
        return print_summary(args, sync_summary(args, deps))
    from rich.console import Console

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    with progress_bar(err) as progress:
        task = progress.add_task(f"syncing into {deps.schema.name!r}", total=None)
        summary = sync_summary(
            args,
            deps,
            on_total=lambda n: progress.update(task, total=n),
            on_progress=lambda n: progress.advance(task, n),
        )
    return print_summary(args, summary)


def sync_summary(
    args: argparse.Namespace,
    deps: Dependencies,
    on_total: Callable[[int], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Apply the ``sync`` command's changes (``args``: events, batch_size, redrive,
    retry_failed, status) to one domain; returns the JSON summary (``domain``, ``changes``,
    ``problems``: the rejected or failed changes with their position and ``kind``
    ("rejected": unparseable, "failed": left pending), ``requeued``,
    ``redrive``, ``status``). ``on_total(n)`` gets the number of changes to apply,
    ``on_progress(n)`` each batch's."""
    from agentic_search.sync.apply import SyncReport, apply_changes
    from agentic_search.sync.changes import ChangeError
    from agentic_search.sync.events import parse_change, rejected_record_id
    from agentic_search.sync.redrive import park_rejected, redrive_due, retry_report, status_summary

    status = deps.sync_status
    schema = deps.schema
    summary: dict[str, Any] = {"domain": schema.name}
    rejected: list[dict[str, Any]] = []
    total = SyncReport()
    if args.events is not None:
        # the writer first: a refused sync journals (and parks) nothing
        deps.store.acquire_writer(schema)
        changes, positions = [], []
        for where, item in _read_items(args.events):
            try:
                if isinstance(item, Exception):
                    raise ChangeError(str(item))
                changes.append(parse_change(item, schema))
                positions.append(where)
            except ChangeError as exc:
                rid = rejected_record_id(item, schema)
                rejected.append({"at": where, "id": rid, "reason": str(exc), "kind": "rejected"})
                if rid is not None:  # as CatalogSync does: parked, the next valid change fixes it
                    park_rejected(status, schema.name, rid, f"rejected: {exc}")
        if on_total:
            on_total(len(changes))
        for i in range(0, len(changes), args.batch_size):
            batch = changes[i : i + args.batch_size]
            # journaled: a batch cut short is completed by the next command
            deps.journal.begin(
                schema.name,
                {
                    "op": "sync",
                    "changes": [ch.wire() for ch in batch],
                    "startedAt": time.time(),
                },
            )
            report = apply_changes(deps, batch, status)
            deps.journal.finish(schema.name)
            total.outcomes += report.outcomes
            total.stats.add(report.stats)
            total.seconds += report.seconds
            total.catalog_version = report.catalog_version or total.catalog_version
            if on_progress:
                on_progress(len(batch))
        where_of = {id(c): w for c, w in zip(changes, positions, strict=True)}
        summary["changes"] = total.wire()
        for o in total.failed:
            o_at = where_of.get(id(o.change), "?")
            rejected.append(
                {"at": o_at, "id": o.change.record_id, "reason": o.error, "kind": "failed"}
            )
        summary["problems"] = rejected
    if args.retry_failed:
        retried = retry_report(status, schema.name)
        summary["requeued"] = retried.queued
        summary["notRequeued"] = retried.skipped
        from agentic_search.sync.enrich_redrive import unpark_enrichment

        summary["enrichmentRequeued"] = unpark_enrichment(deps)
    if args.redrive:
        from agentic_search.sync.enrich_redrive import redrive_enrichment

        summary["redrive"] = redrive_due(deps, status).wire()
        summary["redrive"]["enrichment"] = redrive_enrichment(deps, status).wire()
    if args.status or args.events is None:
        summary["status"] = status_summary(status, schema.name)
    return summary


def print_summary(args: argparse.Namespace, summary: dict[str, Any]) -> int:
    """Print a :func:`sync_summary` (``--json``: as JSON) and each problem on stderr; returns
    the exit code (1 when a change failed, or with ``--strict`` was rejected)."""
    # soft_wrap: a line naming a bad record stays one line (greppable), whatever the width
    from rich.console import Console

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    out = Console(highlight=False, soft_wrap=True)
    rejected = summary.get("problems", [])
    domain = summary["domain"]
    if args.json:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    else:
        if "changes" in summary:
            c = summary["changes"]
            kinds = ", ".join(f"{n} {k}" for k, n in sorted(c["outcomes"].items())) or "none"
            refused = sum(p.get("kind") == "rejected" for p in rejected)
            out.print(
                f"{c['changes']} changes in {c['seconds']:.2f} s: {kinds}; "
                f"{c['embeddedTexts']} texts embedded, {c['deleted']} deleted"
                + (f"; catalog version {c['catalogVersion']}" if c["catalogVersion"] else "")
                + (f"; {refused} record(s) rejected (listed on stderr)" if refused else "")
            )
        if "requeued" in summary:
            skipped = summary["notRequeued"]
            out.print(
                f"re-queued {len(summary['requeued'])} parked change(s)"
                + (f"; {len(skipped)} not re-queued:" if skipped else "")
            )
            for rid, why in skipped.items():
                out.print(f"  {rid}: {why}")
            if summary["enrichmentRequeued"]:
                out.print(f"unparked {len(summary['enrichmentRequeued'])} failed enrichment(s)")
        if "redrive" in summary:
            r = summary["redrive"]
            out.print(
                f"redrive: {r['attempted']} attempted, {r['applied']} applied, "
                f"{r['rescheduled']} rescheduled, {r['parked']} parked"
            )
            e = r["enrichment"]
            if e["attempted"] or e["skipped"]:
                out.print(
                    f"enrichment asked again: {e['attempted']} record(s), {e['enriched']} "
                    f"enriched, {e['rescheduled']} rescheduled, {e['parked']} parked"
                    + (f", {len(e['skipped'])} skipped" if e["skipped"] else "")
                )
        if "status" in summary:
            counts = summary["status"]["counts"]
            out.print(
                f"sync status of {domain!r}: " + ", ".join(f"{n} {k}" for k, n in counts.items())
            )
    for p in rejected:
        who = f" (id {p['id']!r})" if p["id"] else ""
        label = "rejected" if p.get("kind") == "rejected" else "error"
        err.print(f"[red]{label}[/red]: {p['at']}{who}: {p['reason']}", markup=True)
    failed = [p for p in rejected if p.get("kind") != "rejected"]
    return 1 if failed or (rejected and getattr(args, "strict", False)) else 0
