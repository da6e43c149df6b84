"""The one writer of the index: upsert and delete catalog records, re-embedding only what changed.

For each record the indexer computes a SHA-256 content hash per aspect (over that aspect's
fields) and compares it with the hash stored in the point's payload:

* new record: every aspect is embedded and the point inserted;
* some aspect hashes changed: only those aspects are re-embedded (``update_vectors``);
* only non-aspect fields changed, the record's keyword text did (the schema's
  ``keyword_fields`` changed: its BM25 vector is written anew), or the payload has no snippet
  token count yet (written before counts were stored): the payload is overwritten, nothing is
  embedded;
* nothing changed: nothing is written (re-ingesting the same file changes nothing).

Every payload written also carries the record's evidence-snippet token count (``TOKENS_KEY``,
see :mod:`agentic_search.logic.snippets`). After a batch that changed anything the keyword index is
refreshed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentic_search.logic.embedder_identity import adopt_identity, check_identity
from agentic_search.logic.schema import DomainSchema
from agentic_search.logic.snippets import snippet_token_entries, stored_snippet_tokens
from agentic_search.logic.text import aspect_hash, aspect_text, keyword_text, record_hash
from agentic_search.logic.tokens import token_counter, token_counter_name
from agentic_search.ports import Embedder, KeywordIndex, VectorStore
from agentic_search.wire import (
    ENTITY_KEY,
    HASHES_KEY,
    LINKED_FROM_KEY,
    LINKS_KEY,
    TOKENS_KEY,
    PointWrite,
    VectorUpdate,
)

KEYWORD_HASH = "_keyword"
#: Payload keys of the entity graph, carried over when a record's payload is rewritten.
GRAPH_KEYS = (ENTITY_KEY, LINKS_KEY, LINKED_FROM_KEY)
RECORD_HASH = "_record"


@dataclass
class WriteStats:
    """What a write did, in records and embedded texts."""

    inserted: int = 0
    updated_vectors: int = 0
    updated_payload: int = 0
    unchanged: int = 0
    deleted: int = 0
    embedded_texts: int = 0
    embedded_aspects: dict[str, int] = field(default_factory=dict)
    written_ids: list[str] = field(default_factory=list)
    deleted_ids: list[str] = field(default_factory=list)
    #: the enrichment pass of an ingest (an EnrichReport; None: none ran)
    enrichment: Any = None

    def add(self, other: WriteStats) -> None:
        """Accumulate another batch's stats into this one."""
        self.inserted += other.inserted
        self.updated_vectors += other.updated_vectors
        self.updated_payload += other.updated_payload
        self.unchanged += other.unchanged
        self.deleted += other.deleted
        self.embedded_texts += other.embedded_texts
        for k, v in other.embedded_aspects.items():
            self.embedded_aspects[k] = self.embedded_aspects.get(k, 0) + v
        self.written_ids += other.written_ids
        self.deleted_ids += other.deleted_ids

    @property
    def changed(self) -> bool:
        """Whether the batch wrote anything."""
        return bool(self.inserted or self.updated_vectors or self.updated_payload or self.deleted)


def content_hashes(schema: DomainSchema, record: dict[str, Any]) -> dict[str, str]:
    """Per-aspect hashes plus the keyword-text and whole-record hashes."""
    hashes = {a: aspect_hash(schema, a, record) for a in schema.aspect_names}
    hashes[KEYWORD_HASH] = record_hash({"k": keyword_text(schema, record)})
    hashes[RECORD_HASH] = record_hash(record)
    return hashes


