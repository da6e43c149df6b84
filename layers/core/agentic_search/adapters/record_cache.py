"""The query side's record cache, shared by the embedded stores (Qdrant Edge, qdrant-client
local mode): records read back by :meth:`~agentic_search.ports.VectorStore.hydrate_records`,
kept LRU and forgotten on any write through the store.

Why: every read converts the engine's answer into Python objects anew (Edge: records with
their vectors; local mode deep-copies every payload), and one search reads the
same candidates several times (evidence with vectors, term presence from the sparse vectors,
the next round's hydration). An embedded store is its shard's only writer, so dropping the
cache on its own writes keeps it exact; a server has other writers and caches nothing.

A read that started before a write does not fill the cache (a generation counter), so a
concurrent write never leaves a stale record behind.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

from agentic_search.wire import SPARSE_VECTOR, StoredRecord

#: Points whose records (payload and vectors) a store keeps by default.
RECORD_CACHE = 4096


class RecordCache:
    """LRU map ``(collection, record id) -> StoredRecord`` with a write generation.

    ``capacity`` 0 keeps nothing (every read asks the engine). Thread-safe. The records handed
    out are shared: callers must not mutate them.
    """

    def __init__(self, capacity: int = RECORD_CACHE) -> None:
        self.capacity = capacity
        self._records: OrderedDict[tuple[str, str], StoredRecord] = OrderedDict()
        self._generation = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._records)

    def read(
        self,
        collection: str,
        record_ids: Sequence[str],
        with_vectors: bool,
        fetch: Callable[[list[str]], dict[str, StoredRecord]],
    ) -> dict[str, StoredRecord]:
        """The records of ``record_ids`` (missing ids absent): cached ones as they are (with
        their vectors when ``with_vectors``), the others from ``fetch(missing ids)``, which
        are kept unless a write happened meanwhile."""
        out: dict[str, StoredRecord] = {}
        missing: list[str] = []
        with self._lock:
            generation = self._generation
            for rid in dict.fromkeys(record_ids):
                hit = self._records.get((collection, rid))
                if hit is None or (with_vectors and hit.vectors is None):
                    missing.append(rid)
                else:
                    self._records.move_to_end((collection, rid))
                    out[rid] = hit
        if missing:
            fetched = fetch(missing)
            out.update(fetched)
            with self._lock:
                if generation == self._generation:
                    for rid, rec in fetched.items():
                        self._records[(collection, rid)] = rec
                    while len(self._records) > self.capacity:
                        self._records.popitem(last=False)
        return out

    def vectors(
        self, collection: str, record_ids: Sequence[str], aspect: str
    ) -> tuple[dict[str, list[float]], list[str]]:
        """``(found, missing)``: the ``aspect`` vectors of the records cached with their
        vectors (a cached record without that vector has none: neither found nor missing),
        the sparse vector of records read with it alongside their payload
        (``StoredRecord.sparse``), and the ids the cache cannot answer."""
        found: dict[str, list[float]] = {}
        missing: list[str] = []
        with self._lock:
            for rid in dict.fromkeys(record_ids):
                hit = self._records.get((collection, rid))
                if hit is not None and hit.vectors is not None:
                    vec = hit.vectors.get(aspect)
                    if vec is not None:
                        found[rid] = vec  # type: ignore[assignment]
                    continue
                if hit is not None and hit.sparse is not None and aspect == SPARSE_VECTOR:
                    found[rid] = hit.sparse  # type: ignore[assignment]
                    continue
                missing.append(rid)
        return found, missing

    def invalidate(self) -> None:
        """Forget every record (a write happened, or a benchmark wants a cold read); reads in
        flight do not fill the cache."""
        with self._lock:
            self._generation += 1
            self._records.clear()


__all__ = ["RECORD_CACHE", "RecordCache"]
