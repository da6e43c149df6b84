"""Qdrant Edge adapter of the :class:`~agentic_search.ports.VectorStore` port
(``VECTOR_STORE=edge``): Qdrant's Rust engine in-process (``qdrant-edge-py``), one shard
directory per collection under ``QDRANT_EDGE_PATH``.

Each shard holds a named dense vector per aspect (cosine), the sparse ``bm25`` vector with
the IDF modifier (:mod:`agentic_search.adapters.edge.sparse`) and the payload, with payload
indexes on every filterable field and the id field, as a Qdrant server collection has. Point
ids are the UUIDv5 of :func:`~agentic_search.adapters.qdrant.ids.point_id`, the same in every
engine. The shards themselves (open, lock, damage check, pause, unload, drop, close) are the
:class:`~.shards.ShardRegistry`'s; this module is the schema and identity, the writes and the
reads (through the shared :class:`~agentic_search.adapters.record_cache.RecordCache` and a
point id -> record id map). The WAL is always on (every update is logged before it is
applied). New segments are searched exactly (brute force) until :meth:`EdgeStore.optimize`
builds their HNSW indexes.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import qdrant_edge as qe

from agentic_search.adapters.edge.filters import to_edge
from agentic_search.adapters.edge.shard_files import ShardFiles
from agentic_search.adapters.edge.shards import CONFIG_FILE, LostRecords, ShardRegistry
from agentic_search.adapters.engine_failures import (
    is_engine_failure,
    mismatch_message,
    missing_vectors,
)
from agentic_search.adapters.qdrant.ids import point_id
from agentic_search.adapters.record_cache import RECORD_CACHE, RecordCache
from agentic_search.config import Settings
from agentic_search.logic.schema import DomainSchema, domain_argument
from agentic_search.ports import VectorStoreError
from agentic_search.wire import (
    ENTITY_KEY,
    HASHES_KEY,
    LINKED_FROM_KEY,
    LINKS_KEY,
    SPARSE_VECTOR,
    Filter,
    PointWrite,
    ScoredRecord,
    SparseVector,
    StoredRecord,
    VectorUpdate,
)
from agentic_search.wire.sync import Holdings

#: Payload keys the query side's reads leave out (as the local-mode store's).
READ_WITHOUT = [HASHES_KEY, ENTITY_KEY, LINKS_KEY, LINKED_FROM_KEY]
#: Point id -> record id pairs a store keeps per collection (see _query); past it, it restarts.
ID_MAP = 1_000_000


def _index_kind(kind: str, contains: bool) -> Any:
    """The Edge payload index of a schema field type (a phrase-matching full-text index for a
    field filtered with ``contains``: case-insensitive whole words)."""
    if contains:
        return qe.TextIndexParams(
            tokenizer=qe.TokenizerType.Word, lowercase=True, phrase_matching=True
        )
    return {
        "string": qe.PayloadSchemaType.Keyword,
        "list": qe.PayloadSchemaType.Keyword,
        "number": qe.PayloadSchemaType.Float,
        "integer": qe.PayloadSchemaType.Float,
        "boolean": qe.PayloadSchemaType.Bool,
    }[kind]


def _vector(vectors: Mapping[str, Sequence[float]], sparse: SparseVector | None) -> dict:
    out: dict[str, Any] = {k: list(map(float, v)) for k, v in vectors.items()}
    if sparse is not None:
        out[SPARSE_VECTOR] = qe.SparseVector(list(sparse.indices), list(sparse.values))
    return out


def _vector_params(dim: int, on_disk: bool) -> qe.EdgeVectorParams:
    """A dense named vector's parameters (cosine). ``on_disk``: the float32 vectors
    memory-mapped and read on demand (``Memory.Cold``; the default, ``Cached``, loads them
    all when the shard opens) and an int8 scalar quantization pinned in RAM; searches walk
    the quantized copy and rescore the candidates with the originals."""
    if not on_disk:
        return qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine)
    return qe.EdgeVectorParams(
        size=dim,
        distance=qe.Distance.Cosine,
        memory=qe.Memory.Cold,
        quantization_config=qe.ScalarQuantizationConfig(
            type=qe.ScalarType.Int8, quantile=0.99, memory=qe.Memory.Pinned
        ),
    )


class EngineWeights(Sequence[float]):
    """A stored sparse vector's weights, converted from the engine's vector when first read.

    What the query side reads a record's sparse vector for (term presence) needs only its
    indices; converting the weights as well cost as much again as reading the vector
    (docs/benchmarks.md). Each read of the engine vector's ``indices`` or
    ``values`` builds a new list, so each is read at most once. Equal to any sequence of the
    same floats.
    """

    __slots__ = ("_engine", "_values")

    def __init__(self, engine: Any) -> None:
        self._engine: Any = engine
        self._values: list[float] | None = None

    def _list(self) -> list[float]:
        if self._values is None:
            self._values = list(self._engine.values)
            self._engine = None
        return self._values

    def __getitem__(self, index: Any) -> Any:
        return self._list()[index]

    def __len__(self) -> int:
        return len(self._list())

    def __iter__(self) -> Iterator[float]:
        return iter(self._list())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return self._list() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable-looking, like the list it stands for

    def __repr__(self) -> str:
        return repr(self._list())


def _engine_sparse(vec: Any) -> SparseVector:
    """The engine's sparse vector as ours: its indices read once (a fresh list), its weights
    on first use (:class:`EngineWeights`)."""
    return SparseVector(vec.indices, EngineWeights(vec))


def _stored_vectors(vector: Any) -> dict[str, Any] | None:
    if not isinstance(vector, dict):
        return None
    return {
        k: _engine_sparse(v) if isinstance(v, qe.SparseVector) else v for k, v in vector.items()
    }


def _sparse_of(vector: Any) -> SparseVector | None:
    """The sparse BM25 vector of a point's vectors (None when it has none)."""
    vec = vector.get(SPARSE_VECTOR) if isinstance(vector, dict) else None
    return _engine_sparse(vec) if vec is not None else None


