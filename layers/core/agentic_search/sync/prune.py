"""Pruning (``ingest --prune``): the records of the index that a whole catalog file no longer
holds are deleted, so the index mirrors the file.

:func:`prune_plan` lists the documents in the index that a whole catalog file does not hold;
:func:`prune_records` deletes them through the one writer as remove changes (tombstones in the
sync status), then :func:`~agentic_search.sync.after_write.after_write` runs as after every
write.

A record whose line was rejected is still in the file (:func:`prune_plan`): it keeps its
indexed version and is reported as kept, never pruned. A prune is refused before anything is
written (:func:`check_prune`, :class:`PruneRefused`) when no line of the file was accepted, or,
without ``force``, when it would delete more than :data:`PRUNE_MAX_SHARE` of the indexed
records: a file cut short, the wrong file or a broken export must not empty an index.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentic_search.dependencies import Dependencies
from agentic_search.logic.chunking import doc_id_of
from agentic_search.ports import SyncStatusStore
from agentic_search.sync.after_write import after_write
from agentic_search.sync.apply import apply_changes
from agentic_search.sync.changes import CatalogChange, ChangeOp

#: The largest share of the indexed records ``--prune`` deletes without ``force`` (more than
#: half of an index missing from its file is far likelier a wrong or truncated file).
PRUNE_MAX_SHARE = 0.5


class PruneRefused(ValueError):
    """A prune that would empty (or mostly empty) the index: ``reason``, and the message one
    line for the user (nothing was written or journaled)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"--prune refused: {reason}; nothing was written")
        self.reason = reason


@dataclass(frozen=True)
class PrunePlan:
    """The documents of the index against a whole file: how many are ``indexed``, the ``stale``
    ones the file does not hold (what a prune deletes), and the ``kept`` ones whose line was
    rejected (in the file, so they keep their indexed version); ids sorted."""

    indexed: int = 0
    stale: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


def indexed_documents(deps: Dependencies) -> set[str]:
    """Document ids in the domain's collection (a chunked document once, by its document id;
    empty when the collection does not exist)."""
    schema = deps.schema
    if not deps.store.exists(schema):
        return set()
    return {
        doc_id_of(str(p[schema.id_field]))
        for p in deps.store.scroll(schema, payload=[schema.id_field])
    }


def prune_plan(
    deps: Dependencies, records: Sequence[dict[str, Any]], rejected_ids: Iterable[str | None] = ()
) -> PrunePlan:
    """Compare the index with a whole file: its valid ``records`` and the ids of its rejected
    lines (None where a line's id could not be read)."""
    indexed = indexed_documents(deps)
    wanted = {str(r[deps.schema.id_field]) for r in records}
    rejected = {str(r) for r in rejected_ids if r is not None} - wanted
    return PrunePlan(
        indexed=len(indexed),
        stale=sorted(indexed - wanted - rejected),
        kept=sorted(indexed & rejected),
    )


def check_prune(plan: PrunePlan, accepted: int, rejected: int, force: bool = False) -> None:
    """Refuse a prune of a file with ``accepted`` valid records and ``rejected`` lines when
    none was accepted (whatever ``force``), or when it would delete more than
    :data:`PRUNE_MAX_SHARE` of the ``plan``'s indexed records without ``force``.

    Raises:
        PruneRefused: with the one-line reason.
    """
    if accepted == 0:
        raise PruneRefused(
            f"no line of the file was accepted ({rejected} rejected), so it would delete all "
            f"{plan.indexed} record(s) of the index"
        )
    if not force and plan.indexed and len(plan.stale) > PRUNE_MAX_SHARE * plan.indexed:
        raise PruneRefused(
            f"it would delete {len(plan.stale)} of the {plan.indexed} indexed records (more "
            f"than {PRUNE_MAX_SHARE:.0%}); check the file, or add --force"
        )


def prune_records(
    deps: Dependencies, doc_ids: Sequence[str], status: SyncStatusStore | None
) -> int:
    """Delete the documents ``doc_ids`` (every chunk of each) through the one writer, as
    remove changes (tombstones in ``status``); then the keyword index, the entity graph and
    the caches follow. Returns how many points were deleted."""
    schema = deps.schema
    docs = set(doc_ids)
    points = [
        str(p[schema.id_field])
        for p in deps.store.scroll(schema, payload=[schema.id_field])
        if doc_id_of(str(p[schema.id_field])) in docs
    ]
    removes = [
        CatalogChange(op=ChangeOp.REMOVE, domain=schema.name, record_id=rid) for rid in points
    ]
    report = apply_changes(deps, removes, status, after=False)
    if report.stats.changed:
        after_write(deps, report.stats)
    return report.stats.deleted


__all__ = [
    "PRUNE_MAX_SHARE",
    "PrunePlan",
    "PruneRefused",
    "check_prune",
    "indexed_documents",
    "prune_plan",
    "prune_records",
]
