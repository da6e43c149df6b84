"""Qdrant adapter of the :class:`~agentic_search.ports.VectorStore` port: one collection per
domain, one named dense vector per aspect.

:class:`QdrantStore` talks to a Qdrant server (``QDRANT_URL``, ``QDRANT_API_KEY``);
:class:`~agentic_search.adapters.qdrant.local.LocalQdrantStore` is the fallback embedded engine
(``VECTOR_STORE=local``, and the source a migration to Edge copies from): qdrant-client local
mode in a folder per collection (``QDRANT_PATH``), with a record cache and a dense matrix. Every
collection carries a sparse ``bm25`` vector with the IDF modifier (the keyword index,
:mod:`.sparse`); on a server, payload indexes on the filterable fields too.

Point ids are UUIDv5 of ``domain:record_id`` so the same record always lands on the same point
(idempotent upserts). The payload is the record plus ``_hashes`` (per-aspect content hashes).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from qdrant_client import QdrantClient
from qdrant_client import models as qm

from agentic_search.adapters.engine_failures import mismatch_message
from agentic_search.adapters.qdrant.filters import to_qdrant
from agentic_search.adapters.qdrant.identity import read_identity, write_identity
from agentic_search.adapters.qdrant.ids import point_id
from agentic_search.adapters.record_cache import RecordCache
from agentic_search.config import Settings
from agentic_search.logic.schema import DomainSchema, domain_argument
from agentic_search.ports import VectorStoreError
from agentic_search.wire import (
    ENTITY_KEY,
    HASHES_KEY,
    LINKED_FROM_KEY,
    LINKS_KEY,
    SPARSE_VECTOR,
    EmbedderIdentity,
    Filter,
    PointWrite,
    ScoredRecord,
    SparseVector,
    StoredRecord,
    VectorUpdate,
)

#: Payload keys the query side's reads leave out (see :meth:`QdrantStore.hydrate_records`).
READ_WITHOUT = [HASHES_KEY, ENTITY_KEY, LINKS_KEY, LINKED_FROM_KEY]


class _NullLock:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


class QdrantStore:
    """Named-vector collection per domain; see the module docstring for the layout."""

    #: a server takes concurrent writers: no collection is cached here
    server_mode = True

    def __init__(self, settings: Settings, client: QdrantClient | None = None) -> None:
        self.settings = settings
        if client is None:
            if not settings.qdrant_url:
                raise VectorStoreError("QdrantStore needs QDRANT_URL (or a client)")
            key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
            # no version check: it is a request at construction (in a thread); the first
            # call meets the server inside the caller's deadline
            client = QdrantClient(
                url=settings.qdrant_url, api_key=key, timeout=10, check_compatibility=False
            )
        #: one client for every collection
        self.client: QdrantClient | None = client
        self._lock: Any = _NullLock()  # the server serializes; the client is thread-safe
        #: nothing is kept on a server (other writers exist): see hydrate_records
        self.records = RecordCache(0)
        #: collection -> recorded embedder identity, read once per process (see
        #: embedder_identity)
        self._identities: dict[str, EmbedderIdentity | None] = {}

    # ----- collection management ------------------------------------------------------------

    def collection(self, schema: DomainSchema) -> str:
        """Collection name of a domain."""
        return self.settings.collection_name(schema.name)

    def _c(self, schema: DomainSchema) -> QdrantClient:
        """The client holding ``schema``'s collection (here: the one client)."""
        assert self.client is not None
        return self.client

    def exists(self, schema: DomainSchema) -> bool:
        """Whether the domain's collection exists."""
        with self._lock:
            return self._c(schema).collection_exists(self.collection(schema))

    def verify(self, schema: DomainSchema) -> None:
        """Nothing to check beyond what :meth:`count` reads: a server keeps its own
        consistency, and a local-mode folder that cannot be read fails when it opens."""

    def compile_filter(
        self, schema: DomainSchema, filters: Sequence[Filter], exclude_ids: Sequence[str] = ()
    ) -> qm.Filter | None:
        """The Qdrant filter of ``filters`` and the excluded ids (:func:`to_qdrant`).

        Raises:
            FilterError: when a filter is not allowed by the schema.
        """
        return to_qdrant(schema, filters, exclude_ids)

    def acquire_writer(self, schema: DomainSchema) -> None:
        """Nothing to take: a server takes concurrent writers."""

    def count(self, schema: DomainSchema) -> int:
        """Number of points in the domain's collection (0 if it does not exist)."""
        if not self.exists(schema):
            return 0
        with self._lock:
            return self._c(schema).count(self.collection(schema), exact=True).count

    def ensure_collection(self, schema: DomainSchema, dim: int) -> None:
        """Create the collection, or check an existing one matches ``dim`` and the aspects.

        Raises:
            VectorStoreError: when an existing collection has another dimension or lacks an
                aspect (the message says which and how to fix it).
        """
        name = self.collection(schema)
        with self._lock:
            if self._c(schema).collection_exists(name):
                info = self._c(schema).get_collection(name)
                vectors = info.config.params.vectors
                if not isinstance(vectors, dict):
                    raise VectorStoreError(f"collection {name!r} has no named vectors")
                problems = []
                for aspect in schema.aspect_names:
                    params = vectors.get(aspect)
                    if params is None:
                        if aspect not in schema.enriched_aspects:  # built before it: optional
                            problems.append(f"missing named vector {aspect!r}")
                    elif params.size != dim:
                        problems.append(
                            f"vector {aspect!r} has dimension {params.size}, "
                            f"the embedder produces {dim}"
                        )
                if problems:
                    what = f"collection {name!r}"
                    raise VectorStoreError(
                        mismatch_message(what, problems, domain_argument(schema))
                    )
                return
            self._c(schema).create_collection(
                name,
                vectors_config={
                    a: qm.VectorParams(size=dim, distance=qm.Distance.COSINE)
                    for a in schema.aspect_names
                },
                sparse_vectors_config={
                    SPARSE_VECTOR: qm.SparseVectorParams(modifier=qm.Modifier.IDF)
                },
            )
            if self.server_mode:
                self._create_payload_indexes(schema, name)

    def embedder_identity(self, schema: DomainSchema) -> EmbedderIdentity | None:
        """The embedder identity in the collection's metadata (see :mod:`.identity`); None
        when the collection does not exist or has none. Read once per process per collection
        (this process's writes update it; a rebuild by another process is seen by a new one).

        Raises:
            VectorStoreError: when the collection cannot be read, or the value is not one.
        """
        name = self.collection(schema)
        with self._lock:
            if name in self._identities:
                return self._identities[name]
            client = self._c(schema)
            identity = read_identity(client, name)
            if identity is not None or client.collection_exists(name):
                self._identities[name] = identity
            return identity

    def record_embedder_identity(self, schema: DomainSchema, identity: EmbedderIdentity) -> None:
        """Store ``identity`` in the (existing) collection's metadata."""
        name = self.collection(schema)
        with self._lock:
            write_identity(self._c(schema), name, identity)
            self._identities[name] = identity

    def _create_payload_indexes(self, schema: DomainSchema, name: str) -> None:
        kinds = {
            "string": qm.PayloadSchemaType.KEYWORD,
            "list": qm.PayloadSchemaType.KEYWORD,
            "number": qm.PayloadSchemaType.FLOAT,
            "integer": qm.PayloadSchemaType.FLOAT,
            "boolean": qm.PayloadSchemaType.BOOL,
        }
        for fname, fdef in schema.filterable_fields.items():
            kind = qm.PayloadSchemaType.TEXT if "contains" in fdef.filter else kinds[fdef.type]
            self._c(schema).create_payload_index(name, fname, field_schema=kind)
        if schema.id_field not in schema.filterable_fields:
            self._c(schema).create_payload_index(
                name, schema.id_field, field_schema=qm.PayloadSchemaType.KEYWORD
            )

    def drop(self, schema: DomainSchema) -> None:
        """Delete the domain's collection if it exists."""
        with self._lock:
            self._written()
            name = self.collection(schema)
            self._identities.pop(name, None)
            if self._c(schema).collection_exists(name):
                self._c(schema).delete_collection(name)

    # ----- writes -----------------------------------------------------------------------------

    def retrieve_records(
        self,
        schema: DomainSchema,
        record_ids: Sequence[str],
        with_vectors: bool = False,
        without: Sequence[str] = (),
    ) -> dict[str, StoredRecord]:
        """Existing points for ``record_ids`` keyed by record id (missing ids are absent);
        their payloads leave out the keys in ``without``."""
        if not record_ids:
            return {}
        ids = [point_id(schema.name, r) for r in record_ids]
        payload: bool | qm.PayloadSelectorExclude = (
            qm.PayloadSelectorExclude(exclude=list(without)) if without else True
        )
        with self._lock:
            points = self._c(schema).retrieve(
                self.collection(schema), ids=ids, with_payload=payload, with_vectors=with_vectors
            )
        return {
            str(p.payload[schema.id_field]): StoredRecord(
                str(p.payload[schema.id_field]),
                p.payload,
                p.vector if isinstance(p.vector, dict) else None,  # type: ignore[arg-type]
            )
            for p in points
            if p.payload
        }

    def hydrate_records(
        self, schema: DomainSchema, record_ids: Sequence[str], with_vectors: bool = False
    ) -> dict[str, StoredRecord]:
        """:meth:`retrieve_records` for the query side: payloads without the content hashes
        and the entity graph's keys (writers' bookkeeping: the largest part of a payload to
        send; the graph walk reads them with :meth:`retrieve_records`). Nothing is cached on a
        server, where other writers exist (:class:`LocalQdrantStore` caches)."""
        return self.retrieve_records(schema, record_ids, with_vectors, without=READ_WITHOUT)

    def clear_record_cache(self) -> None:
        """Forget the records kept by :meth:`hydrate_records` (benchmarks time searches cold)."""
        self.records.invalidate()

    def _written(self) -> None:
        """Forget what this store keeps of the collection (any write may change it)."""
        self.records.invalidate()

    @staticmethod
    def _vector(vectors: dict[str, list[float]], sparse: SparseVector | None) -> dict[str, Any]:
        out: dict[str, Any] = dict(vectors)
        if sparse is not None:
            out[SPARSE_VECTOR] = qm.SparseVector(
                indices=list(sparse.indices), values=list(sparse.values)
            )
        return out

    def upsert(self, schema: DomainSchema, points: Sequence[PointWrite]) -> None:
        """Insert or replace whole points."""
        if not points:
            return
        structs = [
            qm.PointStruct(
                id=point_id(schema.name, p.id),
                vector=self._vector(p.vectors, p.sparse),
                payload=p.payload,
            )
            for p in points
        ]
        with self._lock:
            self._written()
            self._c(schema).upsert(self.collection(schema), points=structs, wait=True)

    def update_points(
        self,
        schema: DomainSchema,
        vectors: Sequence[VectorUpdate],
        payloads: Mapping[str, dict[str, Any]],
    ) -> None:
        """Replace some named vectors and overwrite payloads in ONE request, vectors first.

        One request, so that a failed write cannot leave new vectors under old content hashes
        (a later change back to the old content would then keep the stale vector)."""
        ops: list[Any] = []
        updates = [
            qm.PointVectors(
                id=point_id(schema.name, u.id), vector=self._vector(u.vectors, u.sparse)
            )
            for u in vectors
        ]
        if updates:
            ops.append(qm.UpdateVectorsOperation(update_vectors=qm.UpdateVectors(points=updates)))
        ops += [
            qm.OverwritePayloadOperation(
                overwrite_payload=qm.SetPayload(
                    payload=payload, points=[point_id(schema.name, rid)]
                )
            )
            for rid, payload in payloads.items()
        ]
        if ops:
            with self._lock:
                self._written()
                self._c(schema).batch_update_points(self.collection(schema), update_operations=ops)

    def update_sparse(self, schema: DomainSchema, vectors: Mapping[str, SparseVector]) -> None:
        """Replace the sparse ``bm25`` vector of existing points (record id -> vector); their
        dense vectors and payloads stay as they are."""
        if vectors:
            points = [
                qm.PointVectors(id=point_id(schema.name, rid), vector=self._vector({}, vec))
                for rid, vec in vectors.items()
            ]
            with self._lock:
                self._written()
                self._c(schema).update_vectors(self.collection(schema), points=points, wait=True)

    def metadata_of(self, schema: DomainSchema) -> dict[str, Any]:
        """The collection's metadata (``{}`` when none, or the server is too old to keep it)."""
        with self._lock:
            info = self._c(schema).get_collection(self.collection(schema))
        return dict(getattr(info.config, "metadata", None) or {})

    def set_metadata(self, schema: DomainSchema, metadata: Mapping[str, Any]) -> None:
        """Merge ``metadata`` into the collection's metadata (top-level keys replaced)."""
        with self._lock:
            self._c(schema).update_collection(self.collection(schema), metadata=dict(metadata))

    def delete(self, schema: DomainSchema, record_ids: Sequence[str]) -> None:
        """Delete the points of ``record_ids`` (missing ones are ignored)."""
        if record_ids:
            with self._lock:
                self._written()
                self._c(schema).delete(
                    self.collection(schema),
                    points_selector=qm.PointIdsList(
                        points=[point_id(schema.name, r) for r in record_ids]
                    ),
                )

    # ----- reads ------------------------------------------------------------------------------

    def query_dense(
        self,
        schema: DomainSchema,
        aspect: str,
        vector: Sequence[float] | np.ndarray,
        top_k: int,
        filters: Sequence[Filter] = (),
        exclude_ids: Sequence[str] = (),
    ) -> list[ScoredRecord]:
        """Nearest neighbours on one named vector (cosine), best first; ``filters`` and
        ``exclude_ids`` compile to a Qdrant payload filter (:func:`to_qdrant`). Ids only."""
        flt = to_qdrant(schema, filters, exclude_ids)
        with self._lock:
            resp = self._c(schema).query_points(
                self.collection(schema),
                query=list(map(float, vector)),
                using=aspect,
                query_filter=flt,
                limit=top_k,
                # Ids only: most hits do not survive fusion, and copying payloads is the bulk
                # of a local-mode query; the executor fetches the payloads it keeps.
                with_payload=[schema.id_field],
            )
        return [ScoredRecord(str(p.payload[schema.id_field]), p.score, {}) for p in resp.points]

    def query_sparse(
        self, schema: DomainSchema, vector: SparseVector, top_k: int, flt: qm.Filter | None
    ) -> list[ScoredRecord]:
        """Sparse (BM25 with IDF modifier) search on the server's ``bm25`` vector."""
        query = qm.SparseVector(indices=list(vector.indices), values=list(vector.values))
        with self._lock:
            resp = self._c(schema).query_points(
                self.collection(schema),
                query=query,
                using=SPARSE_VECTOR,
                query_filter=flt,
                limit=top_k,
                with_payload=True,
            )
        return [
            ScoredRecord(str(p.payload[schema.id_field]), p.score, p.payload) for p in resp.points
        ]

    def sparse_counts(self, schema: DomainSchema, indices: Sequence[int], cap: int) -> list[int]:
        """Points holding each sparse index, up to ``cap``: one ``query_batch_points`` call of
        single-index queries."""
        if not indices:
            return []
        requests = [
            qm.QueryRequest(
                query=qm.SparseVector(indices=[i], values=[1.0]),
                using=SPARSE_VECTOR,
                limit=cap,
                with_payload=False,
            )
            for i in indices
        ]
        with self._lock:
            found = self._c(schema).query_batch_points(self.collection(schema), requests)
        return [len(resp.points) for resp in found]

    def has_sparse(self, schema: DomainSchema) -> bool:
        """Whether the domain's collection carries the sparse ``bm25`` vector (every one this
        version creates does; local-mode ones written before it kept BM25 in bm25s)."""
        if not self.exists(schema):
            return False
        with self._lock:
            info = self._c(schema).get_collection(self.collection(schema))
        return SPARSE_VECTOR in (info.config.params.sparse_vectors or {})

    def query_hybrid_rrf(
        self,
        schema: DomainSchema,
        aspect: str,
        dense: Sequence[float],
        sparse: SparseVector,
        top_k: int,
        rrf_k: int = 60,
        flt: qm.Filter | None = None,
    ) -> list[ScoredRecord]:
        """Dense (``aspect``) and sparse (``bm25``) top-``top_k`` prefetches fused by Qdrant's
        own RRF in one ``query_points`` call; the collection needs the sparse vector
        (:meth:`has_sparse`). Best first, ids only.

        Qdrant scores ``1 / (k + position)`` with the position counted from 0, so it is given
        ``k = rrf_k + 1`` to compute this project's ``sum 1 / (rrf_k + rank)``, rank from 1.
        """
        with self._lock:
            resp = self._c(schema).query_points(
                self.collection(schema),
                prefetch=[
                    qm.Prefetch(
                        query=list(map(float, dense)), using=aspect, limit=top_k, filter=flt
                    ),
                    qm.Prefetch(
                        query=qm.SparseVector(
                            indices=list(sparse.indices), values=list(sparse.values)
                        ),
                        using=SPARSE_VECTOR,
                        limit=top_k,
                        filter=flt,
                    ),
                ],
                query=qm.RrfQuery(rrf=qm.Rrf(k=rrf_k + 1)),
                limit=top_k,
                with_payload=[schema.id_field],
            )
        return [ScoredRecord(str(p.payload[schema.id_field]), p.score, {}) for p in resp.points]

    def vector_of(self, schema: DomainSchema, record_id: str, aspect: str) -> list[float] | None:
        """The stored vector of one aspect of a record (None when the record is absent)."""
        found = self.retrieve_records(schema, [record_id], with_vectors=True)
        rec = found.get(record_id)
        if rec is None or rec.vectors is None:
            return None
        vec = rec.vectors.get(aspect)
        return list(vec) if vec is not None else None  # type: ignore[arg-type]

    def vectors_of(
        self, schema: DomainSchema, record_ids: Sequence[str], aspect: str
    ) -> dict[str, list[float]]:
        """The stored ``aspect`` vectors of ``record_ids`` keyed by record id (records absent
        or without that vector are left out; the sparse ``bm25`` one comes as a
        :class:`~agentic_search.wire.SparseVector`). One ``retrieve`` with only the id field of the
        payload, so no payload is copied."""
        if not record_ids:
            return {}
        ids = [point_id(schema.name, r) for r in dict.fromkeys(record_ids)]
        with self._lock:
            points = self._c(schema).retrieve(
                self.collection(schema),
                ids=ids,
                with_payload=[schema.id_field],
                with_vectors=[aspect],
            )
        out: dict[str, list[float]] = {}
        for p in points:
            vec = p.vector.get(aspect) if isinstance(p.vector, dict) else None
            if vec is not None and p.payload and schema.id_field in p.payload:
                out[str(p.payload[schema.id_field])] = (
                    SparseVector(list(vec.indices), list(vec.values))  # type: ignore[assignment]
                    if isinstance(vec, qm.SparseVector)
                    else list(vec)  # type: ignore[arg-type]
                )
        return out

    def scroll(
        self,
        schema: DomainSchema,
        payload: Sequence[str] | None = None,
        *,
        flt: qm.Filter | None = None,
        batch: int = 512,
    ) -> Iterator[dict[str, Any]]:
        """Every payload (only the keys in ``payload`` when given) matching ``flt`` (all points
        when None), in point-id order."""
        selector: bool | list[str] = list(payload) if payload is not None else True
        offset = None
        while True:
            with self._lock:
                points, offset = self._c(schema).scroll(
                    self.collection(schema),
                    scroll_filter=flt,
                    limit=batch,
                    offset=offset,
                    with_payload=selector,
                )
            for p in points:
                if p.payload:
                    yield p.payload
            if offset is None:
                break

    def close(self) -> None:
        """Release the client."""
        with self._lock:
            if self.client is not None:
                self.client.close()


__all__ = ["READ_WITHOUT", "QdrantStore"]
