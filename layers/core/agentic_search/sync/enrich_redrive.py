"""Records whose enrichment failed, asked again by the redrive until they succeed or are parked.

A write never fails for its enrichment (:mod:`agentic_search.sync.enrich`): the record goes in
without one and its id is listed in the enrichment store's failures. A local ``ingest`` of the
file asks again for every record it reads; the deployed sync sees a record again only when it
changes, so without this pass a record whose Bedrock call was throttled once would stay
unenriched. The redrive (SyncRedriveFunction on its schedule, ``agentic-search sync
--redrive``) therefore also asks again for every record the index holds without an enrichment
(the listed failures, and those a deployed function listed in its own container's store: the
index is what every function shares), with the backoff of failed changes
(:func:`~agentic_search.sync.redrive.backoff_minutes`); after
:data:`~agentic_search.sync.redrive.MAX_ATTEMPTS` failed attempts a record is parked: it stays
listed, is no longer asked automatically, and the next change of the record, an ingest of it
or :func:`unpark_enrichment` (``sync --retry-failed``) asks again. The attempts are kept in
the enrichment store: a deployed function's count starts again in a new container, so a record
that keeps failing is asked at most that many times per container, and at most ``limit``
records per pass.

The record to re-enrich is the one the index holds (its payload without the writers' keys),
checked against the point's own record hash so that nothing else is written. It is read again
after the LLM answered and written only when it did not change meanwhile: a change that landed
during the call wins and is not overwritten with the older image. Chunked domains (a document's
points are its chunks, not the document) are left to the next ingest of their file.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentic_search.logic.enrichment import record_prompt_text
from agentic_search.sync.changes import CatalogChange, ChangeOp
from agentic_search.sync.indexer import RECORD_HASH, content_hashes
from agentic_search.sync.redrive import MAX_ATTEMPTS, backoff_minutes
from agentic_search.wire.records import (
    ENRICHMENT_KEY,
    ENRICHMENT_KEYS,
    HASHES_KEY,
    INTERNAL_KEYS,
)

if TYPE_CHECKING:
    from agentic_search.dependencies import Dependencies
    from agentic_search.ports import SyncStatusStore


def _attempts_name(domain: str) -> str:
    """The enrichment store's metadata entry holding the domain's attempts."""
    return f"enrichment-attempts:{domain}"


@dataclass
class EnrichRedriveReport:
    """One pass: records asked again, enriched, rescheduled (with the reason), parked, and
    skipped (changed meanwhile, no longer in the index, or not readable as a record)."""

    attempted: int = 0
    enriched: int = 0
    rescheduled: int = 0
    parked: int = 0
    skipped: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    def wire(self) -> dict[str, Any]:
        """JSON-able summary."""
        return {
            "attempted": self.attempted,
            "enriched": self.enriched,
            "rescheduled": self.rescheduled,
            "parked": self.parked,
            "skipped": self.skipped,
            "errors": self.errors,
        }


def _held_records(
    deps: Dependencies, ids: Sequence[str]
) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """The records the index holds for ``ids`` (payload minus the writers' keys), each checked
    against its point's record hash; and the ids that could not be read so (id -> why)."""
    schema = deps.schema
    held = deps.store.retrieve_records(schema, ids)
    records: dict[str, dict[str, Any]] = {}
    skipped: dict[str, str] = {}
    for rid in ids:
        rec = held.get(rid)
        if rec is None:
            skipped[rid] = "not in the index any more"
            continue
        payload = rec.payload or {}
        plain = {k: v for k, v in payload.items() if k not in INTERNAL_KEYS}
        enrichment = {k: payload[k] for k in ENRICHMENT_KEYS if k in payload}
        stored = (payload.get(HASHES_KEY) or {}).get(RECORD_HASH)
        if stored is None or content_hashes(schema, {**plain, **enrichment})[RECORD_HASH] != stored:
            skipped[rid] = "its stored record cannot be read back exactly: re-ingest it"
            continue
        records[rid] = plain
    return records, skipped


def _unenriched(deps: Dependencies) -> set[str]:
    """Ids of the points that hold no enrichment but have text for the prompt: failed, cut by
    the budget, or written under ``ENRICH=off``. The index is the one record of this that
    every function shares (a deployed function's enrichment store is its own container's)."""
    schema = deps.schema
    idf = schema.id_field
    bare = [
        str(p[idf])
        for p in deps.store.scroll(schema, payload=[idf, ENRICHMENT_KEY])
        if ENRICHMENT_KEY not in p
    ]
    held = deps.store.retrieve_records(schema, bare) if bare else {}
    return {rid for rid, rec in held.items() if record_prompt_text(schema, rec.payload or {})}


def redrive_enrichment(
    deps: Dependencies,
    status: SyncStatusStore | None = None,
    clock: Callable[[], float] = time.time,
    limit: int = 100,
) -> EnrichRedriveReport:
    """Ask the enricher again for the domain's due enrichment failures (at most ``limit``
    records) and write those it answers; see the module docstring. Nothing to do without an
    enricher (``ENRICH=off``), without an enrichment spec, or for a chunked domain.

    Raises:
        VectorStoreError: when the index cannot be read or written.
        SyncStatusError: when ``status`` cannot be read or written.
    """
    from agentic_search.sync.apply import apply_changes  # the write path
    from agentic_search.sync.enrich import enrich_records

    out = EnrichRedriveReport()
    schema = deps.schema
    spec = schema.enrichment
    if deps.enricher is None or spec is None or spec.kind != "catalog" or schema.chunking:
        return out
    if not deps.store.exists(schema):
        return out
    cache = deps.enrichment_store
    waiting = set(cache.failures(schema.name)) | _unenriched(deps)
    kept: dict[str, list[float]] = cache.get_meta(_attempts_name(schema.name)) or {}
    attempts = {rid: kept[rid] for rid in waiting if rid in kept}  # forget the recovered
    now = clock()
    due = [
        rid
        for rid in sorted(waiting)
        if (a := attempts.get(rid)) is None or (a[0] < MAX_ATTEMPTS and a[1] <= now)
    ][:limit]
    if not due:
        if attempts != kept:
            cache.set_meta(_attempts_name(schema.name), attempts)
        return out
    records, out.skipped = _held_records(deps, due)
    if status is not None:  # a pending change of the record is enriched when it is applied
        for rid, entry in status.get(schema.name, list(records)).items():
            if entry.status != "synced":
                out.skipped[rid] = "a pending change of the record enriches it"
                del records[rid]
    ids = [rid for rid in due if rid in records]
    out.attempted = len(ids)
    enriched, report = enrich_records(deps, [records[rid] for rid in ids])
    # written only when the record did not change during the call (a newer change wins)
    again, changed = _held_records(deps, ids)
    changes = []
    for rid, rec in zip(ids, enriched, strict=True):
        if rid in report.failed:
            continue
        if rid in changed or again.get(rid) != records[rid]:
            out.skipped[rid] = changed.get(rid, "changed during the call: its change enriches it")
            continue
        changes.append(
            CatalogChange(
                op=ChangeOp.MODIFY, domain=schema.name, record_id=rid, record=rec, source="redrive"
            )
        )
    if changes:
        written = apply_changes(deps, changes, status, clock=clock, enrich=False)
        lost = {o.change.record_id: o.error or "the write failed" for o in written.failed}
        report.failed.update(lost)
        out.enriched = len(changes) - len(lost)
    # the pass dropped its ids from the failures: those it did not write and that are still
    # in the index without an enrichment are listed again, for the next pass
    unwritten = [rid for rid in ids if rid in out.skipped or rid in report.failed]
    held = deps.store.retrieve_records(schema, unwritten) if unwritten else {}
    relist = {
        rid: report.failed.get(rid) or out.skipped[rid]
        for rid, rec in held.items()
        if ENRICHMENT_KEY not in (rec.payload or {})
    }
    if relist:
        cache.set_failures(schema.name, {**cache.failures(schema.name), **relist})
    for rid in ids:
        if rid in report.failed:
            n = int(attempts.get(rid, [0, 0])[0]) + 1
            attempts[rid] = [n, now + 60 * backoff_minutes(n)]
            out.errors[rid] = report.failed[rid]
            if n >= MAX_ATTEMPTS:
                out.parked += 1
            else:
                out.rescheduled += 1
        else:
            attempts.pop(rid, None)
    # a failure that was never asked (or skipped) keeps what it had
    cache.set_meta(_attempts_name(schema.name), attempts)
    return out


def parked_enrichment(deps: Dependencies) -> list[str]:
    """The domain's records whose enrichment failed :data:`~agentic_search.sync.redrive.
    MAX_ATTEMPTS` times in the redrive and that it no longer asks for (sorted ids)."""
    cache = deps.enrichment_store
    attempts: dict[str, list[float]] = cache.get_meta(_attempts_name(deps.schema.name)) or {}
    return sorted(rid for rid, a in attempts.items() if a[0] >= MAX_ATTEMPTS)


def unpark_enrichment(deps: Dependencies, record_ids: Sequence[str] | None = None) -> list[str]:
    """Make parked enrichment failures (those of ``record_ids``, or all) due at the next
    redrive with fresh attempts; returns the ids made due."""
    schema = deps.schema
    cache = deps.enrichment_store
    attempts: dict[str, list[float]] = cache.get_meta(_attempts_name(schema.name)) or {}
    parked = parked_enrichment(deps)
    chosen = parked if record_ids is None else [r for r in parked if r in set(record_ids)]
    for rid in chosen:
        attempts.pop(rid, None)
    cache.set_meta(_attempts_name(schema.name), attempts)
    return chosen


__all__ = [
    "EnrichRedriveReport",
    "parked_enrichment",
    "redrive_enrichment",
    "unpark_enrichment",
]
