"""Catalog sync: catalog changes (DynamoDB stream records, EventBridge events, file records)
applied to the index through the one writer (:class:`agentic_search.sync.indexer.Indexer`).

A :class:`CatalogChange` is ``insert`` / ``modify`` / ``remove`` of one record at a ``version``
(an integer that grows with every change of the catalog: the stream record's ``SequenceNumber``,
or ``detail.version`` of a ``catalog.changed`` event; ``None`` = apply unconditionally, what
``ingest`` sends). Both event shapes parse into it:

* DynamoDB stream record (``NEW_AND_OLD_IMAGES``): ``eventName`` INSERT / MODIFY / REMOVE, the
  image under ``dynamodb.NewImage`` (``OldImage`` for REMOVE), typed attribute values converted
  with boto3's ``TypeDeserializer``; numbers come back as ``Decimal`` and become ``int`` when
  integral, ``float`` otherwise; string and number sets become sorted lists; binary values are
  refused (no catalog field is binary).
* EventBridge ``catalog.changed`` event: ``detail`` = ``{"operation": insert|modify|update|
  replace|remove|delete, "recordId", "version", "record" (or MongoDB's ``operationType``,
  ``documentKey._id``, ``fullDocument``), "domain"}``.

:func:`apply_changes` applies a batch: per record only the newest change counts; a change not
newer than the version the status store says is applied is skipped (``stale``, or ``duplicate``
when equal: replaying an event changes nothing); upserts go through the Indexer in one batch
(per-aspect SHA-256 hashes: only changed aspects are re-embedded, payload-only changes embed
nothing) and, when the batch fails, record by record so that one bad record fails alone.
The outcome of every change is reported; failures are left ``pending`` in the status store with
the change to re-apply.

Redrive (:func:`enqueue_failed`, :func:`redrive_due`, :func:`retry_failed`): failed changes wait
``backoff_minutes(n)`` (1, 2, 4, 8 ... minutes, capped at 60) between attempts; after
:data:`MAX_ATTEMPTS` attempts they are parked as ``failed`` with the last error until retried.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentic_search.adapters.sync_status import (
    TOMBSTONE_TTL_S,
    AspectStatus,
    SyncEntry,
    SyncStatusStore,
)
from agentic_search.domain.schema import DomainSchema, RecordError
from agentic_search.sync.indexer import WriteStats, content_hashes

if TYPE_CHECKING:
    from agentic_search.engine import SearchEngine

#: Attempts of a failed change through the redrive before it is parked as failed.
MAX_ATTEMPTS = 5
#: Longest wait between two attempts (minutes).
MAX_BACKOFF_MINUTES = 60
#: A pending entry without a scheduled attempt (its Lambda retries never reached the DLQ, e.g.
#: a lost on-failure message) is picked up by the redrive after this long (s).
ORPHAN_GRACE_S = 15 * 60


class ChangeError(ValueError):
    """An event or record that cannot be parsed into a change (names what is wrong)."""


class ChangeOp(StrEnum):
    """What happened to the record."""

    INSERT = "insert"
    MODIFY = "modify"
    REMOVE = "remove"


_OPS = {
    "insert": ChangeOp.INSERT,
    "modify": ChangeOp.MODIFY,
    "update": ChangeOp.MODIFY,
    "replace": ChangeOp.MODIFY,
    "upsert": ChangeOp.MODIFY,
    "remove": ChangeOp.REMOVE,
    "delete": ChangeOp.REMOVE,
}


class CatalogChange(BaseModel):
    """One change of one catalog record (see the module docstring).

    ``record`` is the validated new image (None for ``remove``); ``dedupe_key`` is what the
    Lambda idempotency layer keys on (record id + version, or the event id when unversioned).
    """

    model_config = ConfigDict(populate_by_name=True, frozen=True)

    op: ChangeOp
    domain: str = "tools"
    record_id: str = Field(alias="recordId", min_length=1)
    version: int | None = None
    record: dict[str, Any] | None = None
    source: Literal["dynamodb", "eventbridge", "file", "redrive"] = "file"
    event_id: str | None = Field(default=None, alias="eventId")

    @property
    def dedupe_key(self) -> str:
        """``<domain>:<id>@<version>`` (``#<event id>`` when there is no version)."""
        tail = f"@{self.version}" if self.version is not None else f"#{self.event_id or ''}"
        return f"{self.domain}:{self.record_id}{tail}"

    def wire(self) -> dict[str, Any]:
        """JSON-able dict (camelCase), what :meth:`model_validate` reads back."""
        out = self.model_dump(by_alias=True, mode="json")
        out["dedupeKey"] = self.dedupe_key
        return out


# ----- parsing ------------------------------------------------------------------------------------


def plain_value(value: Any) -> Any:
    """A value from boto3's ``TypeDeserializer`` as plain JSON: Decimal -> int or float, sets
    -> sorted lists, nested maps and lists converted.

    Raises:
        ChangeError: for binary values.
    """
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: plain_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_value(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(plain_value(v) for v in value)
    if isinstance(value, bytes | bytearray) or type(value).__name__ == "Binary":
        raise ChangeError("binary attribute values are not supported in catalog records")
    return value


def deserialize_image(image: dict[str, Any]) -> dict[str, Any]:
    """A DynamoDB typed image (``{"name": {"S": "x"}, ...}``) as a plain dict.

    Raises:
        ChangeError: for a malformed typed value or a binary one.
    """
    from boto3.dynamodb.types import TypeDeserializer

    deserializer = TypeDeserializer()
    try:
        return {k: plain_value(deserializer.deserialize(v)) for k, v in image.items()}
    except (TypeError, ValueError, AttributeError) as exc:
        raise ChangeError(f"malformed DynamoDB image: {exc}") from exc


def _validated(schema: DomainSchema, raw: Any, what: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ChangeError(f"{what}: expected an object, got {type(raw).__name__}")
    try:
        return schema.validate_record(raw)
    except RecordError as exc:
        raise ChangeError(f"{what}: {exc}") from exc


def change_from_stream_record(record: dict[str, Any], schema: DomainSchema) -> CatalogChange:
    """A DynamoDB stream record (NEW_AND_OLD_IMAGES) as a change; version = SequenceNumber.

    Raises:
        ChangeError: naming what is missing or invalid.
    """
    name = str(record.get("eventName", "")).lower()
    if name not in _OPS:
        raise ChangeError(f"unknown eventName {record.get('eventName')!r}")
    op = _OPS[name]
    ddb = record.get("dynamodb") or {}
    seq = ddb.get("SequenceNumber")
    try:
        version = int(seq) if seq is not None else None
    except (TypeError, ValueError):
        raise ChangeError(f"SequenceNumber {seq!r} is not a number") from None
    keys = deserialize_image(ddb.get("Keys") or {})
    rid = keys.get(schema.id_field)
    if op is ChangeOp.REMOVE:
        old = deserialize_image(ddb.get("OldImage") or {})
        rid = rid if rid is not None else old.get(schema.id_field)
        if rid is None:
            raise ChangeError(f"REMOVE without the key {schema.id_field!r}")
        return CatalogChange(
            op=op,
            domain=schema.name,
            record_id=str(rid),
            version=version,
            source="dynamodb",
            event_id=record.get("eventID"),
        )
    if "NewImage" not in ddb:
        raise ChangeError(f"{name.upper()} without NewImage (stream view: NEW_AND_OLD_IMAGES)")
    rec = _validated(schema, deserialize_image(ddb["NewImage"]), f"record {rid!r}")
    return CatalogChange(
        op=op,
        domain=schema.name,
        record_id=rec[schema.id_field],
        version=version,
        record=rec,
        source="dynamodb",
        event_id=record.get("eventID"),
    )


def change_from_eventbridge(event: dict[str, Any], schema: DomainSchema) -> CatalogChange:
    """A ``catalog.changed`` EventBridge event as a change (see the module docstring).

    Raises:
        ChangeError: naming what is missing or invalid.
    """
    detail = event.get("detail")
    if not isinstance(detail, dict):
        raise ChangeError("EventBridge event without a detail object")
    op_name = str(detail.get("operation") or detail.get("operationType") or "").lower()
    if op_name not in _OPS:
        raise ChangeError(f"unknown operation {op_name or None!r} (insert, modify or remove)")
    op = _OPS[op_name]
    raw = detail.get("record", detail.get("fullDocument"))
    rid = detail.get("recordId")
    if rid is None and isinstance(detail.get("documentKey"), dict):
        rid = detail["documentKey"].get("_id")
    if rid is None and isinstance(raw, dict):
        rid = raw.get(schema.id_field)
    if rid is None or rid == "":
        raise ChangeError("event without a record id (recordId, documentKey._id or record.id)")
    version = detail.get("version")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise ChangeError(f"version {version!r} is not an integer")
    domain = detail.get("domain", schema.name)
    if domain != schema.name:
        raise ChangeError(f"event for domain {domain!r}, this sync serves {schema.name!r}")
    rec = None
    if op is not ChangeOp.REMOVE:
        if isinstance(raw, dict) and schema.id_field not in raw:
            raw = {**raw, schema.id_field: str(rid)}
        rec = _validated(schema, raw, f"record {rid!r}")
        if rec[schema.id_field] != str(rid):
            raise ChangeError(f"recordId {rid!r} differs from record id {rec[schema.id_field]!r}")
    return CatalogChange(
        op=op,
        domain=schema.name,
        record_id=str(rid),
        version=version,
        record=rec,
        source="eventbridge",
        event_id=event.get("id"),
    )


def is_stream_record(item: Any) -> bool:
    """Whether ``item`` looks like a DynamoDB stream record."""
    return isinstance(item, dict) and (
        item.get("eventSource") == "aws:dynamodb" or ("dynamodb" in item and "eventName" in item)
    )


def is_eventbridge_event(item: Any) -> bool:
    """Whether ``item`` looks like an EventBridge event."""
    return isinstance(item, dict) and "detail" in item and "detail-type" in item


def parse_change(item: Any, schema: DomainSchema) -> CatalogChange:
    """One stream record, EventBridge event, or change dict (:meth:`CatalogChange.wire`).

    Raises:
        ChangeError: when ``item`` is none of those or does not parse.
    """
    if is_stream_record(item):
        return change_from_stream_record(item, schema)
    if is_eventbridge_event(item):
        return change_from_eventbridge(item, schema)
    if isinstance(item, dict) and "op" in item and ("recordId" in item or "record_id" in item):
        try:
            change = CatalogChange.model_validate(item)
        except ValueError as exc:
            raise ChangeError(f"invalid change: {exc}") from exc
        if change.record is not None:
            rec = _validated(schema, change.record, f"record {change.record_id!r}")
            change = change.model_copy(update={"record": rec})
        elif change.op is not ChangeOp.REMOVE:
            raise ChangeError(f"{change.op} of {change.record_id!r} without a record")
        return change
    raise ChangeError("not a DynamoDB stream record, an EventBridge event or a change")


def event_items(document: Any) -> list[Any]:
    """The items of an events document: ``{"Records": [...]}`` (a stream batch), one
    EventBridge event, or a JSON list mixing stream records, events and stream batches."""
    if isinstance(document, dict) and isinstance(document.get("Records"), list):
        return list(document["Records"])
    if isinstance(document, list):
        out: list[Any] = []
        for item in document:
            if isinstance(item, dict) and isinstance(item.get("Records"), list):
                out += item["Records"]
            else:
                out.append(item)
        return out
    return [document]


def insert_changes(schema: DomainSchema, records: Iterable[dict[str, Any]]) -> list[CatalogChange]:
    """Validated records as unversioned inserts (what ``ingest`` applies)."""
    return [
        CatalogChange(
            op=ChangeOp.INSERT, domain=schema.name, record_id=r[schema.id_field], record=r
        )
        for r in records
    ]


# ----- applying -----------------------------------------------------------------------------------

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

    @property
    def failed(self) -> list[ChangeOutcome]:
        """The failed outcomes."""
        return [o for o in self.outcomes if not o.ok]

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
        }


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:500]


def _newer(a: int | None, b: int | None) -> bool:
    """Whether version ``a`` should replace ``b`` (None = unversioned: always applies)."""
    return a is None or b is None or a > b


def apply_changes(
    engine: SearchEngine,
    changes: Sequence[CatalogChange],
    status: SyncStatusStore | None = None,
    *,
    refresh_keyword: bool = True,
    bump_catalog: bool = True,
    clock: Callable[[], float] = time.time,
) -> SyncReport:
    """Apply a batch of changes of ``engine``'s domain; see the module docstring.

    Never raises for a change's failure (it is reported as ``failed``, and recorded ``pending``
    in ``status``). A batch that wrote anything bumps the catalog version (the plan cache keys
    on it) unless ``bump_catalog`` is False.

    Raises:
        SyncStatusError: when the status store cannot be read or written.
        VectorStoreError: when the collection does not match the embedder.
    """
    from agentic_search.adapters.caches import CacheError

    t0 = time.perf_counter()
    schema = engine.schema
    report = SyncReport()
    outcomes: list[ChangeOutcome | None] = [None] * len(changes)
    entries = status.get(schema.name, [c.record_id for c in changes]) if status else {}

    # The newest change per record wins; the others are superseded, stale or duplicates.
    latest: dict[str, int] = {}
    for i, c in enumerate(changes):
        if c.domain != schema.name:
            outcomes[i] = ChangeOutcome(c, "failed", f"domain {c.domain!r} is not {schema.name!r}")
            continue
        j = latest.get(c.record_id)
        if j is None or _newer(c.version, changes[j].version) or c.version == changes[j].version:
            if j is not None:
                outcomes[j] = ChangeOutcome(changes[j], "superseded")
            latest[c.record_id] = i
        else:
            outcomes[i] = ChangeOutcome(c, "superseded")
    for rid, i in list(latest.items()):
        c = changes[i]
        entry = entries.get(rid)
        applied = entry.applied_version if entry else None
        if c.version is not None and applied is not None and c.version <= applied:
            outcomes[i] = ChangeOutcome(c, "duplicate" if c.version == applied else "stale")
            del latest[rid]

    upserts = [i for i in latest.values() if changes[i].op is not ChangeOp.REMOVE]
    removes = [i for i in latest.values() if changes[i].op is ChangeOp.REMOVE]
    indexer = engine.indexer

    def upsert(idx: list[int]) -> WriteStats:
        return indexer.upsert(schema, [changes[i].record for i in idx], refresh_keyword=False)  # type: ignore[misc]

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
    written = any(o.outcome in ("applied", "unchanged") for o in report.outcomes)
    if refresh_keyword and written:
        # Also after "unchanged": the retry of a change whose points were written before a
        # failed refresh must still bring the keyword index up to date.
        engine.keyword.refresh(schema)
    if status is not None:
        _record(status, schema, report.outcomes, entries, clock())
    if report.stats.changed:
        engine.forget_catalog_lookups()
        if bump_catalog:
            # cached answers expire by TTL anyway: the sync must not fail for the cache
            with contextlib.suppress(CacheError):
                report.catalog_version = engine.cache.bump_catalog_version(schema.name)
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
        c = o.change
        if o.outcome in ("superseded", "stale", "duplicate") or c.domain != schema.name:
            continue
        entry = updated.get(c.record_id) or entries.get(c.record_id)
        entry = (
            entry.model_copy(deep=True)
            if entry
            else SyncEntry(domain=schema.name, record_id=c.record_id)
        )
        entry.updated_at = now
        hashes = content_hashes(schema, c.record) if c.record is not None else {}
        if o.ok:
            entry.status = "synced"
            if c.version is not None:
                entry.applied_version = c.version
            entry.deleted = c.op is ChangeOp.REMOVE
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
                and not _newer(c.version, pending.get("version"))
                and c.version != pending.get("version")
            ):
                continue  # an older change failed after a newer one: keep the newer
            entry.status = "failed" if entry.status == "failed" else "pending"
            entry.last_error = o.error
            entry.change = c.wire()
            entry.expires_at = None
            for a in schema.aspect_names:
                old = entry.aspects.get(a)
                if c.op is ChangeOp.REMOVE or old is None or old.content_hash != hashes.get(a):
                    entry.aspects[a] = AspectStatus(
                        status="pending",
                        content_hash=hashes.get(a),
                        last_synced_at=old.last_synced_at if old else None,
                    )
        updated[c.record_id] = entry
    if updated:
        status.put(updated.values())


