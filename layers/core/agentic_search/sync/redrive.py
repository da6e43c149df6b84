"""Failed catalog changes, in one place: what a dead-letter message holds, backoff and the due
attempts of the redrive, retries and parking, and the status counts the sync API shows.

- **Dead-letter messages** (:func:`dlq_message_items`): the three shapes a DLQ of the sync
  receives (the stream event source mapping's on-failure record, Lambda's asynchronous
  on-failure record, an EventBridge rule's DLQ message).
- **Redrive** (:func:`enqueue_failed`, :func:`redrive_due`): failed changes wait
  ``backoff_minutes(n)`` (1, 2, 4, 8 ... minutes, capped at 60) between attempts; after
  :data:`MAX_ATTEMPTS` attempts they are parked as ``failed`` with the last error until
  retried.
- **Retries and parking** (:func:`retry_report`, :func:`retry_failed`,
  :func:`park_rejected`, :func:`status_summary`): re-queueing parked failures; a record whose
  change cannot be parsed is parked at once. A parked entry holds the change to re-apply,
  except when the change itself was refused (invalid record, unparsable event): retrying
  cannot fix that one, the next valid change of the record does, so it is reported as skipped
  with the reason.

The Lambda glue (draining the queues, reading stream ranges back) is
:mod:`agentic_search_lambda.redrive`; the CLI's is ``agentic-search sync --redrive``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentic_search.ports import SyncStatusStore
from agentic_search.sync.changes import CatalogChange
from agentic_search.sync.events import event_items
from agentic_search.wire.sync import SyncEntry

if TYPE_CHECKING:
    from agentic_search.dependencies import Dependencies


@dataclass(frozen=True)
class StreamRange:
    """A stream batch the Lambda event source mapping gave up on (its on-failure record)."""

    stream_arn: str
    shard_id: str
    start: str
    end: str
    size: int


def dlq_message_items(body: Any) -> tuple[list[Any], StreamRange | None, str]:
    """What a dead-letter message holds: ``(stream records or events, stream range, error)``.

    Three shapes: the event source mapping's on-failure record (``DDBStreamBatchInfo``: only
    the range; the records must be read from the stream), Lambda's asynchronous on-failure
    record (``requestPayload`` = the EventBridge event), and an EventBridge rule's DLQ message
    (the event itself).
    """
    if not isinstance(body, dict):
        return [], None, "dead-letter message is not a JSON object"
    context = body.get("requestContext") or {}
    condition = context.get("condition") or "Unknown"
    if "DDBStreamBatchInfo" in body:
        info = body["DDBStreamBatchInfo"]
        rng = StreamRange(
            stream_arn=info["streamArn"],
            shard_id=info["shardId"],
            start=str(info["startSequenceNumber"]),
            end=str(info["endSequenceNumber"]),
            size=int(info.get("batchSize") or 0),
        )
        return [], rng, f"stream batch failed ({condition})"
    if "requestPayload" in body:
        payload = body.get("responsePayload") or {}
        message = payload.get("errorMessage") if isinstance(payload, dict) else None
        error = f"{condition}: {message}" if message else f"invocation failed ({condition})"
        return event_items(body["requestPayload"]), None, error
    return [body], None, "event delivery failed"


#: Attempts of a failed change through the redrive before it is parked as failed.
MAX_ATTEMPTS = 5
#: Longest wait between two attempts (minutes).
MAX_BACKOFF_MINUTES = 60
#: A pending entry without a scheduled attempt (its Lambda retries never reached the DLQ, e.g.
#: a lost on-failure message) is picked up by the redrive after this long (s).
ORPHAN_GRACE_S = 15 * 60


def backoff_minutes(attempt: int) -> int:
    """Minutes to wait after failed attempt ``attempt`` (1-based): 1, 2, 4, 8 ... capped at 60.

    Raises:
        ValueError: for an attempt below 1.
    """
    if attempt < 1:
        raise ValueError(f"attempt must be at least 1, got {attempt}")
    return min(2 ** (attempt - 1), MAX_BACKOFF_MINUTES)


def enqueue_failed(
    status: SyncStatusStore,
    changes: Sequence[CatalogChange],
    error: str,
    clock: Callable[[], float] = time.time,
) -> int:
    """Hand changes taken from a dead-letter queue to the redrive: each becomes its record's
    pending change, due now, unless the status store already holds that version or a newer
    pending one. Returns how many records were queued.

    Raises:
        SyncStatusError: when the store fails.
    """
    now = clock()
    by_domain: dict[str, list[CatalogChange]] = {}
    for ch in changes:
        by_domain.setdefault(ch.domain, []).append(ch)
    n = 0
    for domain, group in by_domain.items():
        entries = status.get(domain, [ch.record_id for ch in group])
        updated: dict[str, SyncEntry] = {}
        for ch in group:
            entry = updated.get(ch.record_id) or entries.get(ch.record_id)
            entry = (
                entry.model_copy(deep=True)
                if entry
                else SyncEntry(domain=domain, record_id=ch.record_id)
            )
            applied = entry.applied_version
            if ch.version is not None and applied is not None and ch.version <= applied:
                continue
            pending = entry.change
            pending_version = pending.get("version") if pending else None
            if None not in (ch.version, pending_version) and ch.version < pending_version:  # type: ignore[operator]
                continue
            same = pending_version is not None and pending_version == ch.version
            entry.change = ch.wire()
            entry.status = "pending"
            # a new change gets fresh attempts; the same one keeps its count while scheduled
            entry.retry_count = entry.retry_count if same and entry.next_attempt_at else 0
            entry.next_attempt_at = now
            entry.last_error = entry.last_error or error
            entry.updated_at = now
            entry.expires_at = None
            updated[ch.record_id] = entry
        if updated:
            status.put(updated.values())
        n += len(updated)
    return n


@dataclass
class RedriveReport:
    """One redrive pass: changes attempted, applied, rescheduled and parked."""

    attempted: int = 0
    applied: int = 0
    rescheduled: int = 0
    parked: int = 0
    errors: dict[str, str] = field(default_factory=dict)

    def wire(self) -> dict[str, Any]:
        """JSON-able summary."""
        return {
            "attempted": self.attempted,
            "applied": self.applied,
            "rescheduled": self.rescheduled,
            "parked": self.parked,
            "errors": self.errors,
        }


def due_entries(
    status: SyncStatusStore, domain: str, now: float, limit: int = 500
) -> list[SyncEntry]:
    """Pending entries whose next attempt is due (or orphans older than the grace period)."""
    out = []
    for e in status.list(domain, "pending", limit=limit):
        if e.change is None:
            continue
        due_at = e.next_attempt_at
        if due_at is None:
            due_at = e.updated_at + ORPHAN_GRACE_S
        if due_at <= now:
            out.append(e)
    return out


def redrive_due(
    deps: Dependencies,
    status: SyncStatusStore,
    clock: Callable[[], float] = time.time,
    limit: int = 500,
) -> RedriveReport:
    """Re-apply every due pending change (one batch); a failure waits
    ``backoff_minutes(attempt)`` for the next attempt, and after :data:`MAX_ATTEMPTS` attempts
    the entry is parked as ``failed`` with the last error.

    Raises:
        SyncStatusError: when the store fails.
    """
    out = RedriveReport()
    now = clock()
    due = due_entries(status, deps.schema.name, now, limit)
    if not due:
        return out
    changes = [
        CatalogChange.model_validate({**e.change, "source": "redrive"})  # type: ignore[dict-item]
        for e in due
    ]
    from agentic_search.sync.apply import apply_changes  # the write path: only when applying

    report = apply_changes(deps, changes, status, clock=lambda: now)
    out.attempted = len(changes)
    failed = {o.change.record_id: o.error or "" for o in report.failed}
    if not failed:
        out.applied = len(changes)
        return out
    entries = status.get(deps.schema.name, list(failed))
    for rid, entry in entries.items():
        entry.retry_count += 1
        entry.last_error = failed[rid]
        if entry.retry_count >= MAX_ATTEMPTS:
            entry.status = "failed"
            entry.next_attempt_at = None
            for a in entry.aspects.values():
                if a.status == "pending":
                    a.status = "failed"
            out.parked += 1
        else:
            entry.status = "pending"
            entry.next_attempt_at = now + 60 * backoff_minutes(entry.retry_count)
            out.rescheduled += 1
        out.errors[rid] = failed[rid]
    status.put(entries.values())
    out.applied = len(changes) - len(failed)
    return out


def dumps(obj: Any) -> str:
    """Compact JSON (for queue messages and logs)."""
    return json.dumps(obj, separators=(",", ":"), default=str)


@dataclass
class RetryReport:
    """What a retry did: ``queued`` record ids (pending, due now), ``skipped`` (id -> why it
    cannot be retried) and ``missing`` ids (no sync entry at all)."""

    queued: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)

    def wire(self) -> dict[str, Any]:
        """As JSON: ``{"queued", "skipped", "missing"}``."""
        return {"queued": self.queued, "skipped": self.skipped, "missing": self.missing}


def retry_report(
    status: SyncStatusStore,
    domain: str,
    record_ids: Sequence[str] | None = None,
    clock: Callable[[], float] = time.time,
) -> RetryReport:
    """Make failed (parked) entries — those of ``record_ids``, or all when None — pending and
    due now with a fresh attempt count; pending ones become due now. An entry without a change
    to re-apply (its change was refused) or already synced is skipped, with the reason.

    Raises:
        SyncStatusError: when the store fails.
    """
    now = clock()
    report = RetryReport()
    if record_ids is None:
        entries = status.list(domain, "failed", limit=10_000)
    else:
        found = status.get(domain, record_ids)
        report.missing = [rid for rid in record_ids if rid not in found]
        entries = list(found.values())
    queued = []
    for e in entries:
        if e.status == "synced":
            report.skipped[e.record_id] = "already synced: nothing to retry"
            continue
        if e.change is None:
            why = e.last_error or "its change was refused"
            report.skipped[e.record_id] = (
                f"no change to re-apply ({why}); send a valid change of the record to sync it"
            )
            continue
        e.status = "pending"
        e.retry_count = 0
        e.next_attempt_at = now
        for a in e.aspects.values():
            if a.status == "failed":
                a.status = "pending"
        queued.append(e)
    if queued:
        status.put(queued)
    report.queued = [e.record_id for e in queued]
    return report


def retry_failed(
    status: SyncStatusStore,
    domain: str,
    record_ids: Sequence[str] | None = None,
    clock: Callable[[], float] = time.time,
) -> list[str]:
    """The record ids :func:`retry_report` queued (the others are left alone).

    Raises:
        SyncStatusError: when the store fails.
    """
    return retry_report(status, domain, record_ids, clock).queued


def status_summary(status: SyncStatusStore, domain: str) -> dict[str, Any]:
    """``GET /sync/status``: counts per status and whether everything is synced."""
    counts = status.counts(domain)
    return {
        "domain": domain,
        "counts": counts,
        "healthy": counts.get("pending", 0) == 0 and counts.get("failed", 0) == 0,
    }


def park_rejected(
    status: SyncStatusStore,
    domain: str,
    record_id: str,
    error: str,
    clock: Callable[[], float] = time.time,
) -> None:
    """Mark a record whose change could not be parsed as ``failed`` with ``error`` (nothing to
    retry: the next valid change of the record syncs it). Its applied version is kept.

    Raises:
        SyncStatusError: when the store fails.
    """
    now = clock()
    entry = status.get(domain, [record_id]).get(record_id) or SyncEntry(
        domain=domain, record_id=record_id
    )
    entry.status = "failed"
    entry.last_error = error[:500]
    entry.next_attempt_at = None
    entry.updated_at = now
    entry.expires_at = None
    status.put([entry])
