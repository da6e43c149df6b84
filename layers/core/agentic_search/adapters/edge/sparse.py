"""BM25 through the Edge shard's sparse ``bm25`` vector (``VECTOR_STORE=edge``, the embedded
default): :class:`~agentic_search.adapters.sparse_bm25.SparseBm25Index` (shared with the
Qdrant server and local mode), its statistics (the average document length the vectors were
written with) kept in ``<shard>.bm25.json`` beside the shard and re-read when that file
changes (a drop removes it)."""

from __future__ import annotations

import json
from pathlib import Path

from agentic_search.adapters.sparse_bm25 import (
    DRIFT_SHARE,
    RECHECK_SHARE,
    SAMPLE,
    SparseBm25Index,
)
from agentic_search.logic.schema import DomainSchema


class EdgeSparseKeywordIndex(SparseBm25Index):
    """The keyword index over an :class:`~agentic_search.adapters.edge.store.EdgeStore`."""

    name = "edge-sparse-bm25"
    #: queries run in this process holding the GIL (``source_pool.runs_in_process``)
    in_process = True

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        #: domain -> (file mtime, {"avgdl", "count"})
        self._stats: dict[str, tuple[int, dict[str, float]]] = {}

    def _stats_path(self, schema: DomainSchema) -> Path:
        shard = self.store.shard_dir(schema)
        return shard.with_name(shard.name + ".bm25.json")

    def _load_stats(self, schema: DomainSchema) -> dict[str, float] | None:
        path = self._stats_path(schema)
        try:
            stamp = path.stat().st_mtime_ns
        except FileNotFoundError:
            self._stats.pop(schema.name, None)
            return None
        cached = self._stats.get(schema.name)
        if cached is None or cached[0] != stamp:
            cached = self._stats[schema.name] = (stamp, json.loads(path.read_text()))
        return cached[1]

    def _save_stats(self, schema: DomainSchema, stats: dict[str, float]) -> None:
        path = self._stats_path(schema)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(stats))
        tmp.replace(path)


__all__ = ["DRIFT_SHARE", "RECHECK_SHARE", "SAMPLE", "EdgeSparseKeywordIndex"]
