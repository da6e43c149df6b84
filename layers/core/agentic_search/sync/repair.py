"""The repair path: rebuild a domain's index from its catalog when its files cannot be read.

The vector store is rebuilt from the catalog file (the only source of truth an unreadable
collection leaves), the keyword index from the store, and the sync status anew: an embedded
status file that cannot be opened is moved aside (``sync.sqlite.unreadable-<time>``) first.
``agentic-search ingest --rebuild [FILE]`` runs it; the error of an unreadable index names it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from agentic_search.components import Components
from agentic_search.ports import SyncStatusError
from agentic_search.sync.ingest import IngestReport, ingest_file


def set_aside_unreadable_status(c: Components) -> str | None:
    """Move the embedded sync status aside when it cannot be opened (a server-side table is
    left alone); a one-line account, or None when it opens.

    Raises:
        SyncStatusError: when a DynamoDB status table fails (nothing to set aside).
    """
    try:
        c.sync_status.counts(c.schema.name)
        return None
    except SyncStatusError:
        if c.settings.sync_status_table:
            raise
    path = c.settings.sync_status_path
    aside = path.with_name(f"{path.name}.unreadable-{time.strftime('%Y%m%d-%H%M%S')}")
    path.rename(aside)
    return f"the sync status could not be opened: moved to {aside}, recorded anew"


def rebuild(c: Components, path: Path, **ingest: Any) -> IngestReport:
    """Drop the domain's collection (also an unreadable one) and its keyword index, forget a
    pending write, and ingest ``path`` into a fresh collection: :func:`ingest_file` with
    ``ingest`` (batch size, progress, read, id key, source), the keyword index rebuilt.

    Raises:
        FileNotFoundError, CatalogFormatError: for the catalog file.
        VectorStoreError, EmbedderError: when the store or the model fail.
    """
    schema = c.schema
    c.journal.finish(schema.name)
    c.store.drop(schema)
    c.keyword.refresh(schema)  # an empty store: the keyword index's files go too
    c.memo.forget_catalog()
    return ingest_file(c, path, force_refresh=True, **ingest)


__all__ = ["rebuild", "set_aside_unreadable_status"]
