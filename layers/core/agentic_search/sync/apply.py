"""Applying a batch of catalog changes through the one writer (:class:`~agentic_search.sync.
indexer.Indexer`) and recording each outcome in the sync status.

Per record only the newest change counts; a change not newer than the version the status store
says is applied is skipped (``stale``, or ``duplicate`` when equal: replaying an event changes
nothing); upserts go through the Indexer in one batch (per-aspect SHA-256 hashes: only changed
aspects are re-embedded, payload-only changes embed nothing) and, when the batch fails, record
by record so that one bad record fails alone. The outcome of every change is reported; failures
are left ``pending`` in the status store with the change to re-apply.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentic_search.dependencies import Dependencies
from agentic_search.logic.schema import DomainSchema
from agentic_search.ports import SyncStatusStore
from agentic_search.sync.after_write import after_write
from agentic_search.sync.changes import CatalogChange, ChangeOp
from agentic_search.sync.enrich import EnrichReport, enrich_records
from agentic_search.sync.indexer import Indexer, WriteStats, content_hashes
from agentic_search.wire.sync import TOMBSTONE_TTL_S, AspectStatus, SyncEntry

Outcome = Literal["applied", "unchanged", "duplicate", "stale", "superseded", "failed"]


@dataclass
class ChangeOutcome:
    """What became of one change: ``applied`` (something written), ``unchanged`` (the index
    already held it), ``duplicate`` / ``stale`` (version already applied / older than applied),
    ``superseded`` (a newer change of the record in the same batch), ``failed`` (``error``)."""

    change: CatalogChange
    outcome: Outcome
    error: str | None = None
    exception: BaseException | None = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        """Whether the change needs nothing more (everything but ``failed``)."""
        return self.outcome != "failed"

    def wire(self) -> dict[str, Any]:
        """JSON-able summary."""
        out: dict[str, Any] = {
            "recordId": self.change.record_id,
            "op": str(self.change.op),
            "version": self.change.version,
            "outcome": self.outcome,
        }
        if self.error:
            out["error"] = self.error
        return out


@dataclass
class SyncReport:
    """Outcomes of a batch (in input order), the writer's stats, and timing."""

    outcomes: list[ChangeOutcome] = field(default_factory=list)
    stats: WriteStats = field(default_factory=WriteStats)
    seconds: float = 0.0
    catalog_version: int | None = None
    enrichment: EnrichReport | None = None

    @property
    def failed(self) -> list[ChangeOutcome]:
        """The failed outcomes."""
        return [o for o in self.outcomes if not o.ok]

    @property
    def written(self) -> bool:
        """Whether a change was ``applied`` or ``unchanged`` (maybe an earlier attempt's)."""
        return any(o.outcome in ("applied", "unchanged") for o in self.outcomes)

    @property
    def unchanged_ids(self) -> list[str]:
        """Record ids of the ``unchanged`` upserts (their after-write may not have run)."""
        unchanged = (o.change for o in self.outcomes if o.outcome == "unchanged")
        return [ch.record_id for ch in unchanged if ch.op is not ChangeOp.REMOVE]

    def counts(self) -> dict[str, int]:
        """Outcomes counted by kind."""
        out: dict[str, int] = {}
        for o in self.outcomes:
            out[o.outcome] = out.get(o.outcome, 0) + 1
        return out

    def wire(self) -> dict[str, Any]:
        """JSON-able summary."""
        return {
            "changes": len(self.outcomes),
            "outcomes": self.counts(),
            "embeddedTexts": self.stats.embedded_texts,
            "deleted": self.stats.deleted,
            "failed": [o.wire() for o in self.failed],
            "catalogVersion": self.catalog_version,
            "seconds": round(self.seconds, 3),
            **(
                {"enrichment": self.enrichment.wire()}
                if self.enrichment
                and (
                    self.enrichment.mode != "off"
                    or self.enrichment.enriched
                    or self.enrichment.failed
                )
                else {}
            ),
        }


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:500]


def _newer(a: int | None, b: int | None) -> bool:
    """Whether version ``a`` should replace ``b`` (None = unversioned: always applies)."""
    return a is None or b is None or a > b