# ----- redrive ------------------------------------------------------------------------------------


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
    engine: SearchEngine,
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
    due = due_entries(status, engine.schema.name, now, limit)
    if not due:
        return out
    changes = [
        CatalogChange.model_validate({**e.change, "source": "redrive"})  # type: ignore[dict-item]
        for e in due
    ]
    report = apply_changes(engine, changes, status, clock=lambda: now)
    out.attempted = len(changes)
    failed = {o.change.record_id: o.error or "" for o in report.failed}
    if not failed:
        out.applied = len(changes)
        return out
    entries = status.get(engine.schema.name, list(failed))
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


def retry_failed(
    status: SyncStatusStore,
    domain: str,
    record_ids: Sequence[str] | None = None,
    clock: Callable[[], float] = time.time,
) -> list[str]:
    """Make failed (parked) entries — those of ``record_ids``, or all when None — pending and
    due now with a fresh attempt count; pending ones become due now. Returns the record ids
    queued (ids without a change to re-apply are left alone).

    Raises:
        SyncStatusError: when the store fails.
    """
    now = clock()
    if record_ids is None:
        entries = status.list(domain, "failed", limit=10_000)
    else:
        entries = list(status.get(domain, record_ids).values())
    queued = []
    for e in entries:
        if e.change is None or e.status == "synced":
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
    return [e.record_id for e in queued]


def status_summary(status: SyncStatusStore, domain: str) -> dict[str, Any]:
    """``GET /sync/status``: counts per status and whether everything is synced."""
    counts = status.counts(domain)
    return {
        "domain": domain,
        "counts": counts,
        "healthy": counts.get("pending", 0) == 0 and counts.get("failed", 0) == 0,
    }


def dumps(obj: Any) -> str:
    """Compact JSON (for queue messages and logs)."""
    return json.dumps(obj, separators=(",", ":"), default=str)


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


def rejected_record_id(item: Any, schema: DomainSchema) -> str | None:
    """The record id an unparseable stream record or event names, when it names one."""
    if not isinstance(item, dict):
        return None
    try:
        if is_stream_record(item):
            ddb = item.get("dynamodb") or {}
            keys = deserialize_image(ddb.get("Keys") or {})
            rid = keys.get(schema.id_field)
        else:
            detail = item.get("detail") or {}
            rid = detail.get("recordId") or (detail.get("record") or {}).get(schema.id_field)
    except (ChangeError, AttributeError):
        return None
    return str(rid) if rid not in (None, "") else None


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
