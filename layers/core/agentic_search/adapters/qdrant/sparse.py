"""BM25 through Qdrant sparse vectors (a server, or qdrant-client local mode): a sparse
``bm25`` vector per point with the IDF modifier computed by Qdrant and the term-frequency
weights computed here. The code is :class:`~agentic_search.adapters.sparse_bm25.SparseBm25Index`,
shared with Qdrant Edge, so a collection built locally and one built on a server rank the
same: the statistics (the average document length the vectors were written with) live in
the collection's own metadata (``bm25``), re-read at most every ``STATS_TTL_S`` seconds
(other writers may refresh a server's collection) and after every refresh here."""

from __future__ import annotations

import logging
import time

from agentic_search.adapters.sparse_bm25 import SparseBm25Index
from agentic_search.logic.schema import DomainSchema

#: How long the collection's recorded statistics are used before being read again.
STATS_TTL_S = 30.0


class QdrantSparseKeywordIndex(SparseBm25Index):
    """The keyword index over a :class:`~agentic_search.adapters.qdrant.store.QdrantStore`."""

    name = "qdrant-sparse-bm25"

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        #: domain -> (monotonic time read, stats or None)
        self._stats: dict[str, tuple[float, dict[str, float] | None]] = {}
        self._no_metadata = False

    def _load_stats(self, schema: DomainSchema) -> dict[str, float] | None:
        cached = self._stats.get(schema.name)
        if cached is not None and time.monotonic() - cached[0] < STATS_TTL_S:
            return cached[1]
        stats = self.store.metadata_of(schema).get("bm25") if self.store.exists(schema) else None
        self._stats[schema.name] = (time.monotonic(), stats)
        return stats

    def _save_stats(self, schema: DomainSchema, stats: dict[str, float]) -> None:
        self.store.set_metadata(schema, {"bm25": stats})
        self._stats[schema.name] = (time.monotonic(), dict(stats))

    def refresh(self, schema: DomainSchema) -> bool:
        """:meth:`SparseBm25Index.refresh` on freshly read statistics. A server that keeps
        no collection metadata (Qdrant before 1.16) is left on ``avg_doc_len`` (logged once):
        weights it could not record would not be used for the next documents."""
        if self._no_metadata or not self.store.exists(schema):
            return False
        self._stats.pop(schema.name, None)
        current = self._load_stats(schema)
        try:  # rewrites what is there: only to learn whether the server keeps metadata
            self.store.set_metadata(schema, {"bm25": current})
        except Exception as exc:  # any refusal means the same
            self._no_metadata = True
            logging.getLogger(__name__).warning(
                "this Qdrant keeps no collection metadata (%s): BM25 weights stay on an "
                "average document length of %s (BM25_AVG_DOC_LEN)",
                " ".join(str(exc).split())[:160],
                self.avg_doc_len,
            )
            return False
        return super().refresh(schema)


__all__ = ["STATS_TTL_S", "QdrantSparseKeywordIndex"]