def apply_changes(
    deps: Dependencies,
    changes: Sequence[CatalogChange],
    status: SyncStatusStore | None = None,
    *,
    after: bool = True,
    clock: Callable[[], float] = time.time,
    on_enrich: Callable[[int, int], None] | None = None,
    enrich: bool = True,
) -> SyncReport:
    """Apply a batch of changes of ``deps``' domain; see the module docstring.

    Never raises for a change's failure (it is reported as ``failed``, and recorded ``pending``
    in ``status``). A batch that wrote anything ends with :func:`~agentic_search.sync.
    after_write.after_write` (its ``catalog_version``) unless ``after`` is False: the caller
    runs it once after several batches (``ingest``, CatalogSync's stream batch). The upserts
    are enriched first (:func:`~agentic_search.sync.enrich.enrich_records`; ``on_enrich(done,
    total)`` after each LLM answer; not with ``enrich=False``: the caller enriched them).

    Raises:
        SyncStatusError: when the status store cannot be read or written.
        VectorStoreError: when the collection does not match the embedder.
    """
    t0 = time.perf_counter()
    schema = deps.schema
    report = SyncReport()
    outcomes: list[ChangeOutcome | None] = [None] * len(changes)
    entries = status.get(schema.name, [ch.record_id for ch in changes]) if status else {}

    # The newest change per record wins; the others are superseded, stale or duplicates.
    latest: dict[str, int] = {}
    for i, ch in enumerate(changes):
        if ch.domain != schema.name:
            outcomes[i] = ChangeOutcome(
                ch, "failed", f"domain {ch.domain!r} is not {schema.name!r}"
            )
            continue
        j = latest.get(ch.record_id)
        if j is None or _newer(ch.version, changes[j].version) or ch.version == changes[j].version:
            if j is not None:
                outcomes[j] = ChangeOutcome(changes[j], "superseded")
            latest[ch.record_id] = i
        else:
            outcomes[i] = ChangeOutcome(ch, "superseded")
    for rid, i in list(latest.items()):
        ch = changes[i]
        entry = entries.get(rid)
        applied = entry.applied_version if entry else None
        if ch.version is not None and applied is not None and ch.version <= applied:
            outcomes[i] = ChangeOutcome(ch, "duplicate" if ch.version == applied else "stale")
            del latest[rid]

    upserts = [i for i in latest.values() if changes[i].op is not ChangeOp.REMOVE]
    removes = [i for i in latest.values() if changes[i].op is ChangeOp.REMOVE]
    indexer = Indexer(deps.store, deps.embedder, deps.keyword)
    # the enrichment is attached before the write (never a failure of the write: a record
    # whose enrichment failed goes without it, listed in report.enrichment)
    to_write: dict[int, dict[str, Any]] = {}
    if upserts and not enrich:
        to_write = {i: changes[i].record for i in upserts}  # type: ignore[misc]
    elif upserts:
        plain: list[dict[str, Any]] = [changes[i].record for i in upserts]  # type: ignore[misc]
        try:
            enriched, report.enrichment = enrich_records(deps, plain, on_progress=on_enrich)
        except Exception as exc:  # the filter's embedder, the store: written without
            enriched, report.enrichment = plain, EnrichReport(mode=deps.settings.enrich)
            reason = _error_text(exc)
            report.enrichment.failed = {
                str(ch.record_id): reason for ch in map(changes.__getitem__, upserts)
            }
        to_write = dict(zip(upserts, enriched, strict=True))

    def upsert(idx: list[int]) -> WriteStats:
        return indexer.upsert(schema, [to_write[i] for i in idx], refresh_keyword=False)

    if upserts:
        try:
            stats = upsert(upserts)
            report.stats.add(stats)
            kind = "applied" if stats.changed else "unchanged"
            for i in upserts:
                outcomes[i] = ChangeOutcome(changes[i], kind)
        except Exception:
            for i in upserts:  # isolate the failing record(s)
                try:
                    stats = upsert([i])
                    report.stats.add(stats)
                    outcomes[i] = ChangeOutcome(
                        changes[i], "applied" if stats.changed else "unchanged"
                    )
                except Exception as exc:
                    outcomes[i] = ChangeOutcome(changes[i], "failed", _error_text(exc), exc)
    for i in removes:
        try:
            stats = indexer.delete(schema, [changes[i].record_id], refresh_keyword=False)
            report.stats.add(stats)
            outcomes[i] = ChangeOutcome(changes[i], "applied" if stats.changed else "unchanged")
        except Exception as exc:
            outcomes[i] = ChangeOutcome(changes[i], "failed", _error_text(exc), exc)

    report.outcomes = [o for o in outcomes if o is not None]
    if after and report.written:
        # also after "unchanged": a retry completes the after-write of an attempt that failed
        report.catalog_version = after_write(deps, report.stats, touched=report.unchanged_ids)
    if status is not None:
        _record(status, schema, report.outcomes, entries, clock())
    report.seconds = time.perf_counter() - t0
    return report


def _record(
    status: SyncStatusStore,
    schema: DomainSchema,
    outcomes: Sequence[ChangeOutcome],
    entries: dict[str, SyncEntry],
    now: float,
) -> None:
    """Write each record's entry after a batch (the newest outcome per record decides)."""
    updated: dict[str, SyncEntry] = {}
    for o in outcomes:
        ch = o.change
        if o.outcome in ("superseded", "stale", "duplicate") or ch.domain != schema.name:
            continue
        entry = updated.get(ch.record_id) or entries.get(ch.record_id)
        entry = (
            entry.model_copy(deep=True)
            if entry
            else SyncEntry(domain=schema.name, record_id=ch.record_id)
        )
        entry.updated_at = now
        hashes = content_hashes(schema, ch.record) if ch.record is not None else {}
        if o.ok:
            entry.status = "synced"
            if ch.version is not None:
                entry.applied_version = ch.version
            entry.deleted = ch.op is ChangeOp.REMOVE
            entry.aspects = {
                a: AspectStatus(status="synced", content_hash=hashes.get(a), last_synced_at=now)
                for a in schema.aspect_names
                if not entry.deleted
            }
            entry.last_synced_at = now
            entry.retry_count = 0
            entry.last_error = None
            entry.next_attempt_at = None
            entry.change = None
            entry.expires_at = int(now + TOMBSTONE_TTL_S) if entry.deleted else None
        else:
            pending = entry.change
            if (
                pending is not None
                and not _newer(ch.version, pending.get("version"))
                and ch.version != pending.get("version")
            ):
                continue  # an older change failed after a newer one: keep the newer
            entry.status = "failed" if entry.status == "failed" else "pending"
            entry.last_error = o.error
            entry.change = ch.wire()
            entry.expires_at = None
            for a in schema.aspect_names:
                old = entry.aspects.get(a)
                if ch.op is ChangeOp.REMOVE or old is None or old.content_hash != hashes.get(a):
                    entry.aspects[a] = AspectStatus(
                        status="pending",
                        content_hash=hashes.get(a),
                        last_synced_at=old.last_synced_at if old else None,
                    )
        updated[ch.record_id] = entry
    if updated:
        status.put(updated.values())
