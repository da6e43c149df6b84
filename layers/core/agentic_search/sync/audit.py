"""Is the index what the catalog says? A consistency check across the vector store (points and
their payloads), the keyword index, the sync status and the write journal.

:func:`audit` compares one domain's stores with the catalog's records (validated, as ingest
reads them): every record is a point whose stored content hash is the record's, no other point
is there, the keyword index holds exactly the store's ids, every record's sync entry says
``synced`` and no write is pending. The crash-consistency test and ``agentic-search doctor``
read it.

:func:`holdings` is what the sync status says the index holds (a count and a sample of ids):
a store that checks itself against it when it opens a shard (Qdrant Edge) finds the damage
that leaves a shard answering fewer records without an error; :func:`domain_health` (``GET
/health?deep=true``, ``serve`` at start) checks it again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentic_search.dependencies import Dependencies
from agentic_search.logic.chunking import chunk_records
from agentic_search.logic.schema import DomainSchema
from agentic_search.ports import (
    KeywordIndexError,
    SyncStatusError,
    SyncStatusStore,
    VectorStoreError,
    WriteJournal,
)
from agentic_search.sync.indexer import RECORD_HASH, content_hashes
from agentic_search.wire import HASHES_KEY
from agentic_search.wire.records import ENRICHMENT_KEYS
from agentic_search.wire.sync import Holdings


@dataclass
class Audit:
    """Differences between a domain's stores and its catalog (all empty: consistent).

    ``missing``: catalog ids with no point; ``extra``: points the catalog does not hold;
    ``differing``: points whose stored content is not the record's; ``keyword_missing`` /
    ``keyword_extra``: store ids the keyword index lacks / ids it holds that the store does
    not (None when the keyword index cannot list its ids); ``not_synced``: catalog ids whose
    sync entry is absent or not ``synced``; ``pending_write``: a journaled write is unfinished.
    """

    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    differing: list[str] = field(default_factory=list)
    keyword_missing: list[str] | None = None
    keyword_extra: list[str] | None = None
    not_synced: list[str] = field(default_factory=list)
    pending_write: bool = False

    @property
    def consistent(self) -> bool:
        """Whether the stores equal the catalog."""
        return not (
            self.missing
            or self.extra
            or self.differing
            or self.keyword_missing
            or self.keyword_extra
            or self.not_synced
            or self.pending_write
        )

    def wire(self) -> dict[str, Any]:
        """As JSON (camelCase keys)."""
        return {
            "consistent": self.consistent,
            "missing": self.missing,
            "extra": self.extra,
            "differing": self.differing,
            "keywordMissing": self.keyword_missing,
            "keywordExtra": self.keyword_extra,
            "notSynced": self.not_synced,
            "pendingWrite": self.pending_write,
        }


def audit(deps: Dependencies, records: Sequence[dict[str, Any]], status: bool = True) -> Audit:
    """Compare ``deps``'s stores with ``records`` (the whole catalog, validated); with
    ``status``, the sync status too (see the module docstring).

    Raises:
        VectorStoreError: when the store cannot be read.
    """
    schema = deps.schema
    idf = schema.id_field
    points = chunk_records(schema, records) if schema.chunking is not None else list(records)
    have: dict[str, str | None] = {}
    enrichment: dict[str, dict[str, Any]] = {}
    if deps.store.exists(schema):
        for payload in deps.store.scroll(schema, payload=[idf, HASHES_KEY, *ENRICHMENT_KEYS]):
            rid = str(payload[idf])
            have[rid] = (payload.get(HASHES_KEY) or {}).get(RECORD_HASH)
            enrichment[rid] = {k: payload[k] for k in ENRICHMENT_KEYS if k in payload}
    # a point's hash covers the enrichment written beside its record (never a record field):
    # the record as the file says, with the enrichment as the point holds it
    want = {
        str(r[idf]): content_hashes(schema, {**r, **enrichment.get(str(r[idf]), {})})[RECORD_HASH]
        for r in points
    }
    out = Audit(
        missing=sorted(set(want) - set(have)),
        extra=sorted(set(have) - set(want)),
        differing=sorted(rid for rid in set(want) & set(have) if want[rid] != have[rid]),
        pending_write=deps.journal.pending(schema.name) is not None,
    )
    list_ids = getattr(deps.keyword, "indexed_ids", None)
    if list_ids is not None:
        indexed = set(list_ids(schema) or [])
        out.keyword_missing = sorted(set(have) - indexed)
        out.keyword_extra = sorted(indexed - set(have))
    if status:
        entries = deps.sync_status.get(schema.name, list(want))
        out.not_synced = sorted(
            rid for rid in want if rid not in entries or entries[rid].status != "synced"
        )
    return out


#: Synced record ids a shard is checked for when it opens (the first by id: a stable sample).
HOLDINGS_SAMPLE = 16


def holdings(
    status: SyncStatusStore,
    journal: WriteJournal,
    schema: DomainSchema,
    sample: int = HOLDINGS_SAMPLE,
) -> Holdings | None:
    """What the sync status says ``schema``'s index holds: the records it counts as synced
    (tombstones apart) and the ids of ``sample`` of them. None when there is nothing to check
    against: nothing synced, a journaled write in flight (the status may lag the store until
    it is completed), or a status that cannot be read (``ingest --rebuild`` records it anew).
    """
    try:
        if journal.pending(schema.name) is not None:
            return None
        counts = status.counts(schema.name)
        synced = counts.get("synced", 0)
        if synced <= 0:
            return None
        # tombstones are synced entries too: ask for a few more than the sample
        extra = min(counts.get("deleted", 0), 4 * sample)
        entries = status.list(schema.name, "synced", limit=sample + extra)
    except (SyncStatusError, OSError):
        return None
    return Holdings(synced, [e.record_id for e in entries if not e.deleted][:sample])


def domain_health(deps: Dependencies) -> str:
    """``ok``, ``empty`` (nothing indexed yet) or ``error: <one line>`` when the domain's
    collection or keyword index cannot be read (each is opened and read here), or the
    collection holds less than the sync status says (:meth:`VectorStore.verify
    <agentic_search.ports.VectorStore.verify>`).
    """
    schema = deps.schema
    try:
        deps.store.verify(schema)
        if deps.store.count(schema) == 0:
            return "empty"
        deps.keyword.search(schema, schema.name, 1)  # loads the persisted index
    except (VectorStoreError, KeywordIndexError) as exc:
        return f"error: {exc}"
    return "ok"


__all__ = ["HOLDINGS_SAMPLE", "Audit", "audit", "domain_health", "holdings"]
