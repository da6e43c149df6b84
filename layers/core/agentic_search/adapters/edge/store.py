"""Qdrant Edge adapter of the :class:`~agentic_search.ports.VectorStore` port
(``VECTOR_STORE=edge``): Qdrant's Rust engine in-process (``qdrant-edge-py``), one shard
directory per collection under ``QDRANT_EDGE_PATH``.

Each shard holds a named dense vector per aspect (cosine), the sparse ``bm25`` vector with
the IDF modifier (:mod:`agentic_search.adapters.edge.sparse`) and the payload, with payload
indexes on every filterable field and the id field, as a Qdrant server collection has. Point
ids are the UUIDv5 of :func:`~agentic_search.adapters.qdrant.ids.point_id`, the same in every
engine. Lifecycle: an exclusive lock per shard (:class:`~.lock.ShardLock`) taken before the
shard is opened, the WAL always on (every update is logged before it is applied), a flush
and the lock released on :meth:`EdgeStore.close`. New segments are searched exactly (brute
force) until :meth:`EdgeStore.optimize` builds their HNSW indexes.

Long: one class for the whole port (as the local-mode adapter), plus the sparse and hybrid
queries the keyword index and the evaluation use; the shard registry, the per-shard locks
and every read and write share one map and one lock.

Damage the engine does not report (a truncated id tracker answers half the points, a zeroed
vector storage status none of that vector) is found when a shard opens: it is compared with
what the sync status says it holds (``holdings``, wired in :mod:`agentic_search.wiring`), and
answers the one-line damage error naming ``ingest --rebuild`` as an unreadable file does.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import qdrant_edge as qe

from agentic_search.adapters.damage import damage_message, is_engine_failure
from agentic_search.adapters.edge.filters import to_edge
from agentic_search.adapters.edge.lock import ShardLock
from agentic_search.adapters.edge.shard_files import CONFIG_FILE, ShardFiles
from agentic_search.adapters.qdrant.ids import point_id
from agentic_search.config import Settings
from agentic_search.domain.schema import DomainSchema
from agentic_search.ports import VectorStoreError
from agentic_search.state import (
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
from agentic_search.state.sync import Holdings

#: Payload keys the query side's reads leave out (as the local-mode store's).
READ_WITHOUT = [HASHES_KEY, ENTITY_KEY, LINKS_KEY, LINKED_FROM_KEY]
#: Points whose records (payload and vectors) the query side's reads keep (see read_records).
RECORD_CACHE = 4096
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


def _stored_vectors(vector: Any) -> dict[str, Any] | None:
    if not isinstance(vector, dict):
        return None
    return {
        k: SparseVector(list(v.indices), list(v.values)) if isinstance(v, qe.SparseVector) else v
        for k, v in vector.items()
    }


class LostRecords(Exception):
    """A shard holds less than the sync status says (the reason of its damage error)."""


class EdgeStore(ShardFiles):
    """Named-vector Edge shard per domain; see the module docstring for the layout. What its
    files say without the engine (existence, embedder identity) is :class:`ShardFiles`'s.

    Raises (from any method that opens a shard):
        VectorStoreError: when another process holds the shard's lock, or the engine fails.
    """

    server_mode = False
    #: queries run in this process holding the GIL (:func:`~agentic_search.ports.runs_in_process`)
    in_process = True

    def __init__(
        self,
        settings: Settings,
        root: Path | None = None,
        holdings: Callable[[DomainSchema], Holdings | None] | None = None,
    ) -> None:
        super().__init__(settings, root)
        #: what the sync status says a domain's shard holds (None: not checked); an existing
        #: shard is checked against it when it opens (see :meth:`verify`)
        self.holdings = holdings
        #: shard name -> the error of a shard found damaged at open (until :meth:`drop`)
        self._damage: dict[str, VectorStoreError] = {}
        self.root.mkdir(parents=True, exist_ok=True)
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
        self._shards: dict[str, qe.EdgeShard] = {}
        self._locks: dict[str, ShardLock] = {}
        self._lock = threading.RLock()
        #: (collection, record id) -> record read back by the query side (see read_records)
        self._records: OrderedDict[tuple[str, str], StoredRecord] = OrderedDict()
        #: bumped by every write: a read that started before one is not cached
        self._generation = 0
        #: how many records read_records keeps (0: none, every read asks the engine)
        self.record_cache = RECORD_CACHE
        #: collection -> {point id: record id}: fixed pairs (the id is the UUIDv5 of the
        #: record id), never stale, so queries need not read the payload (see _query)
        self._rids: dict[str, dict[Any, str]] = {}
        #: False: queries read the record id from each hit's payload, as before the map
        self.map_ids = True

    # ----- shards -----------------------------------------------------------------------------

    def _open(
        self, schema: DomainSchema, config: qe.EdgeConfig | None = None
    ) -> qe.EdgeShard | None:
        """The open shard of ``schema``: loaded when its directory holds one (and checked
        against :attr:`holdings`), created from ``config`` when given, else None. The lock is
        taken first and kept while open.

        Raises:
            VectorStoreError: the one-line damage error when it cannot be loaded or holds less
                than the sync status says (every later read answers the same error).
        """
        name = self.collection(schema)
        with self._lock:
            shard = self._shards.get(name)
            if shard is not None:
                return shard
            if name in self._damage:
                raise self._damage[name]
            path = self.root / name
            exists = (path / CONFIG_FILE).is_file()
            if not exists and config is None:
                return None
            lock = self._locks.setdefault(name, ShardLock(path))
            lock.acquire()
            try:
                if exists:
                    shard = qe.EdgeShard.load(str(path))
                else:
                    shard = qe.EdgeShard.create(str(path), config)
            except BaseException as exc:  # plain Exception, or a panic on a damaged file
                lock.release()
                if not is_engine_failure(exc):
                    raise
                raise self._damaged(name, exc) from exc
            if exists:
                try:
                    self._check(schema, shard)
                except VectorStoreError as exc:
                    shard.close()
                    lock.release()
                    self._damage[name] = exc
                    raise
            self._shards[name] = shard
            return shard

    def _check(self, schema: DomainSchema, shard: qe.EdgeShard) -> None:
        """Compare ``shard`` with what the sync status says it holds: at least as many points,
        and each sampled record with its payload and every aspect's vector. A shard whose id
        tracker or payload tracker was truncated or zeroed answers fewer records, one whose
        vector storage status was zeroed answers without that vector, all with no engine
        error: this finds them.

        Raises:
            VectorStoreError: the one-line damage error naming what is missing.
        """
        expected = self.holdings(schema) if self.holdings is not None else None
        if expected is None:
            return
        name = self.collection(schema)
        aspects = list(schema.aspect_names)
        try:
            points = shard.count(qe.CountRequest(exact=True))
            found = shard.retrieve(
                [point_id(schema.name, r) for r in expected.sample],
                with_payload=[schema.id_field],
                with_vector=aspects,
            )
        except BaseException as exc:
            if not is_engine_failure(exc):
                raise
            raise self._damaged(name, exc) from exc
        problem = None
        if points < expected.records:
            problem = (
                f"the shard holds {points} points where the sync status has "
                f"{expected.records} records synced"
            )
        else:
            have: dict[str, set[str]] = {}
            for p in found:
                payload, vector = p.payload or {}, p.vector
                if schema.id_field in payload:
                    rid = str(payload[schema.id_field])
                    have[rid] = set(vector) if isinstance(vector, dict) else set()
            for rid in expected.sample:
                if rid not in have:
                    problem = f"synced record {rid!r} is not in the shard"
                    break
                lost = [a for a in aspects if a not in have[rid]]
                if lost:
                    problem = f"synced record {rid!r} lost its {lost[0]!r} vector"
                    break
        if problem is not None:
            raise self._damaged(name, LostRecords(problem))

    def verify(self, schema: DomainSchema) -> None:
        """Check the domain's shard against what the sync status says it holds (see
        :meth:`_check`), loading it when it is not open; nothing when it does not exist.

        Raises:
            VectorStoreError: the one-line damage error.
        """
        with self._lock:
            shard = self._shards.get(self.collection(schema))
            if shard is None:
                self._open(schema)  # checked as it loads
                return
            self._check(schema, shard)

    def _damaged(self, name: str, exc: BaseException) -> VectorStoreError:
        """The one-line error of shard ``name`` that cannot be read, naming the command that
        rebuilds it (:func:`~agentic_search.adapters.damage.damage_message`)."""
        domain = name.removeprefix(self.settings.collection_prefix)
        what = f"the {domain!r} index at {self.root / name}"
        return VectorStoreError(damage_message(what, exc, domain))

    @contextlib.contextmanager
    def _reading(self, schema: DomainSchema) -> Iterator[None]:
        """Engine failures inside the block (a plain ``Exception``, or a panic on a damaged
        file: :func:`~agentic_search.adapters.damage.is_engine_failure`) become the shard's
        :meth:`_damaged` error; a ``VectorStoreError`` passes as it is."""
        try:
            yield
        except VectorStoreError:
            raise
        except BaseException as exc:
            if not is_engine_failure(exc):
                raise
            raise self._damaged(self.collection(schema), exc) from exc

    def _shard(self, schema: DomainSchema) -> qe.EdgeShard:
        shard = self._open(schema)
        if shard is None:
            raise VectorStoreError(
                f"collection {self.collection(schema)!r} does not exist in {self.root}"
            )
        return shard

    def hold(self, schema: DomainSchema) -> None:
        """Take the domain's shard lock now, whether or not its shard exists (none is created),
        and keep it until :meth:`close`: no other process can create or write the shard
        meanwhile.

        Raises:
            VectorStoreError: when another process holds it (the message names its pid).
        """
        with self._lock:
            name = self.collection(schema)
            self._locks.setdefault(name, ShardLock(self.root / name)).acquire()

    def exists(self, schema: DomainSchema) -> bool:
        """Whether the domain's shard exists."""
        return self.collection(schema) in self._shards or super().exists(schema)

    def count(self, schema: DomainSchema) -> int:
        """Number of points in the domain's shard (0 if it does not exist)."""
        shard = self._open(schema)
        if shard is None:
            return 0
        with self._reading(schema):  # a damaged file
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
            self._open(schema)
            saved = json.loads((self.root / name / CONFIG_FILE).read_text())
            vectors = saved.get("vectors") or {}
            problems = [
                f"missing named vector {a!r}"
                if a not in vectors
                else f"vector {a!r} has dimension {vectors[a].get('size')}, the embedder "
                f"produces {dim}"
                for a in schema.aspect_names
                if a not in vectors or vectors[a].get("size") != dim
            ]
            if problems:
                raise VectorStoreError(
                    f"Edge shard {name!r} does not match the current embedder/schema: "
                    + "; ".join(problems)
                    + ". Re-create it (delete the shard or use another QDRANT_EDGE_PATH / "
                    "COLLECTION_PREFIX) or switch back to the embedder it was built with."
                )
            self._index_payload(schema)  # a crash after create, or a field made filterable
            return
        config = qe.EdgeConfig(
            vectors={a: _vector_params(dim, self.on_disk) for a in schema.aspect_names},
            sparse_vectors={SPARSE_VECTOR: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
            wal_enabled=True,
        )
        self._open(schema, config)
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
            shard = self._shard(schema)
            have = set(shard.info().payload_schema)
            for fname, kind in fields.items():
                if fname not in have:
                    shard.update(qe.UpdateOperation.create_field_index(fname, kind))

    def drop(self, schema: DomainSchema) -> None:
        """Delete the domain's shard directory if there is one (taking its lock first, but not
        loading it: ``ingest --rebuild`` drops a shard that cannot be opened or was found
        damaged), and the files
        kept beside it for it (``<shard>.*.json``, e.g. the BM25 statistics).

        Raises:
            VectorStoreError: when another process holds the shard's lock.
        """
        name = self.collection(schema)
        path = self.root / name
        with self._lock:
            if name not in self._shards and not path.exists():
                return
            self._locks.setdefault(name, ShardLock(path)).acquire()
            self._written()
            shard = self._shards.pop(name, None)
            if shard is not None:
                shard.close()
            self._damage.pop(name, None)
            shutil.rmtree(path, ignore_errors=True)
            for sidecar in self.root.glob(f"{name}.*.json"):
                sidecar.unlink()
            self._locks.pop(name).release()

    def optimize(self, schema: DomainSchema) -> bool:
        """Merge segments and build their HNSW indexes (blocking, holds the GIL: run it
        after a bulk ingest, never inside a request). True when anything was optimized."""
        with self._lock:
            return bool(self._shard(schema).optimize())

    def info(self, schema: DomainSchema) -> Any:
        """The shard's ``ShardInfo`` (``points_count``, ``indexed_vectors_count``,
        ``segments_count``), or None when it does not exist."""
        shard = self._open(schema)
        if shard is None:
            return None
        with self._reading(schema):
            return shard.info()

    @contextlib.contextmanager
    def held(self, schema: DomainSchema) -> Iterator[qe.EdgeShard]:
        """The domain's open shard, flushed, with this store's writes (and the opening of
        shards) held off for the block: its directory can be copied consistently
        (:mod:`~agentic_search.adapters.edge.optimize`). Call :meth:`unload` inside the block
        before replacing its files.

        Raises:
            VectorStoreError: when the shard does not exist or cannot be opened.
        """
        with self._lock:
            shard = self._shard(schema)
            shard.flush()
            yield shard

    def unload(self, schema: DomainSchema) -> None:
        """Flush and close the domain's shard but keep its lock: the next read or write loads
        its directory anew (after an optimized copy was swapped in)."""
        with self._lock:
            shard = self._shards.pop(self.collection(schema), None)
            if shard is not None:
                try:
                    shard.flush()
                finally:
                    shard.close()

    # ----- writes -----------------------------------------------------------------------------

    def _written(self) -> None:
        """Forget the records kept by :meth:`read_records` (any write may change them)."""
        with self._lock:
            self._generation += 1
            self._records.clear()

    def _update(self, schema: DomainSchema, op: Any) -> None:
        with self._lock:
            self._written()
            try:
                self._shard(schema).update(op)
            except VectorStoreError:
                raise
            except Exception as exc:
                raise VectorStoreError(f"Qdrant Edge update failed: {exc}") from exc

    def upsert(self, schema: DomainSchema, points: Sequence[PointWrite]) -> None:
        """Insert or replace whole points."""
        if points:
            self._update(
                schema,
                qe.UpdateOperation.upsert_points(
                    [
                        qe.Point(
                            point_id(schema.name, p.id), _vector(p.vectors, p.sparse), p.payload
                        )
                        for p in points
                    ]
                ),
            )

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
            current = self.get_records(schema, list(updates), with_vectors=True)
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

    def get_records(
        self,
        schema: DomainSchema,
        record_ids: Sequence[str],
        with_vectors: bool = False,
        without: Sequence[str] = (),
    ) -> dict[str, StoredRecord]:
        """Existing points for ``record_ids`` keyed by record id (missing ids are absent);
        payloads leave out the keys in ``without``; sparse vectors come as
        :class:`~agentic_search.state.SparseVector`."""
        if not record_ids:
            return {}
        ids = [point_id(schema.name, r) for r in dict.fromkeys(record_ids)]
        payload: Any = qe.PayloadSelector.Exclude(list(without)) if without else True
        with self._reading(schema):  # a damaged payload or vector file
            points = self._shard(schema).retrieve(
                ids, with_payload=payload, with_vector=with_vectors
            )
        out = {}
        for p in points:
            payload = p.payload  # each read of the property converts the payload anew
            if payload and schema.id_field in payload:
                rid = str(payload[schema.id_field])
                vecs = _stored_vectors(p.vector) if with_vectors else None
                out[rid] = StoredRecord(rid, payload, vecs)
        return out

    def read_records(
        self, schema: DomainSchema, record_ids: Sequence[str], with_vectors: bool = False
    ) -> dict[str, StoredRecord]:
        """:meth:`get_records` for the query side, without the writers' bookkeeping keys,
        through a record cache.

        Every read converts the engine's answer into Python objects anew (~2 ms for 100
        records with their vectors), and one search reads the same candidates several times
        (evidence with vectors, term presence from the sparse vectors, the next round's
        hydration), so records read are kept (LRU, ``RECORD_CACHE`` points) and the cache is
        dropped on any write through this store (the shard's only writer: it holds the lock;
        a reader process must reopen the shard, and so this store, to see another's
        writes). The records returned are shared: callers must not mutate them."""
        if not record_ids:
            return {}
        name = self.collection(schema)
        out: dict[str, StoredRecord] = {}
        missing: list[str] = []
        with self._lock:
            generation = self._generation
            for rid in dict.fromkeys(record_ids):
                hit = self._records.get((name, rid))
                if hit is None or (with_vectors and hit.vectors is None):
                    missing.append(rid)
                else:
                    self._records.move_to_end((name, rid))
                    out[rid] = hit
        if missing:
            fetched = self.get_records(schema, missing, with_vectors, without=READ_WITHOUT)
            out.update(fetched)
            with self._lock:
                if generation == self._generation:
                    for rid, rec in fetched.items():
                        self._records[(name, rid)] = rec
                    while len(self._records) > self.record_cache:
                        self._records.popitem(last=False)
        return out

    def clear_record_cache(self) -> None:
        """Forget the records kept by :meth:`read_records` (benchmarks time searches cold)."""
        self._written()

    def _hit_payload(self, schema: DomainSchema) -> Any:
        """What a query asks of each hit's payload: nothing when ids are mapped (_query)."""
        return False if self.map_ids else [schema.id_field]

    def _query(self, schema: DomainSchema, request: qe.QueryRequest) -> list[ScoredRecord]:
        """Run ``request`` (built with ``with_payload=self._hit_payload(schema)``) and return
        its hits as record ids with scores.

        Reading even the id field of each hit's payload costs the engine ~4 ms for 100 hits
        where the ids alone take ~0.4 ms (SciFact, 5k points), so the request is sent without
        payload and each point id is turned into its record id through a map the store keeps
        (a pair never changes: the point id is derived from the record id); ids not in it yet
        are read in one ``retrieve`` of the id field and added."""
        shard = self._shard(schema)
        try:
            points = shard.query(request)
        except BaseException as exc:  # plain Exception (e.g. an unknown vector name), a panic
            if not is_engine_failure(exc):
                raise
            reason = " ".join(str(exc).split())[:300]
            raise VectorStoreError(f"Qdrant Edge query failed: {reason}") from exc
        if not self.map_ids:
            return [ScoredRecord(str(p.payload[schema.id_field]), p.score, {}) for p in points]
        rids = self._rids.setdefault(self.collection(schema), {})
        # each read of a point's id builds a new uuid.UUID: read it once
        hits = [(p.id, p.score) for p in points]
        got = {pid: rids.get(pid) for pid, _ in hits}
        missing = [pid for pid, rid in got.items() if rid is None]
        if missing:
            found = shard.retrieve(missing, with_payload=[schema.id_field], with_vector=False)
            if len(rids) + len(found) > ID_MAP:
                rids.clear()
            for p in found:
                payload = p.payload
                if payload and schema.id_field in payload:
                    got[p.id] = rids[p.id] = str(payload[schema.id_field])
        return [
            ScoredRecord(rid, score, {}) for pid, score in hits if (rid := got[pid]) is not None
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
        which comes as a :class:`~agentic_search.state.SparseVector`. Records the query side
        read with their vectors (:meth:`read_records`) answer from its cache; the others in
        one ``retrieve`` of that vector alone."""
        if not record_ids:
            return {}
        name = self.collection(schema)
        out: dict[str, list[float]] = {}
        missing: list[str] = []
        with self._lock:
            for rid in dict.fromkeys(record_ids):
                hit = self._records.get((name, rid))
                if hit is not None and hit.vectors is not None:
                    vec = hit.vectors.get(aspect)
                    if vec is not None:
                        out[rid] = vec  # type: ignore[assignment]
                    continue
                missing.append(rid)
        if not missing:
            return out
        ids = [point_id(schema.name, r) for r in missing]
        with self._reading(schema):  # a damaged payload or vector file
            points = self._shard(schema).retrieve(
                ids, with_payload=[schema.id_field], with_vector=[aspect]
            )
        for p in points:
            vector, payload = p.vector, p.payload  # read once: each read converts anew
            vec = vector.get(aspect) if isinstance(vector, dict) else None
            if vec is not None and payload and schema.id_field in payload:
                rid = str(payload[schema.id_field])
                out[rid] = (
                    SparseVector(list(vec.indices), list(vec.values))  # type: ignore[assignment]
                    if isinstance(vec, qe.SparseVector)
                    else list(vec)
                )
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
        shard = self._open(schema)
        if shard is None:
            return
        selector: Any = list(payload) if payload is not None else True
        offset = None
        while True:
            request = qe.ScrollRequest(
                offset=offset, limit=batch, filter=flt, with_payload=selector, with_vector=False
            )
            with self._reading(schema):  # a damaged payload file
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
            self._written()
            for name, shard in list(self._shards.items()):
                try:
                    shard.flush()
                finally:
                    shard.close()
                    del self._shards[name]
                    self._locks.pop(name).release()
            for lock in self._locks.values():  # shards unloaded but still held (optimize)
                lock.release()
            self._locks.clear()