class Indexer:
    """Applies record upserts and deletes to the vector store and keyword index."""

    def __init__(self, store: VectorStore, embedder: Embedder, keyword: KeywordIndex) -> None:
        self.store = store
        self.embedder = embedder
        self.keyword = keyword

    def upsert(
        self,
        schema: DomainSchema,
        records: Sequence[dict[str, Any]],
        refresh_keyword: bool = True,
        on_progress: Callable[[int], None] | None = None,
    ) -> WriteStats:
        """Insert or update validated records (one batch); see the module docstring.

        Raises:
            EmbedderMismatch: when the collection was built by another embedder (see
                :mod:`agentic_search.logic.embedder_identity`; nothing is written).
            VectorStoreError: when the collection does not match the embedder.
            EmbedderError: when embedding fails (nothing of the batch is written).
        """
        stats = WriteStats()
        if not records:
            return stats
        dim = self.embedder.dim  # an API embedder learns its dimension here
        recorded = check_identity(self.store, schema, self.embedder)  # before any write
        self.store.ensure_collection(schema, dim)
        adopt_identity(self.store, schema, self.embedder, recorded)
        ids = [r[schema.id_field] for r in records]
        existing = self.store.retrieve_records(schema, ids)

        counter = token_counter_name(self.embedder)
        snippet_chars = schema.tuning.executor.snippet_chars  # what a search cuts at
        enriched = set(schema.enriched_aspects)
        jobs: list[tuple[int, str, str]] = []  # (record index, aspect, text)
        plans: list[tuple[str, dict[str, str], list[str]]] = []
        for i, rec in enumerate(records):
            hashes = content_hashes(schema, rec)
            old = existing.get(rec[schema.id_field])
            old_hashes = (old.payload or {}).get(HASHES_KEY, {}) if old else {}
            if old is None:
                changed = list(schema.aspect_names)
                kind = "insert"
            else:
                changed = [a for a in schema.aspect_names if old_hashes.get(a) != hashes[a]]
                if any(a in enriched and not aspect_text(schema, a, rec) for a in changed):
                    # an enriched aspect lost its text (no enrichment now): the point is
                    # written whole, without that vector (an update would keep the old one)
                    changed = list(schema.aspect_names)
                    kind = "insert"
                elif changed:
                    kind = "vectors"
                elif (
                    old_hashes.get(RECORD_HASH) != hashes[RECORD_HASH]
                    or old_hashes.get(KEYWORD_HASH) != hashes[KEYWORD_HASH]
                    or stored_snippet_tokens(old.payload or {}, snippet_chars, counter) is None
                ):  # a changed record, keyword text (the schema's keyword_fields changed:
                    # its BM25 vector is written anew), or one written before snippet counts
                    kind = "payload"
                else:
                    kind = "same"
            plans.append((kind, hashes, changed))
            # an aspect with no text (an enriched one of a record without enrichment) has no
            # vector: a search of it does not see the record
            texts = [(a, aspect_text(schema, a, rec)) for a in changed]
            jobs += [(i, a, t) for a, t in texts if t or a not in enriched]

        vectors = self.embedder.embed_documents([t for _, _, t in jobs]) if jobs else []
        by_record: dict[int, dict[str, list[float]]] = {}
        for (i, aspect, _), vec in zip(jobs, vectors, strict=True):
            by_record.setdefault(i, {})[aspect] = vec.tolist()
            stats.embedded_aspects[aspect] = stats.embedded_aspects.get(aspect, 0) + 1
        stats.embedded_texts = len(jobs)

        # Evidence-snippet token counts of every record whose payload is written, counted
        # once here instead of in every search that selects it (see snippets.py).
        written = [i for i, (kind, _, _) in enumerate(plans) if kind != "same"]
        entries = dict(
            zip(
                written,
                snippet_token_entries(
                    schema,
                    [records[i] for i in written],
                    token_counter(self.embedder),
                    counter,
                    snippet_chars=snippet_chars,
                ),
                strict=True,
            )
        )

        inserts: list[PointWrite] = []
        vector_updates: list[VectorUpdate] = []
        payload_updates: dict[str, dict[str, Any]] = {}
        for i, (rec, (kind, hashes, _)) in enumerate(zip(records, plans, strict=True)):
            rid = rec[schema.id_field]
            payload = {**rec, HASHES_KEY: hashes}
            if i in entries:
                payload[TOKENS_KEY] = entries[i]
            old = existing.get(rid)
            keyword_changed = old is None or (
                (old.payload or {}).get(HASHES_KEY, {}).get(KEYWORD_HASH) != hashes[KEYWORD_HASH]
            )
            sparse = (
                self.keyword.sparse_vector(keyword_text(schema, rec)) if keyword_changed else None
            )
            if kind != "same":
                stats.written_ids.append(rid)
                # the entity graph's keys survive a rewrite (the link pass updates them)
                old_payload = (old.payload or {}) if old else {}
                payload.update({k: old_payload[k] for k in GRAPH_KEYS if k in old_payload})
            if kind == "insert":
                if old is not None and sparse is None:  # a rewrite keeps its BM25 vector
                    sparse = self.keyword.sparse_vector(keyword_text(schema, rec))
                inserts.append(PointWrite(rid, dict(by_record.get(i, {})), payload, sparse))
                if old is None:
                    stats.inserted += 1
                else:
                    stats.updated_vectors += 1
            elif kind in ("vectors", "payload"):
                vecs = dict(by_record.get(i, {}))
                if vecs or sparse is not None:
                    vector_updates.append(VectorUpdate(rid, vecs, sparse))
                payload_updates[rid] = payload
                if kind == "vectors":
                    stats.updated_vectors += 1
                else:
                    stats.updated_payload += 1
            else:
                stats.unchanged += 1
        self.store.upsert(schema, inserts)
        # vectors and payloads (with their content hashes) together: see update_points
        self.store.update_points(schema, vector_updates, payload_updates)
        if on_progress:
            on_progress(len(records))
        if refresh_keyword and stats.changed:
            self.keyword.refresh(schema)
        return stats

    def delete(
        self, schema: DomainSchema, record_ids: Sequence[str], refresh_keyword: bool = True
    ) -> WriteStats:
        """Delete records by id (absent ids are ignored)."""
        stats = WriteStats()
        if not record_ids or not self.store.exists(schema):
            return stats
        present = self.store.retrieve_records(schema, list(record_ids))
        self.store.delete(schema, list(present))
        stats.deleted = len(present)
        stats.deleted_ids = list(present)
        if refresh_keyword and stats.changed:
            self.keyword.refresh(schema)
        return stats
