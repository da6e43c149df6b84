"""Retries and the status the sync API shows: re-queueing parked failures (:func:`retry_report`,
:func:`retry_failed`), parking a record whose change could not be parsed (:func:`park_rejected`)
and the counts per status (:func:`status_summary`).

A parked entry holds the change to re-apply, except when the change itself was refused
(invalid record, unparsable event): retrying cannot fix that one, the next valid change of the
record does, so it is reported as skipped with the reason.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentic_search.ports import SyncStatusStore
from agentic_search.state.sync import SyncEntry


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
