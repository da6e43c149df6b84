"""The index mirrors the catalog: what follows a write, and the records a file no longer holds.

:func:`not_in_file` lists the documents in the index that a whole catalog file does not hold;
:func:`prune_records` deletes them through the one writer as remove changes (tombstones in the
sync status), then :func:`~agentic_search.sync.after_write.after_write` runs as after every
write (re-exported here for the ingest).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentic_search.components import Components
from agentic_search.domain.chunking import doc_id_of
from agentic_search.ports import SyncStatusStore
from agentic_search.sync.after_write import after_write
from agentic_search.sync.apply import apply_changes
from agentic_search.sync.changes import CatalogChange, ChangeOp


def not_in_file(c: Components, records: Sequence[dict[str, Any]]) -> list[str]:
    """Ids of the documents in the index that ``records`` (a whole catalog file) do not hold,
    sorted; a chunked document counts once, by its document id."""
    schema = c.schema
    if not c.store.exists(schema):
        return []
    wanted = {str(r[schema.id_field]) for r in records}
    indexed = {
        doc_id_of(str(p[schema.id_field]))
        for p in c.store.scroll(schema, payload=[schema.id_field])
    }
    return sorted(indexed - wanted)


def prune_records(c: Components, doc_ids: Sequence[str], status: SyncStatusStore | None) -> int:
    """Delete the documents ``doc_ids`` (every chunk of each) through the one writer, as
    remove changes (tombstones in ``status``); then the keyword index, the entity graph and
    the caches follow. Returns how many points were deleted."""
    schema = c.schema
    docs = set(doc_ids)
    points = [
        str(p[schema.id_field])
        for p in c.store.scroll(schema, payload=[schema.id_field])
        if doc_id_of(str(p[schema.id_field])) in docs
    ]
    removes = [
        CatalogChange(op=ChangeOp.REMOVE, domain=schema.name, record_id=rid) for rid in points
    ]
    report = apply_changes(c, removes, status, after=False)
    if report.stats.changed:
        after_write(c, report.stats)
    return report.stats.deleted


__all__ = ["after_write", "not_in_file", "prune_records"]
