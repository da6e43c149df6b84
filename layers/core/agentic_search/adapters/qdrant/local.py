"""qdrant-client local mode (``VECTOR_STORE=local``, ``QDRANT_PATH``): the embedded fallback
engine and the source a migration to Qdrant Edge copies from
(:mod:`agentic_search.adapters.edge.migrate`). A folder and a client per collection
(:mod:`.local_folders`), every call serialized (local mode is single-process and not
thread-safe), the query side's records kept (the shared
:class:`~agentic_search.adapters.record_cache.RecordCache`) and unfiltered dense queries
answered from the collection's own matrix. Everything else is :class:`.store.QdrantStore`'s.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from qdrant_client import QdrantClient
from qdrant_client import models as qm

from agentic_search.adapters.qdrant.filters import to_qdrant
from agentic_search.adapters.qdrant.local_folders import adopt_shared_layout, open_local
from agentic_search.adapters.qdrant.store import READ_WITHOUT, QdrantStore
from agentic_search.adapters.record_cache import RECORD_CACHE, RecordCache
from agentic_search.config import Settings
from agentic_search.logic.schema import DomainSchema
from agentic_search.wire import EmbedderIdentity, Filter, ScoredRecord, SparseVector, StoredRecord

#: Local mode answers unfiltered dense queries from its own matrix from this many points on.
DENSE_MATRIX_MIN_POINTS = 1000


class LocalQdrantStore(QdrantStore):
    """Named-vector collection per domain in qdrant-client local mode; see the module
    docstring."""

    server_mode = False

    def __init__(self, settings: Settings, client: QdrantClient | None = None) -> None:
        self.settings = settings
        #: one client for every collection (a client given by a test); None: each collection
        #: has its own folder and client (see _c)
        self.client = client
        self._local: dict[str, QdrantClient] = {}
        self._open_lock = threading.Lock()
        self._lock: Any = threading.RLock()
        #: records read back by the query side (see hydrate_records)
        self.records = RecordCache(RECORD_CACHE)
        #: (collection, aspect) -> (unit vectors, record ids) (see query_dense)
        self._dense: dict[tuple[str, str], tuple[np.ndarray, list[str]]] = {}
        #: collection -> recorded embedder identity, read once per process
        self._identities: dict[str, EmbedderIdentity | None] = {}

    def _c(self, schema: DomainSchema) -> QdrantClient:
        """The client holding ``schema``'s collection: the one client, or in local mode the
        collection's own (opened on first use; see :mod:`.local_folders`).

        Raises:
            VectorStoreError: when its folder is held by another process, or unreadable (one
                line naming the file and the repair command).
        """
        if self.client is not None:
            return self.client
        name = self.collection(schema)
        client = self._local.get(name)
        if client is None:
            with self._open_lock:
                client = self._local.get(name)
                if client is None:
                    client = open_local(self.settings.resolved_qdrant_path, name, schema.name)
                    self._local[name] = client
        return client

    def acquire_writer(self, schema: DomainSchema) -> None:
        """Local mode: open the collection's folder now (its client holds the folder's lock
        until :meth:`close`); a server takes concurrent writers: nothing to take.

        Raises:
            VectorStoreError: when another process holds the folder.
        """
        if self.client is None:
            self._c(schema)

    def drop(self, schema: DomainSchema) -> None:
        """Delete the domain's collection if it exists; in local mode its whole folder, even
        when its files cannot be read (the repair path's first step)."""
        with self._lock:
            self._written()
            self._identities.pop(self.collection(schema), None)
            if self.client is not None:
                if self.client.collection_exists(self.collection(schema)):
                    self.client.delete_collection(self.collection(schema))
                return
            name = self.collection(schema)
            with self._open_lock:
                client = self._local.pop(name, None)
                if client is not None:
                    client.close()
                adopt_shared_layout(self.settings.resolved_qdrant_path, name)
                shutil.rmtree(self.settings.resolved_qdrant_path / name, ignore_errors=True)

    def _written(self) -> None:
        """Forget cached records and dense matrices (any write may change them)."""
        self.records.invalidate()
        self._dense.clear()

    def hydrate_records(
        self, schema: DomainSchema, record_ids: Sequence[str], with_vectors: bool = False
    ) -> dict[str, StoredRecord]:
        """:meth:`retrieve_records` for the query side, through a record cache in local mode.

        Local mode deep-copies every payload it returns (``copy.deepcopy`` was a third of a
        search's hydrate step), and it is single-process with every write going through this
        store, so read records are kept (the shared
        :class:`~agentic_search.adapters.record_cache.RecordCache`) and the cache is
        dropped on any write (upsert, vector update, payload overwrite, delete, drop). On a
        server other writers exist, so nothing is cached there. The records returned are
        shared: callers must not mutate them. Payloads come without the content hashes and
        the entity graph's keys (writers' bookkeeping: the largest part of a payload to copy
        or send; the graph walk reads them with :meth:`retrieve_records`).
        """
        if self.server_mode or not record_ids:
            return self.retrieve_records(schema, record_ids, with_vectors, without=READ_WITHOUT)
        return self.records.read(
            self.collection(schema),
            record_ids,
            with_vectors,
            lambda missing: self.retrieve_records(
                schema, missing, with_vectors, without=READ_WITHOUT
            ),
        )

    def _dense_matrix(self, schema: DomainSchema, aspect: str) -> tuple[np.ndarray, list[str]]:
        """Local mode: the aspect's unit vectors as an ``(n, d)`` float32 matrix and the
        record id of each row, read once by scrolling the collection and kept until the next
        write (see :meth:`query_dense`)."""
        key = (self.collection(schema), aspect)
        with self._lock:
            got = self._dense.get(key)
            if got is not None:
                return got
            ids: list[str] = []
            rows: list[list[float]] = []
            offset = None
            while True:
                points, offset = self._c(schema).scroll(
                    key[0],
                    limit=1024,
                    offset=offset,
                    with_payload=[schema.id_field],
                    with_vectors=[aspect],
                )
                for p in points:
                    vec = p.vector.get(aspect) if isinstance(p.vector, dict) else None
                    if vec is not None and p.payload and schema.id_field in p.payload:
                        ids.append(str(p.payload[schema.id_field]))
                        rows.append(vec)  # type: ignore[arg-type]
                if offset is None:
                    break
            matrix = np.asarray(rows, dtype=np.float32).reshape(len(rows), -1)
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            matrix /= np.where(norms > 0, norms, 1.0)  # already unit: Qdrant normalizes cosine
            got = self._dense[key] = (matrix, ids)
            return got

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
        ``exclude_ids`` compile to a Qdrant payload filter (:func:`to_qdrant`).

        Unfiltered queries in local mode are answered from :meth:`_dense_matrix`: one
        ``(n, d) @ (d,)`` float32 product and a stable arg-sort (ties: scroll order). Local
        mode's own search re-normalizes every stored vector in place and up-casts the matrix
        to float64 on each query, which made it the slowest source (tens of ms at 5k
        points). Scores equal Qdrant's cosine up to float32 rounding (~1e-7); exact ties
        (identical texts) may come in another order than Qdrant's, which is arbitrary too.
        Filtered queries, collections under ``DENSE_MATRIX_MIN_POINTS`` (where local mode
        is fast enough and rankings stay exactly as before, the bundled catalog among them),
        and every query on a server go to Qdrant.
        """
        flt = to_qdrant(schema, filters, exclude_ids)
        matrix, ids = (
            self._dense_matrix(schema, aspect)
            if flt is None and not self.server_mode
            else (None, [])
        )
        if matrix is not None and len(ids) >= DENSE_MATRIX_MIN_POINTS:
            q = np.asarray(vector, dtype=np.float32)
            norm = float(np.linalg.norm(q))
            scores = matrix @ (q / norm if norm > 0 else q)
            k = min(top_k, len(ids))
            if k < len(ids):
                top = np.sort(np.argpartition(-scores, k - 1)[:k])
                top = top[np.argsort(-scores[top], kind="stable")]
            else:
                top = np.argsort(-scores, kind="stable")
            return [ScoredRecord(ids[i], float(scores[i]), {}) for i in top.tolist()]
        return super().query_dense(schema, aspect, vector, top_k, filters, exclude_ids)

    def dense_sizes(self, schema: DomainSchema) -> dict[str, int]:
        """The collection's named dense vectors and their dimensions."""
        with self._lock:
            info = self._c(schema).get_collection(self.collection(schema))
        vectors = info.config.params.vectors
        return {k: v.size for k, v in vectors.items()} if isinstance(vectors, dict) else {}

    def scroll_points(
        self, schema: DomainSchema, batch: int = 256
    ) -> Iterator[list[tuple[dict[str, Any], dict[str, Any]]]]:
        """Every point as ``(payload, vectors)`` (the dense ones as lists, the sparse one as a
        :class:`~agentic_search.wire.SparseVector`), in batches of ``batch``, in point-id
        order (a whole copy of the collection, e.g. the migration to Edge)."""
        offset = None
        while True:
            with self._lock:
                points, offset = self._c(schema).scroll(
                    self.collection(schema),
                    limit=batch,
                    offset=offset,
                    with_payload=True,
                    with_vectors=True,
                )
            out = []
            for p in points:
                vectors = {
                    k: SparseVector(list(v.indices), list(v.values))
                    if isinstance(v, qm.SparseVector)
                    else list(v)  # type: ignore[arg-type]
                    for k, v in (p.vector if isinstance(p.vector, dict) else {}).items()
                }
                if p.payload:
                    out.append((p.payload, vectors))
            if out:
                yield out
            if offset is None:
                break

    def release(self, collection: str) -> None:
        """Local mode: close one collection's client (its folder lock released), e.g. before
        its folder is moved; it reopens on next use."""
        with self._lock, self._open_lock:
            self._written()
            client = self._local.pop(collection, None)
            if client is not None:
                client.close()

    def close(self) -> None:
        """Release the clients (and the local-mode folder locks)."""
        with self._lock:
            if self.client is not None:
                self.client.close()
            for client in self._local.values():
                client.close()
            self._local.clear()


__all__ = ["DENSE_MATRIX_MIN_POINTS", "LocalQdrantStore"]
