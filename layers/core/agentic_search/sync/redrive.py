"""Redrive of failed catalog changes: backoff, the dead-letter queues, the due attempts.

Failed changes wait ``backoff_minutes(n)`` (1, 2, 4, 8 ... minutes, capped at 60) between
attempts; after :data:`MAX_ATTEMPTS` attempts they are parked as ``failed`` with the last error
until retried (:func:`agentic_search.sync.retries.retry_failed`). A record whose change cannot
be parsed is parked at once (:func:`agentic_search.sync.retries.park_rejected`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentic_search.components import Components
from agentic_search.ports import SyncStatusStore
from agentic_search.state.sync import SyncEntry
from agentic_search.sync.apply import apply_changes
from agentic_search.sync.changes import CatalogChange

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
    for c in changes:
        by_domain.setdefault(c.domain, []).append(c)
    n = 0
    for domain, group in by_domain.items():
        entries = status.get(domain, [c.record_id for c in group])
        updated: dict[str, SyncEntry] = {}
        for c in group:
            entry = updated.get(c.record_id) or entries.get(c.record_id)
            entry = (
                entry.model_copy(deep=True)
                if entry
                else SyncEntry(domain=domain, record_id=c.record_id)
            )
            applied = entry.applied_version
            if c.version is not None and applied is not None and c.version <= applied:
                continue
            pending = entry.change
            pending_version = pending.get("version") if pending else None
            if None not in (c.version, pending_version) and c.version < pending_version:  # type: ignore[operator]
                continue
            same = pending_version is not None and pending_version == c.version
            entry.change = c.wire()
            entry.status = "pending"
            # a new change gets fresh attempts; the same one keeps its count while scheduled
            entry.retry_count = entry.retry_count if same and entry.next_attempt_at else 0
            entry.next_attempt_at = now
            entry.last_error = entry.last_error or error
            entry.updated_at = now
            entry.expires_at = None
            updated[c.record_id] = entry
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
    c: Components,
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
    due = due_entries(status, c.schema.name, now, limit)
    if not due:
        return out
    changes = [
        CatalogChange.model_validate({**e.change, "source": "redrive"})  # type: ignore[dict-item]
        for e in due
    ]
    report = apply_changes(c, changes, status, clock=lambda: now)
    out.attempted = len(changes)
    failed = {o.change.record_id: o.error or "" for o in report.failed}
    if not failed:
        out.applied = len(changes)
        return out
    entries = status.get(c.schema.name, list(failed))
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
