"""The repair path: rebuild a domain's index from its catalog when its files cannot be read.

The vector store is rebuilt from the catalog file (the only source of truth an unreadable
collection leaves), the keyword index from the store, and the sync status anew: an embedded
status file that cannot be opened is moved aside (``sync.sqlite.unreadable-<time>``) first,
and the records the file no longer holds become tombstones.
``agentic-search ingest --rebuild [FILE]`` runs it; the error of an unreadable index names it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from agentic_search.dependencies import Dependencies
from agentic_search.ports import SyncStatusError
from agentic_search.sync.ingest import IngestReport, ingest_file
from agentic_search.wire.sync import TOMBSTONE_TTL_S


def set_aside_unreadable_status(deps: Dependencies) -> str | None:
    """Move the embedded sync status aside when it cannot be opened (a server-side table is
    left alone); a one-line account, or None when it opens.

    Raises:
        SyncStatusError: when a DynamoDB status table fails (nothing to set aside).
    """
    try:
        deps.sync_status.counts(deps.schema.name)
        return None
    except SyncStatusError:
        if deps.settings.sync_status_table:
            raise
    path = deps.settings.sync_status_path
    aside = path.with_name(f"{path.name}.unreadable-{time.strftime('%Y%m%d-%H%M%S')}")
    path.rename(aside)
    return f"the sync status could not be opened: moved to {aside}, recorded anew"


def rebuild(deps: Dependencies, path: Path, **ingest: Any) -> IngestReport:
    """Drop the domain's collection (also an unreadable one) and its keyword index, forget a
    pending write, and ingest ``path`` into a fresh collection: :func:`ingest_file` with
    ``ingest`` (batch size, progress, read, id key, source), the keyword index rebuilt.

    Raises:
        FileNotFoundError, CatalogFormatError: for the catalog file.
        VectorStoreError, EmbedderError: when the store or the model fail.
    """
    schema = deps.schema
    deps.journal.finish(schema.name)
    deps.store.drop(schema)
    deps.keyword.refresh(schema)  # an empty store: the keyword index's files go too
    deps.caches.forget_catalog()
    report = ingest_file(deps, path, force_refresh=True, **ingest)
    forget_unheld(deps)
    return report


def forget_unheld(deps: Dependencies, batch: int = 1000) -> int:
    """Mark the synced records the index does not hold as deleted (tombstones): after a
    rebuild from a file without some of them, the sync status says what the index holds (a
    shard is checked against it when it opens). Returns how many were marked.

    Raises:
        SyncStatusError, VectorStoreError: when the status or the store fail.
    """
    schema, status = deps.schema, deps.sync_status
    counts = status.counts(schema.name)
    total = counts.get("synced", 0) + counts.get("deleted", 0)
    if not counts.get("synced"):
        return 0
    live = [e for e in status.list(schema.name, "synced", limit=total) if not e.deleted]
    now = time.time()
    gone = []
    for i in range(0, len(live), batch):
        chunk = live[i : i + batch]
        held = deps.store.retrieve_records(schema, [e.record_id for e in chunk])
        for e in chunk:
            if e.record_id not in held:
                e.deleted, e.aspects, e.updated_at = True, {}, now
                e.expires_at = int(now + TOMBSTONE_TTL_S)
                gone.append(e)
    if gone:
        status.put(gone)
    return len(gone)


__all__ = ["forget_unheld", "rebuild", "set_aside_unreadable_status"]
