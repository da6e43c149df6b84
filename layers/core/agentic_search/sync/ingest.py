"""Ingest: a catalog file (or records) into one domain's index, through the one writer.

Ingest is sync with insert events: each batch goes through
:func:`~agentic_search.sync.apply.apply_changes` as unversioned inserts, so every write to the
index takes the same path (per-aspect content hashes, payload-only changes embed nothing).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentic_search.components import Components
from agentic_search.domain.chunking import chunk_records, doc_id_of
from agentic_search.ports import CacheError
from agentic_search.state import ENTITY_KEY
from agentic_search.sync.apply import apply_changes
from agentic_search.sync.changes import insert_changes
from agentic_search.sync.files import CatalogRead, LineError, bundled_catalog_path, read_catalog
from agentic_search.sync.indexer import WriteStats
from agentic_search.sync.links import LinkStats, relink
from agentic_search.sync.relink import relink_changed

#: Records per write batch.
DEFAULT_BATCH = 64


@dataclass
class IngestReport:
    """Outcome of an ingest: counts, rejected lines, timings."""

    path: str
    lines: int
    valid: int
    errors: list[LineError]
    stats: WriteStats
    seconds: float

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
            "inserted": self.stats.inserted,
            "updatedVectors": self.stats.updated_vectors,
            "updatedPayload": self.stats.updated_payload,
            "unchanged": self.stats.unchanged,
            "embeddedTexts": self.stats.embedded_texts,
            "errors": [
                {"line": e.line, "id": e.record_id, "reason": e.reason} for e in self.errors
            ],
            "seconds": round(self.seconds, 3),
            "docsPerSecond": round(self.docs_per_s, 1),
        }


def ingest_records(
    c: Components,
    records: Sequence[dict[str, Any]],
    batch_size: int = DEFAULT_BATCH,
    on_progress: Callable[[int], None] | None = None,
) -> WriteStats:
    """Upsert validated records in batches; the keyword index is refreshed once at the end.
    ``on_progress(n)`` gets the number of ``records`` done (not of their chunks).

    Ingest is sync with insert events: each batch goes through
    :func:`agentic_search.sync.apply.apply_changes` (unversioned inserts), so there is one
    writer.

    Raises:
        EmbedderError, VectorStoreError: the first error of a record that failed (the
            records before it, and the others of its batch, are written).
    """
    total = WriteStats()
    schema = c.schema
    if schema.chunking is not None:
        records = chunk_records(schema, records)
    for i in range(0, len(records), batch_size):
        batch = records[i : i + batch_size]
        report = apply_changes(
            c,
            insert_changes(schema, batch),
            refresh_keyword=False,
            bump_catalog=False,
        )
        total.add(report.stats)
        if report.failed and report.failed[0].exception is not None:
            if total.changed:
                c.keyword.refresh(schema)
            raise report.failed[0].exception
        if on_progress:  # in source records (a record's first chunk), as on_start counts
            on_progress(sum(1 for r in batch if not r.get("chunk_id")))
    if total.changed:
        c.keyword.refresh(schema)
        relink_changed(c, total.written_ids, total.deleted_ids)
        # Cached answers were computed on the old catalog: a new version retires them. An
        # unreachable cache must not fail the ingest (its entries expire by TTL).
        with contextlib.suppress(CacheError):
            c.cache.bump_catalog_version(schema.name)
    c.memo.forget_catalog()
    return total


def ingest_file(
    c: Components,
    path: Path,
    batch_size: int = DEFAULT_BATCH,
    on_start: Callable[[int], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
    read: CatalogRead | None = None,
) -> IngestReport:
    """Read, validate and upsert a JSONL catalog; bad lines are reported, the rest go in.

    Raises:
        FileNotFoundError: when the file does not exist.
        VectorStoreError: when the collection does not match the embedder.
    """
    t0 = time.perf_counter()
    catalog = read or read_catalog(path, c.schema)
    if on_start:
        on_start(len(catalog.records))
    stats = ingest_records(c, catalog.records, batch_size, on_progress)
    return IngestReport(
        path=str(path),
        lines=catalog.lines,
        valid=len(catalog.records),
        errors=catalog.errors,
        stats=stats,
        seconds=time.perf_counter() - t0,
    )


def ensure_links(c: Components) -> LinkStats | None:
    """Build the entity graph of a collection written before it existed (a record without
    its ``_entity`` key); None when the graph is there or the schema has no entities."""
    schema = c.schema
    if schema.entities is None or not c.store.exists(schema):
        return None
    for payload in c.store.scroll(schema, payload=[schema.id_field, ENTITY_KEY]):
        rid = str(payload.get(schema.id_field))
        if ENTITY_KEY not in payload and doc_id_of(rid) == rid:
            return relink(c)
    return None


def is_empty(c: Components) -> bool:
    """Whether the domain's collection holds no records."""
    return c.store.count(c.schema) == 0


def ensure_bundled_catalog(
    c: Components,
    on_start: Callable[[int], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> IngestReport | None:
    """Ingest the bundled tools catalog when the tools collection is empty (first use); a
    tools collection indexed before the entity graph existed gets its graph."""
    if c.schema.name != "tools":
        return None
    if not is_empty(c):
        ensure_links(c)
        return None
    return ingest_file(c, bundled_catalog_path(), on_start=on_start, on_progress=on_progress)


__all__ = [
    "DEFAULT_BATCH",
    "IngestReport",
    "ensure_bundled_catalog",
    "ensure_links",
    "ingest_file",
    "ingest_records",
    "is_empty",
]
