"""Qdrant's own RRF (one ``query_points`` with a dense and a sparse prefetch) against ours.

Qdrant local mode (``:memory:``) supports sparse vectors, prefetch and ``RrfQuery``, so the
server-side fusion of the ``hybrid-rrf-qdrant`` evaluation system is checked without a server.
"""

from __future__ import annotations

import numpy as np
from qdrant_client import QdrantClient
from qdrant_client import models as qm

from agentic_search.adapters.qdrant.local import LocalQdrantStore
from agentic_search.adapters.qdrant.sparse import QdrantSparseKeywordIndex
from agentic_search.config import Settings
from agentic_search.dependencies import Dependencies
from agentic_search.logic.fusion import rrf
from agentic_search.logic.schema import load_schema
from agentic_search.wire import SPARSE_VECTOR, PointWrite, RankedList
from agentic_search_cli import evaluation as ev

SCHEMA = load_schema("documents")
WORDS = [
    "vitamin",
    "bone",
    "density",
    "coral",
    "reef",
    "insulin",
    "glucose",
    "chess",
    "opening",
    "lava",
    "magma",
    "yeast",
]


def _store(with_sparse: bool) -> tuple[LocalQdrantStore, QdrantSparseKeywordIndex]:
    store = LocalQdrantStore(Settings(), client=QdrantClient(":memory:"))
    store.client.create_collection(
        store.collection(SCHEMA),
        vectors_config={"content": qm.VectorParams(size=8, distance=qm.Distance.COSINE)},
        sparse_vectors_config=(
            {SPARSE_VECTOR: qm.SparseVectorParams(modifier=qm.Modifier.IDF)}
            if with_sparse
            else None
        ),
    )
    kw = QdrantSparseKeywordIndex(store)
    rng = np.random.default_rng(7)
    points = []
    for i in range(60):
        text = " ".join(rng.choice(WORDS, size=int(rng.integers(2, 8))))
        sparse = kw.sparse_vector(text) if with_sparse else None
        points.append(
            PointWrite(f"d{i}", {"content": rng.normal(size=8).tolist()}, {"id": f"d{i}"}, sparse)
        )
    store.upsert(SCHEMA, points)
    return store, kw


def test_server_side_rrf_equals_client_side_rrf() -> None:
    """GIVEN a collection with a dense and a sparse bm25 vector
    WHEN one query_points call fuses a dense and a sparse prefetch with RRF k = 60
    THEN every id gets the score our rrf() gives the two separately queried lists (k = 60,
    equal weights), best first."""
    store, kw = _store(with_sparse=True)
    dense = np.random.default_rng(1).normal(size=8)
    sparse = kw.query_vector("vitamin bone coral")
    got = store.query_hybrid_rrf(SCHEMA, "content", dense, sparse, top_k=20, rrf_k=60)
    d = store.query_dense(SCHEMA, "content", dense, 20)
    s = store.query_sparse(SCHEMA, sparse, 20, None)
    want = rrf([RankedList("d", [h.id for h in d]), RankedList("s", [h.id for h in s])], 60)
    ours = {f.id: f.fused for f in want}
    assert len(got) == 20
    for h in got:
        assert abs(h.score - ours[h.id]) < 1e-6
    assert [round(h.score, 6) for h in got] == [round(f.fused, 6) for f in want[:20]]
    scores = [h.score for h in got]
    assert scores == sorted(scores, reverse=True)
    assert store.has_sparse(SCHEMA)


def test_local_collection_without_sparse_vector_is_reported_unavailable() -> None:
    """GIVEN a local-mode collection without the sparse vector (an earlier version's) WHEN the
    optional system is checked THEN it is unavailable with a reason saying how to get the
    vector; it is accepted by
    parse_systems only by name."""
    store, _ = _store(with_sparse=False)

    class _Engine:
        schema = SCHEMA

    engine = _Engine()
    engine.deps = Dependencies(Settings(), SCHEMA, store=store)  # type: ignore[attr-defined]
    reason = ev.unavailable_reason(engine, "hybrid-rrf-qdrant")  # type: ignore[arg-type]
    assert reason is not None and "migrate or rebuild" in reason
    assert ev.unavailable_reason(engine, "hybrid-rrf") is None  # type: ignore[arg-type]
    assert "hybrid-rrf-qdrant" not in ev.parse_systems(None)
    assert ev.parse_systems("bm25,hybrid-rrf-qdrant") == ["bm25", "hybrid-rrf-qdrant"]