@contextlib.contextmanager
def _query_failures() -> Iterator[None]:
    """An engine failure of a query (a plain Exception such as an unknown vector name, or a
    Rust panic: :func:`~agentic_search.adapters.engine_failures.is_engine_failure`) becomes
    one :class:`VectorStoreError` line; anything else passes through."""
    try:
        yield
    except BaseException as exc:
        if not is_engine_failure(exc):
            raise
        reason = " ".join(str(exc).split())[:300]
        raise VectorStoreError(f"Qdrant Edge query failed: {reason}") from exc


class EdgeStore(ShardFiles):
    """Named-vector Edge shard per domain; see the module docstring for the layout. What its
    files say without the engine (the embedder identity sidecar) is :class:`ShardFiles`'s.

    Raises (from any method that opens a shard):
        VectorStoreError: when another process holds the shard's lock, or the engine fails.
    """

    server_mode = False
    #: queries run in this process holding the GIL (``source_pool.runs_in_process``)
    in_process = True

    def __init__(
        self,
        settings: Settings,
        root: Path | None = None,
        holdings: Callable[[DomainSchema], Holdings | None] | None = None,
        pending: Callable[[DomainSchema], bool] | None = None,
    ) -> None:
        super().__init__(settings, root)
        self.root.mkdir(parents=True, exist_ok=True)
        #: the open shards, their locks and damage (``holdings``: what the sync status says a
        #: domain's shard holds, checked when an existing shard opens; None: not checked);
        #: with ``QDRANT_EDGE_READER``, reads open private copies (``pending``: whether a
        #: domain's write is journaled, which a reader does not copy)
        self.shards = ShardRegistry(
            settings, self.root, holdings, reader=settings.qdrant_edge_reader, pending=pending
        )
        self._lock = self.shards.lock
        #: new shards: vectors memory-mapped + int8 quantized copy in RAM (QDRANT_EDGE_ON_DISK)
        self.on_disk = settings.qdrant_edge_on_disk
        #: with the int8 copy: 2x the candidates from it, rescored with the float32 vectors
        self._dense_params = (
            qe.SearchParams(
                quantization=qe.QuantizationSearchParams(rescore=True, oversampling=2.0)
            )
            if self.on_disk
            else None
        )
        #: records read back by the query side (see hydrate_records); capacity 0: none kept
        self.records = RecordCache(RECORD_CACHE)
        #: collection -> {point id: record id}: fixed pairs (the id is the UUIDv5 of the
        #: record id), never stale, so queries need not read the payload (see _query)
        self._rids: dict[str, dict[int, str]] = {}
        #: False: queries read the record id from each hit's payload, as before the map
        self.map_ids = True

    # ----- shards (the registry's) ------------------------------------------------------------

    def collection(self, schema: DomainSchema) -> str:
        """Collection (shard directory) name of a domain."""
        return self.shards.collection(schema)

    def shard_dir(self, schema: DomainSchema) -> Path:
        """The domain's shard directory."""
        return self.shards.shard_dir(schema)

    def _shard(self, schema: DomainSchema) -> qe.EdgeShard:
        return self.shards.shard(schema)

    @property
    def waiting(self) -> Callable[[str], None] | None:
        """Called with the writer's pid while a reader waits for a write to finish (it may
        raise to give up); None: wait without a word."""
        return self.shards.waiting

    @waiting.setter
    def waiting(self, hook: Callable[[str], None] | None) -> None:
        self.shards.waiting = hook

    def verify(self, schema: DomainSchema) -> None:
        """Check the domain's shard against what the sync status says it holds
        (:meth:`ShardRegistry.verify`); nothing when it does not exist.

        Raises:
            VectorStoreError: the one-line damage error.
        """
        self.shards.verify(schema)

    def compile_filter(
        self, schema: DomainSchema, filters: Sequence[Filter], exclude_ids: Sequence[str] = ()
    ) -> qe.Filter | None:
        """The Edge filter of ``filters`` and the excluded ids (:func:`to_edge`).

        Raises:
            FilterError: when a filter is not allowed by the schema.
        """
        return to_edge(schema, filters, exclude_ids)

    def acquire_writer(self, schema: DomainSchema) -> None:
        """Take the domain's shard lock now, whether or not its shard exists (none is created),
        and keep it until :meth:`close`: no other process can create or write the shard
        meanwhile.

        Raises:
            VectorStoreError: when another process holds it (the message names its pid).
        """
        self.shards.acquire_writer(schema)

    def exists(self, schema: DomainSchema) -> bool:
        """Whether the domain's shard exists."""
        return self.shards.exists(schema)

    def count(self, schema: DomainSchema) -> int:
        """Number of points in the domain's shard (0 if it does not exist)."""
        shard = self.shards.open(schema)
        if shard is None:
            return 0
        with self.shards.reading(schema):  # a damaged file
            return int(shard.count(qe.CountRequest(exact=True)))

    def ensure_collection(self, schema: DomainSchema, dim: int) -> None:
        """Create the shard (vectors, sparse ``bm25`` with IDF, payload indexes), or check an
        existing one has every aspect at dimension ``dim``.

        Raises:
            VectorStoreError: when an existing shard does not match (which vector and how to
                fix it), or another process holds it.
        """
        name = self.collection(schema)
        if self.exists(schema):
            self.shards.writable(schema)
            saved = json.loads((self.root / name / CONFIG_FILE).read_text())
            vectors = saved.get("vectors") or {}
            problems = missing_vectors(schema, vectors) + [
                f"vector {a!r} has dimension {vectors[a].get('size')}, the embedder produces {dim}"
                for a in schema.aspect_names
                if a in vectors and vectors[a].get("size") != dim
            ]
            if problems:
                raise VectorStoreError(
                    mismatch_message(f"Edge shard {name!r}", problems, domain_argument(schema))
                )
            self._index_payload(schema)  # a crash after create, or a field made filterable
            return
        config = qe.EdgeConfig(
            vectors={a: _vector_params(dim, self.on_disk) for a in schema.aspect_names},
            sparse_vectors={SPARSE_VECTOR: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
            wal_enabled=True,
        )
        self.shards.open(schema, config)
        self._index_payload(schema)

    def _index_payload(self, schema: DomainSchema) -> None:
        """Create the payload indexes the shard lacks: every filterable field (keyword,
        float, bool; a phrase-matching text index for ``contains``) and the id field."""
        fields = {
            fname: _index_kind(fdef.type, "contains" in fdef.filter)
            for fname, fdef in schema.filterable_fields.items()
        }
        fields.setdefault(schema.id_field, qe.PayloadSchemaType.Keyword)
        with self._lock:
            shard = self.shards.writable(schema)
            have = set(shard.info().payload_schema)
            for fname, kind in fields.items():
                if fname not in have:
                    shard.update(qe.UpdateOperation.create_field_index(fname, kind))

    def drop(self, schema: DomainSchema) -> None:
        """Delete the domain's shard directory and its sidecars if there are any
        (:meth:`ShardRegistry.drop`: also a shard that cannot be opened or was found damaged).

        Raises:
            VectorStoreError: when another process holds the shard's lock.
        """
        with self._lock:
            self.records.invalidate()
            self.shards.drop(schema)

    def optimize(self, schema: DomainSchema) -> bool:
        """Merge segments and build their HNSW indexes (blocking, holds the GIL: run it
        after a bulk ingest, never inside a request). True when anything was optimized."""
        with self._lock:
            return bool(self.shards.writable(schema).optimize())

    def info(self, schema: DomainSchema) -> Any:
        """The shard's ``ShardInfo`` (``points_count``, ``indexed_vectors_count``,
        ``segments_count``), or None when it does not exist."""
        shard = self.shards.open(schema)
        if shard is None:
            return None
        with self.shards.reading(schema):
            return shard.info()

    def writes_paused(
        self, schema: DomainSchema
    ) -> contextlib.AbstractContextManager[qe.EdgeShard]:
        """The domain's open shard, flushed, with this store's writes (and the opening of
        shards) held off for the block: its directory can be copied consistently
        (:mod:`~agentic_search.adapters.edge.optimize`). Call :meth:`unload` inside the block
        before replacing its files.

        Raises:
            VectorStoreError: when the shard does not exist or cannot be opened.
        """
        return self.shards.writes_paused(schema)

    def unload(self, schema: DomainSchema) -> None:
        """Flush and close the domain's shard but keep its lock: the next read or write loads
        its directory anew (after an optimized copy was swapped in)."""
        self.shards.unload(schema)

    # ----- writes -----------------------------------------------------------------------------

    def _written(self) -> None:
        """Forget the records kept by :meth:`hydrate_records` (any write may change them)."""
        self.records.invalidate()

    def _update(self, schema: DomainSchema, op: Any) -> None:
        with self._lock:
            self._written()
            try:
                self.shards.writable(schema).update(op)
            except VectorStoreError:
                raise
            except Exception as exc:
                raise VectorStoreError(f"Qdrant Edge update failed: {exc}") from exc

    def upsert(self, schema: DomainSchema, points: Sequence[PointWrite]) -> None:
        """Insert or replace whole points, one engine operation per point, in the order given.

        The engine places the new points of one batch in an order of its own (a hash map's,
        different in every process), and that order breaks ties between equal scores (records
        whose aspect texts are the same have the same vector): a catalog indexed twice answered
        the same query differently. One point at a time, it is placed in the order written
        (a replaced point keeps its place), at the same cost as a batch (docs/benchmarks.md)."""
        for p in points:
            point = qe.Point(point_id(schema.name, p.id), _vector(p.vectors, p.sparse), p.payload)
            self._update(schema, qe.UpdateOperation.upsert_points([point]))

    def update_points(
        self,
        schema: DomainSchema,
        vectors: Sequence[VectorUpdate],
        payloads: Mapping[str, dict[str, Any]],
    ) -> None:
        """Replace some named vectors and overwrite payloads, atomically per point.

        Edge has no batch of mixed operations, so a point whose vectors change is read back
        (all its vectors) and upserted whole with its new payload: one operation per point,
        so a failed write cannot leave new vectors under old content hashes. Points whose
        payload alone changes get a payload overwrite."""
        updates = {u.id: u for u in vectors}
        with self._lock:
            self.shards.writable(schema)  # the points are read back from what is written
            current = self.retrieve_records(schema, list(updates), with_vectors=True)
            points = []
            for rid, u in updates.items():
                rec = current.get(rid)
                if rec is None:
                    continue  # deleted meanwhile: nothing to update, as on a server
                merged = {k: v for k, v in (rec.vectors or {}).items() if k != SPARSE_VECTOR}
                merged.update(u.vectors)
                old_sparse = (rec.vectors or {}).get(SPARSE_VECTOR)
                payload = payloads.get(rid, rec.payload)
                points.append(
                    qe.Point(
                        point_id(schema.name, rid),
                        _vector(merged, u.sparse or old_sparse),
                        payload,
                    )
                )
            if points:
                self._update(schema, qe.UpdateOperation.upsert_points(points))
            for rid, payload in payloads.items():
                if rid not in updates:
                    op = qe.UpdateOperation.overwrite_payload([point_id(schema.name, rid)], payload)
                    self._update(schema, op)

    def update_sparse(self, schema: DomainSchema, vectors: Mapping[str, SparseVector]) -> None:
        """Replace the sparse ``bm25`` vector of existing points (record id -> vector); their
        dense vectors and payloads stay as they are."""
        if vectors:
            op = qe.UpdateOperation.update_vectors(
                [
                    qe.PointVectors(point_id(schema.name, rid), _vector({}, vec))
                    for rid, vec in vectors.items()
                ]
            )
            self._update(schema, op)

    def delete(self, schema: DomainSchema, record_ids: Sequence[str]) -> None:
        """Delete the points of ``record_ids`` (missing ones are ignored)."""
        if record_ids:
            ids = [point_id(schema.name, r) for r in record_ids]
            self._update(schema, qe.UpdateOperation.delete_points(ids))

    # ----- reads ------------------------------------------------------------------------------

    def retrieve_records(
        self,
        schema: DomainSchema,
        record_ids: Sequence[str],
        with_vectors: bool = False,
        without: Sequence[str] = (),
    ) -> dict[str, StoredRecord]:
        """Existing points for ``record_ids`` keyed by record id (missing ids are absent);
        payloads leave out the keys in ``without``; sparse vectors come as
        :class:`~agentic_search.wire.SparseVector`."""
        if not record_ids:
            return {}
        return self._retrieve(schema, record_ids, with_vectors, without, sparse=False)

    def _retrieve(
        self,
        schema: DomainSchema,
        record_ids: Sequence[str],
        with_vectors: bool,
        without: Sequence[str],
        *,
        sparse: bool,
    ) -> dict[str, StoredRecord]:
        """:meth:`retrieve_records`; ``sparse`` (without ``with_vectors``): the sparse
        vector read along with the payload into ``StoredRecord.sparse`` (the engine reads
        both in one pass: what term presence reads next costs no second ``retrieve``)."""
        if not record_ids:
            return {}
        ids = [point_id(schema.name, r) for r in dict.fromkeys(record_ids)]
        payload: Any = qe.PayloadSelector.Exclude(list(without)) if without else True
        vectors: Any = with_vectors or ([SPARSE_VECTOR] if sparse else False)
        with self.shards.reading(schema):  # a damaged payload or vector file
            points = self._shard(schema).retrieve(ids, with_payload=payload, with_vector=vectors)
        out = {}
        for p in points:
            payload = p.payload  # each read of the property converts the payload anew
            if payload and schema.id_field in payload:
                rid = str(payload[schema.id_field])
                if with_vectors:
                    out[rid] = StoredRecord(rid, payload, _stored_vectors(p.vector))
                elif sparse:
                    out[rid] = StoredRecord(rid, payload, sparse=_sparse_of(p.vector))
                else:
                    out[rid] = StoredRecord(rid, payload)
        return out

    def hydrate_records(
        self, schema: DomainSchema, record_ids: Sequence[str], with_vectors: bool = False
    ) -> dict[str, StoredRecord]:
        """:meth:`retrieve_records` for the query side, without the writers' bookkeeping keys,
        through the record cache (:class:`~agentic_search.adapters.record_cache.RecordCache`):
        it is dropped on any write through this store (the shard's only writer: it holds the
        lock; a reader process must reopen the shard, and so this store, to see another's
        writes). The records returned are shared: callers must not mutate them."""
        if not record_ids:
            return {}
        return self.records.read(
            self.collection(schema),
            record_ids,
            with_vectors,
            lambda missing: self._retrieve(
                schema, missing, with_vectors, READ_WITHOUT, sparse=True
            ),
        )

    def clear_record_cache(self) -> None:
        """Forget the records kept by :meth:`hydrate_records` (benchmarks time searches cold)."""
        self.records.invalidate()

    def _hit_payload(self, schema: DomainSchema) -> Any:
        """What a query asks of each hit's payload: nothing when ids are mapped (_query)."""
        return False if self.map_ids else [schema.id_field]

    def _query(self, schema: DomainSchema, request: qe.QueryRequest) -> list[ScoredRecord]:
        """Run ``request`` (built with ``with_payload=self._hit_payload(schema)``) and return
        its hits as record ids with scores.

        Reading even the id field of each hit's payload costs the engine several times what the
        ids alone cost (benchmarks/README.md), so the request is sent without payload and each
        point id is turned into its record id through a map the store keeps (a pair never
        changes: the point id is derived from the record id); ids not in it yet are read in
        one ``retrieve`` of the id field and added."""
        shard = self._shard(schema)
        with _query_failures():
            points = shard.query(request)
        if not self.map_ids:
            return [ScoredRecord(str(p.payload[schema.id_field]), p.score, {}) for p in points]
        rids = self._rids.setdefault(self.collection(schema), {})
        # each read of a point's id builds a new uuid.UUID: read it once, and key the map by
        # its 128-bit integer (an int hashes and compares in C, a UUID in Python)
        ids = [p.id for p in points]
        keys = [pid.int for pid in ids]
        got = [rids.get(k) for k in keys]
        if None in got:
            missing = list(
                {k: pid for k, pid, rid in zip(keys, ids, got, strict=True) if rid is None}.values()
            )
            found = shard.retrieve(missing, with_payload=[schema.id_field], with_vector=False)
            if len(rids) + len(found) > ID_MAP:
                rids.clear()
            for p in found:
                payload = p.payload
                if payload and schema.id_field in payload:
                    rids[p.id.int] = str(payload[schema.id_field])
            got = [
                rid if rid is not None else rids.get(k) for k, rid in zip(keys, got, strict=True)
            ]
        return [
            ScoredRecord(rid, p.score, {})
            for p, rid in zip(points, got, strict=True)
            if rid is not None
        ]

    def query_dense(
        self,
        schema: DomainSchema,
        aspect: str,
        vector: Sequence[float] | np.ndarray,
        top_k: int,
        filters: Sequence[Filter] = (),
        exclude_ids: Sequence[str] = (),
    ) -> list[ScoredRecord]:
        """Nearest neighbours on one named vector (cosine), best first, filters and excluded
        ids pushed down (:func:`to_edge`); ids only."""
        request = qe.QueryRequest(
            limit=top_k,
            query=qe.Query.Nearest(list(map(float, vector)), using=aspect),
            filter=to_edge(schema, filters, exclude_ids),
            with_payload=self._hit_payload(schema),
            params=self._dense_params,
        )
        return self._query(schema, request)

    def query_sparse(
        self, schema: DomainSchema, vector: SparseVector, top_k: int, flt: qe.Filter | None
    ) -> list[ScoredRecord]:
        """Sparse search on the ``bm25`` vector (scores: sum of IDF x stored weight), ids
        only."""
        query = qe.SparseVector(list(vector.indices), list(vector.values))
        request = qe.QueryRequest(
            limit=top_k,
            query=qe.Query.Nearest(query, using=SPARSE_VECTOR),
            filter=flt,
            with_payload=self._hit_payload(schema),
        )
        return self._query(schema, request)

    def sparse_counts(self, schema: DomainSchema, indices: Sequence[int], cap: int) -> list[int]:
        """Points holding each sparse index, up to ``cap``: one single-index query each, sent
        as one ``query_batch`` (far cheaper than one request per index: docs/benchmarks.md)."""
        if not indices:
            return []
        requests = [
            qe.QueryRequest(
                limit=cap,
                query=qe.Query.Nearest(qe.SparseVector([i], [1.0]), using=SPARSE_VECTOR),
                with_payload=False,
            )
            for i in indices
        ]
        with _query_failures():
            found = self._shard(schema).query_batch(qe.QueryBatchRequest(requests))
        return [len(points) for points in found]

    def has_sparse(self, schema: DomainSchema) -> bool:
        """Whether the domain's shard exists (every Edge shard carries the ``bm25`` vector)."""
        return self.exists(schema)

    def query_hybrid_rrf(
        self,
        schema: DomainSchema,
        aspect: str,
        dense: Sequence[float],
        sparse: SparseVector,
        top_k: int,
        rrf_k: int = 60,
        flt: qe.Filter | None = None,
    ) -> list[ScoredRecord]:
        """Dense and sparse top-``top_k`` prefetches fused by the engine's RRF in one query,
        ``sum 1 / (rrf_k + rank)`` with rank from 1 (the engine counts from 0, hence
        ``k = rrf_k + 1``); ids only, best first."""
        request = qe.QueryRequest(
            limit=top_k,
            prefetches=[
                qe.Prefetch(
                    limit=top_k,
                    query=qe.Query.Nearest(list(map(float, dense)), using=aspect),
                    filter=flt,
                    params=self._dense_params,
                ),
                qe.Prefetch(
                    limit=top_k,
                    query=qe.Query.Nearest(
                        qe.SparseVector(list(sparse.indices), list(sparse.values)),
                        using=SPARSE_VECTOR,
                    ),
                    filter=flt,
                ),
            ],
            query=qe.Fusion.Rrf(k=rrf_k + 1),
            with_payload=self._hit_payload(schema),
        )
        return self._query(schema, request)

    def vector_of(self, schema: DomainSchema, record_id: str, aspect: str) -> list[float] | None:
        """The stored vector of one aspect of a record (None when the record is absent)."""
        return self.vectors_of(schema, [record_id], aspect).get(record_id)

    def vectors_of(
        self, schema: DomainSchema, record_ids: Sequence[str], aspect: str
    ) -> dict[str, list[float]]:
        """The stored ``aspect`` vectors of ``record_ids`` keyed by record id (records absent
        or without that vector are left out); ``aspect`` may be the sparse ``bm25`` vector,
        which comes as a :class:`~agentic_search.wire.SparseVector`. Records the query side
        read with their vectors (:meth:`hydrate_records`) answer from its cache; the others in
        one ``retrieve`` of that vector alone."""
        if not record_ids:
            return {}
        out, missing = self.records.vectors(self.collection(schema), record_ids, aspect)
        if not missing:
            return out
        # a point's id is derived from its record id: the points are asked for by the ids
        # derived here and named back through them, without reading the id field of their
        # payloads (which cost the engine more than the vectors)
        rids = {point_id(schema.name, r): r for r in missing}
        with self.shards.reading(schema):  # a damaged payload or vector file
            points = self._shard(schema).retrieve(
                list(rids), with_payload=False, with_vector=[aspect]
            )
        for p in points:
            vector = p.vector  # read once: each read converts anew
            vec = vector.get(aspect) if isinstance(vector, dict) else None
            rid = rids.get(str(p.id))
            if vec is not None and rid is not None:
                # the engine's lists are fresh: kept as they are
                out[rid] = _engine_sparse(vec) if isinstance(vec, qe.SparseVector) else vec
        return out

    def scroll(
        self,
        schema: DomainSchema,
        payload: Sequence[str] | None = None,
        *,
        flt: qe.Filter | None = None,
        batch: int = 512,
    ) -> Iterator[dict[str, Any]]:
        """Every payload (only the keys in ``payload`` when given) matching ``flt`` (all points
        when None), in point-id order; nothing when the shard does not exist."""
        shard = self.shards.open(schema)
        if shard is None:
            return
        selector: Any = list(payload) if payload is not None else True
        offset = None
        while True:
            request = qe.ScrollRequest(
                offset=offset, limit=batch, filter=flt, with_payload=selector, with_vector=False
            )
            with self.shards.reading(schema):  # a damaged payload file
                points, offset = shard.scroll(request)
            for p in points:
                payload = p.payload
                if payload:
                    yield payload
            if offset is None:
                break

    def close(self) -> None:
        """Flush and close every open shard, then release their locks."""
        with self._lock:
            self.records.invalidate()
            self.shards.close()


__all__ = ["ID_MAP", "READ_WITHOUT", "EdgeStore", "LostRecords"]
