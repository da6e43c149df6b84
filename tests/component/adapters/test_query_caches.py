"""The query side's process caches: token counts by text, and local-mode records read back.

Both must answer exactly as the uncached call would; the record cache must forget records on
every write through the store.
"""

from __future__ import annotations

from qdrant_client import QdrantClient
from qdrant_client import models as qm

from agentic_search.adapters.qdrant.local import LocalQdrantStore
from agentic_search.config import Settings
from agentic_search.dependencies import Dependencies
from agentic_search.logic.schema import load_schema
from agentic_search.pipeline import evidence
from agentic_search.pipeline.evidence import count_tokens
from agentic_search.wire import PointWrite, VectorUpdate

SCHEMA = load_schema("documents")


class _Embedder:
    """An embedder whose tokenizer records what it is asked to count."""

    name, dim = "recording", 2

    def __init__(self) -> None:
        self.asked: list[str] = []

    def count_tokens(self, texts):
        self.asked.extend(texts)
        return [len(t.split()) + 2 for t in texts]


def test_token_counts_are_memoized_by_text_and_equal_the_counter(monkeypatch) -> None:
    """GIVEN a counter that records what it is asked
    WHEN texts (with repeats, across calls) are counted
    THEN the counts equal the counter's, and each distinct text is counted once while cached;
    past TOKEN_COUNT_CACHE texts the oldest are counted again."""
    embedder = _Embedder()
    asked = embedder.asked
    c = Dependencies(Settings(), SCHEMA, embedder=embedder)
    texts = ["a b", "c", "a b", "d e f"]
    assert count_tokens(c, texts) == [4, 3, 4, 5]
    assert sorted(asked) == ["a b", "c", "d e f"]
    assert count_tokens(c, ["c", "g", "a b"]) == [3, 3, 4]
    assert sorted(asked) == ["a b", "c", "d e f", "g"]
    monkeypatch.setattr(evidence, "TOKEN_COUNT_CACHE", 2)
    count_tokens(c, ["x", "y", "z"])
    asked.clear()
    assert count_tokens(c, ["a b", "z"]) == [4, 3]
    assert asked == ["a b"]


def _store() -> LocalQdrantStore:
    store = LocalQdrantStore(Settings(), client=QdrantClient(":memory:"))
    store.client.create_collection(
        store.collection(SCHEMA),
        vectors_config={"content": qm.VectorParams(size=2, distance=qm.Distance.COSINE)},
    )
    return store


def _point(rid: str, text: str, vec=(1.0, 0.0)) -> PointWrite:
    return PointWrite(rid, {"content": [float(x) for x in vec]}, {"id": rid, "text": text})


def test_read_records_equals_get_records_and_forgets_on_every_write() -> None:
    """GIVEN a local-mode store with records
    WHEN records are read through the cache, then changed by upsert, payload overwrite, vector
    update, the combined vector + payload update and delete
    THEN every read equals an uncached retrieve_records at that moment."""
    store = _store()
    store.upsert(SCHEMA, [_point("d1", "one"), _point("d2", "two")])

    def same(ids, vectors=False):
        got = store.hydrate_records(SCHEMA, ids, with_vectors=vectors)
        want = store.retrieve_records(SCHEMA, ids, with_vectors=vectors)
        assert {k: (r.payload, r.vectors) for k, r in got.items()} == {
            k: (r.payload, r.vectors) for k, r in want.items()
        }
        return got

    assert same(["d1", "d2", "nope"])["d1"].payload["text"] == "one"
    assert same(["d1"], vectors=True)["d1"].vectors is not None  # payload-only entry upgraded
    store.upsert(SCHEMA, [_point("d1", "uno")])
    assert same(["d1", "d2"])["d1"].payload["text"] == "uno"
    store.update_points(SCHEMA, [], {"d2": {"id": "d2", "text": "dos"}})
    assert same(["d2"])["d2"].payload["text"] == "dos"
    same(["d1"], vectors=True)
    store.update_points(SCHEMA, [VectorUpdate("d1", {"content": [0.0, 1.0]})], {})
    assert same(["d1"], vectors=True)["d1"].vectors["content"][1] > 0.9
    # the sync path's combined write (vectors and payload in one request)
    store.update_points(
        SCHEMA,
        [VectorUpdate("d1", {"content": [1.0, 0.0]})],
        {"d1": {"id": "d1", "text": "eins"}},
    )
    got = same(["d1"], vectors=True)["d1"]
    assert got.payload["text"] == "eins" and got.vectors["content"][0] > 0.9
    store.delete(SCHEMA, ["d2"])
    assert "d2" not in same(["d1", "d2"])


def test_local_dense_search_equals_qdrants_and_sees_every_write(monkeypatch) -> None:
    """GIVEN 300 random 16-d points in a local-mode collection
    WHEN unfiltered dense queries run through the store's matrix path and through Qdrant's
    own query_points, before and after upserts and deletes
    THEN both return the same ids in the same order with scores within float32 rounding."""
    import numpy as np

    from agentic_search.adapters.qdrant import local as vector_store

    monkeypatch.setattr(vector_store, "DENSE_MATRIX_MIN_POINTS", 100)
    store = LocalQdrantStore(Settings(), client=QdrantClient(":memory:"))
    store.client.create_collection(
        store.collection(SCHEMA),
        vectors_config={"content": qm.VectorParams(size=16, distance=qm.Distance.COSINE)},
    )
    assert not store._dense  # nothing built before the first query
    rng = np.random.default_rng(11)
    store.upsert(SCHEMA, [_point(f"d{i}", "", rng.normal(size=16)) for i in range(300)])

    def qdrant(vec, k):
        resp = store.client.query_points(
            store.collection(SCHEMA),
            query=vec.tolist(),
            using="content",
            limit=k,
            with_payload=["id"],
        )
        return [(p.payload["id"], p.score) for p in resp.points]

    def check():
        for k in (1, 10, 200, 400):
            vec = rng.normal(size=16)
            got = [(h.id, h.score) for h in store.query_dense(SCHEMA, "content", vec, k)]
            want = qdrant(vec, k)
            assert [i for i, _ in got] == [i for i, _ in want]
            assert all(abs(a - b) < 1e-5 for (_, a), (_, b) in zip(got, want, strict=True))

    check()
    assert store._dense  # the matrix path answered
    store.upsert(SCHEMA, [_point("new", "", rng.normal(size=16))])
    assert "new" in {h.id for h in store.query_dense(SCHEMA, "content", rng.normal(size=16), 400)}
    store.delete(SCHEMA, ["d0", "d1"])
    hits = store.query_dense(SCHEMA, "content", rng.normal(size=16), 400)
    assert len(hits) == 299 and not {"d0", "d1"} & {h.id for h in hits}
    check()
