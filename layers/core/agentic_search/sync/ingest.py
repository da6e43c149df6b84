"""Ingest: a catalog file (or records) into one domain's index, through the one writer.

Ingest is sync with insert events: each batch goes through
:func:`~agentic_search.sync.apply.apply_changes` as unversioned inserts, so every write to the
index takes the same path (per-aspect content hashes, payload-only changes embed nothing) and
records its outcome in the sync status.

A file's ingest is journaled (:class:`~agentic_search.ports.WriteJournal`): its intent is
recorded before the first write and forgotten after the last (keyword index refreshed, entity
graph relinked, stale records pruned when asked), so an interrupted one is found and completed
by the next process (:mod:`agentic_search.sync.journal`); it is recorded only once this process
is the writer (:meth:`~agentic_search.ports.VectorStore.hold`) and the prune rules passed, so a
refused ingest leaves nothing for a later process to apply. The index mirrors the file: records
in the index but not in the file are reported (``stale``) and, with ``prune``, deleted through
the same writer; one whose line was rejected keeps its version (``kept``; see
:mod:`agentic_search.sync.prune`). First use seeds the bundled catalog only into a folder never
written (no tools collection: a prune or a sync that emptied one leaves it there).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentic_search.dependencies import Dependencies
from agentic_search.logic.chunking import chunk_records, doc_id_of
from agentic_search.ports import SyncStatusStore
from agentic_search.sync.after_write import after_write
from agentic_search.sync.apply import apply_changes
from agentic_search.sync.changes import insert_changes
from agentic_search.sync.enrich import enrich_records
from agentic_search.sync.files import CatalogRead, LineError, bundled_catalog_path, read_catalog
from agentic_search.sync.indexer import WriteStats
from agentic_search.sync.links import LinkStats, relink
from agentic_search.sync.prune import check_prune, prune_plan, prune_records
from agentic_search.wire import ENTITY_KEY

#: Records per write batch.
DEFAULT_BATCH = 64
#: The journal's name for the bundled catalog (its path differs between installs).
BUNDLED = "bundled"


@dataclass
class IngestReport:
    """Outcome of an ingest: counts, rejected lines, timings."""

    path: str
    lines: int
    valid: int
    errors: list[LineError]
    stats: WriteStats
    seconds: float
    stale: list[str] = field(default_factory=list)
    pruned: int = 0
    blank: int = 0
    #: indexed records whose line was rejected: in the file, so kept as indexed (not pruned)
    kept: list[str] = field(default_factory=list)

    @property
    def docs_per_s(self) -> float:
        """Valid records processed per second."""
        return self.valid / self.seconds if self.seconds > 0 else 0.0

    def wire(self) -> dict[str, Any]:
        """JSON-able summary."""
        return {
            "path": self.path,
            "lines": self.lines,
            "valid": self.valid,
            "blank": self.blank,
            "inserted": self.stats.inserted,
            "updatedVectors": self.stats.updated_vectors,
            "updatedPayload": self.stats.updated_payload,
            "unchanged": self.stats.unchanged,
            "embeddedTexts": self.stats.embedded_texts,
            "errors": [
                {"line": e.line, "id": e.record_id, "reason": e.reason} for e in self.errors
            ],
            "notInFile": self.stale,
            "pruned": self.pruned,
            "keptRejected": self.kept,
            "seconds": round(self.seconds, 3),
            "docsPerSecond": round(self.docs_per_s, 1),
            **(
                {"enrichment": e.wire()}
                if (e := self.stats.enrichment) is not None
                and (e.mode != "off" or e.enriched or e.failed)
                else {}
            ),
        }


def ingest_records(
    deps: Dependencies,
    records: Sequence[dict[str, Any]],
    batch_size: int = DEFAULT_BATCH,
    on_progress: Callable[[int], None] | None = None,
    status: SyncStatusStore | None = None,
    force_refresh: bool = False,
    on_enrich: Callable[[int, int], None] | None = None,
) -> WriteStats:
    """Upsert validated records in batches; the keyword index is refreshed once at the end
    (also when nothing changed with ``force_refresh``: completing an interrupted ingest whose
    points were all written). ``on_progress(n)`` gets the number of ``records`` done (not of
    their chunks); ``status`` records each record's outcome. The records are enriched first,
    all at once (:func:`~agentic_search.sync.enrich.enrich_records`: ``on_enrich(done, total)``
    after each LLM answer; what it did is ``stats.enrichment``).

    Ingest is sync with insert events: each batch goes through
    :func:`agentic_search.sync.apply.apply_changes` (unversioned inserts), so there is one
    writer.

    Raises:
        EmbedderError, VectorStoreError: the first error of a record that failed (the
            records before it, and the others of its batch, are written).
    """
    total = WriteStats()
    schema = deps.schema
    if schema.chunking is not None:
        records = chunk_records(schema, records)
    enriched = schema.enrichment is not None
    if enriched:  # the whole file at once: one mean record, one progress, resumable answers
        records, total.enrichment = enrich_records(deps, records, on_progress=on_enrich)
    for i in range(0, len(records), batch_size):
        batch = records[i : i + batch_size]
        report = apply_changes(
            deps,
            insert_changes(schema, batch),
            status,
            after=False,
            enrich=not enriched,
        )
        total.add(report.stats)
        if report.failed and report.failed[0].exception is not None:
            if total.changed:
                after_write(deps, total)
            raise report.failed[0].exception
        if on_progress:  # in source records (a record's first chunk), as on_start counts
            on_progress(sum(1 for r in batch if not r.get("chunk_id")))
    if total.changed or force_refresh:
        # completing an interrupted write: what it wrote before it stopped is relinked too
        after_write(deps, total, everything=force_refresh)
    deps.caches.forget_catalog()
    return total


def ingest_file(
    deps: Dependencies,
    path: Path,
    batch_size: int = DEFAULT_BATCH,
    on_start: Callable[[int], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
    read: CatalogRead | None = None,
    *,
    prune: bool = False,
    force: bool = False,
    id_key: str | None = None,
    source: str | None = None,
    force_refresh: bool = False,
    on_enrich: Callable[[int, int], None] | None = None,
) -> IngestReport:
    """Read, validate and upsert a JSONL catalog; bad lines are reported, the rest go in.
    Journaled (see the module docstring): ``source`` names the file for a later completion
    (default ``path``; :data:`BUNDLED` for the bundled catalog), ``id_key`` how it was read.
    Records in the index but not in the file are reported, and deleted with ``prune`` (within
    :func:`~agentic_search.sync.prune.check_prune`'s limits, lifted by ``force``); those whose
    line was rejected are kept.

    Raises:
        FileNotFoundError: when the file does not exist.
        VectorStoreError: when another process writes the index, or the collection does not
            match the embedder (nothing journaled: a refused ingest leaves nothing behind).
        PruneRefused: when ``prune`` is refused (nothing written, nothing journaled).
        OSError: when the journal cannot be written (nothing was written to the index).
    """
    t0 = time.perf_counter()
    schema = deps.schema
    catalog = read or read_catalog(path, schema, id_key=id_key)
    deps.store.acquire_writer(schema)  # the writer first: a refused ingest journals nothing
    rejected_ids = [e.record_id for e in catalog.errors]
    if prune:  # refused before anything is journaled or written
        plan = prune_plan(deps, catalog.records, rejected_ids)
        check_prune(plan, len(catalog.records), len(catalog.errors), force)
    if on_start:
        on_start(len(catalog.records))
    deps.journal.begin(
        schema.name,
        {
            "op": "ingest",
            "source": source or str(path),
            "idKey": id_key,
            "prune": prune,
            "force": force,
            "records": len(catalog.records),
            "startedAt": time.time(),
            "pid": os.getpid(),
        },
    )
    status = deps.sync_status
    stats = ingest_records(
        deps, catalog.records, batch_size, on_progress, status, force_refresh, on_enrich
    )
    plan = prune_plan(deps, catalog.records, rejected_ids)
    pruned = prune_records(deps, plan.stale, status) if prune and plan.stale else 0
    # an `entities:` block added to the YAML of an unchanged catalog writes no record, so the
    # graph is built here; without it every search would derive the names' common words anew
    if ensure_links(deps) is not None:
        deps.caches.forget_catalog()
    deps.journal.finish(schema.name)
    return IngestReport(
        path=str(path),
        lines=catalog.lines,
        valid=len(catalog.records),
        errors=catalog.errors,
        stats=stats,
        seconds=time.perf_counter() - t0,
        stale=plan.stale,
        pruned=pruned,
        blank=catalog.blank,
        kept=plan.kept,
    )


def ensure_links(deps: Dependencies) -> LinkStats | None:
    """Build the entity graph of a collection written before it existed (a record without
    its ``_entity`` key); None when the graph is there or the schema has no entities."""
    schema = deps.schema
    if schema.entities is None or not deps.store.exists(schema):
        return None
    for payload in deps.store.scroll(schema, payload=[schema.id_field, ENTITY_KEY]):
        rid = str(payload.get(schema.id_field))
        if ENTITY_KEY not in payload and doc_id_of(rid) == rid:
            return relink(deps)
    return None


def is_empty(deps: Dependencies) -> bool:
    """Whether the domain's collection holds no records."""
    return deps.store.count(deps.schema) == 0


def never_written(deps: Dependencies) -> bool:
    """Whether nothing was ever written to the domain's index here: no collection (the first
    write creates it; deleting every record leaves it)."""
    return not deps.store.exists(deps.schema)


def ensure_bundled_catalog(
    deps: Dependencies,
    on_start: Callable[[int], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> IngestReport | None:
    """Ingest the bundled tools catalog into a tools index never written (first use; never one
    a prune emptied); a tools collection indexed before the entity graph existed gets its
    graph. None when nothing was ingested."""
    if deps.schema.name != "tools":
        return None
    if not never_written(deps):
        if not is_empty(deps):
            ensure_links(deps)
        return None
    return ingest_file(
        deps, bundled_catalog_path(), on_start=on_start, on_progress=on_progress, source=BUNDLED
    )


__all__ = [
    "BUNDLED",
    "DEFAULT_BATCH",
    "IngestReport",
    "ensure_bundled_catalog",
    "ensure_links",
    "ingest_file",
    "ingest_records",
    "is_empty",
    "never_written",
]
