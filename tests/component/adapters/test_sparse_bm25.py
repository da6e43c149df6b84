"""The shared sparse BM25 keyword index (adapters/sparse_bm25.py) on every engine that holds
the sparse vector: Qdrant Edge, and qdrant-client (":memory:" local mode, standing in for a
Qdrant server: the same client calls and collection metadata).

A collection built by either engine ranks the same: both refresh their vectors to the corpus'
own average length (recorded beside the shard, or in the collection's metadata), so the
scores of every query agree; term presence read from the stored sparse vectors equals
analysing each record's text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from component.adapters.test_edge_store import lucene_bm25
from qdrant_client import QdrantClient

from agentic_search.adapters.edge.sparse import EdgeSparseKeywordIndex
from agentic_search.adapters.edge.store import EdgeStore
from agentic_search.adapters.qdrant.local import LocalQdrantStore
from agentic_search.adapters.qdrant.sparse import QdrantSparseKeywordIndex
from agentic_search.config import Settings
from agentic_search.logic.schema import load_schema
from agentic_search.logic.text import default_analyzer, keyword_text
from agentic_search.wire import PointWrite

SCHEMA = load_schema("documents")
WORDS = [
    "Vitamin",
    "bones",
    "density",
    "the",
    "of",
    "running",
    "runs",
    "coral",
    "reefs",
    "insulin",
    "glucose",
    "T-cells",
    "IL-6",
    "a",
    "x",
]


def _records(n: int = 80, seed: int = 3) -> dict[str, dict]:
    rng = np.random.default_rng(seed)
    return {
        f"d{i}": {
            "id": f"d{i}",
            "title": " ".join(rng.choice(WORDS, size=2)),
            "text": " ".join(rng.choice(WORDS, size=int(rng.integers(1, 12)))),
        }
        for i in range(n)
    }


def _fill(store, kw, records: dict[str, dict]) -> None:  # type: ignore[no-untyped-def]
    store.ensure_collection(SCHEMA, dim=2)
    store.upsert(
        SCHEMA,
        [
            PointWrite(
                rid,
                {a: [1.0, 0.5] for a in SCHEMA.aspect_names},
                r,
                kw.sparse_vector(keyword_text(SCHEMA, r)),
            )
            for rid, r in records.items()
        ],
    )


@pytest.fixture(params=["edge", "qdrant"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple]:
    """A store and its keyword index, empty: Edge in tmp_path, or qdrant-client in memory."""
    if request.param == "edge":
        store: object = EdgeStore(Settings(), root=tmp_path)
        kw: object = EdgeSparseKeywordIndex(store, schema=SCHEMA)
    else:
        store = LocalQdrantStore(Settings(), client=QdrantClient(":memory:"))
        kw = QdrantSparseKeywordIndex(store, schema=SCHEMA)
    yield store, kw
    store.close()  # type: ignore[attr-defined]


def test_term_presence_equals_analysing_each_text(engine: tuple) -> None:
    """GIVEN 80 random records with their sparse vectors
    WHEN asked which of some stems (present, absent, stopword-like) records contain
    THEN each known id gets exactly query stems & analysed stems of its keyword text, and ids
    the store does not hold are absent."""
    store, kw = engine
    records = _records()
    _fill(store, kw, records)
    analyzer = default_analyzer()
    rng = np.random.default_rng(5)
    for query in ["vitamin bone density", "running insulin coral", "IL-6 t-cells", "absent"]:
        terms = sorted(set(analyzer.terms(query)))
        ids = [f"d{i}" for i in rng.permutation(80)[:40]] + ["missing"]
        got = kw.term_presence(SCHEMA, terms, ids)
        assert "missing" not in got and set(got) == set(ids) - {"missing"}
        for rid, present in got.items():
            want = set(terms) & set(analyzer.terms(keyword_text(SCHEMA, records[rid])))
            assert present == want, (query, rid)


def test_document_counts_and_known_terms_equal_analysing_each_text(engine: tuple) -> None:
    """GIVEN 80 random records with their sparse vectors
    WHEN the store counts the points holding each of some term indices (capped) in one batch,
    and the keyword index is asked which terms some record holds
    THEN each count is min(cap, the records whose analysed text holds the term), 0 for a term
    no record holds, in the order asked; the known terms are those with a count."""
    from agentic_search.logic.bm25 import term_index

    store, kw = engine
    records = _records()
    _fill(store, kw, records)
    analyzer = default_analyzer()
    texts = [set(analyzer.terms(keyword_text(SCHEMA, r))) for r in records.values()]
    terms = ["vitamin", "bone", "coral", "insulin", "absent", "zebra", "run"]
    df = [sum(t in text for text in texts) for t in terms]
    assert min(d for d in df if d) > 3 and df.count(0) == 2  # the data has both kinds
    for cap in (1, 3, 100):
        got = store.sparse_counts(SCHEMA, [term_index(t) for t in terms], cap)
        assert got == [min(cap, d) for d in df]
    assert store.sparse_counts(SCHEMA, [], 5) == []
    assert kw.known_terms(SCHEMA, [*terms, "coral"]) == {
        t for t, d in zip(terms, df, strict=True) if d
    }


def test_refresh_weights_every_engine_with_the_corpus_average(engine: tuple) -> None:
    """GIVEN documents written with the guessed average length (256) WHEN the index refreshes
    THEN the recorded average is the corpus' own, every score is (k1 + 1) x Lucene BM25's
    with that average, a second refresh rewrites nothing, and a new document is weighted with
    the recorded average; a fresh index object over the same store reads it back."""
    store, kw = engine
    records = _records()
    _fill(store, kw, records)
    terms = {rid: kw.analyzer.terms(keyword_text(SCHEMA, r)) for rid, r in records.items()}
    avgdl = sum(map(len, terms.values())) / len(terms)
    assert kw.avg_doc_len_of(SCHEMA) == 256.0
    assert kw.refresh(SCHEMA) is True
    assert kw.avg_doc_len_of(SCHEMA) == pytest.approx(avgdl)
    assert kw.refresh(SCHEMA) is False
    again = type(kw)(store, schema=SCHEMA)
    assert again.avg_doc_len_of(SCHEMA) == pytest.approx(avgdl)
    for query in ["vitamin bones", "coral reefs insulin", "IL-6"]:
        expected = lucene_bm25(terms, kw.analyzer.terms(query), kw.k1, kw.b)
        hits = kw.search(SCHEMA, query, 100)
        assert {h.id for h in hits} == set(expected)
        for h in hits:
            assert h.score == pytest.approx((kw.k1 + 1) * expected[h.id], rel=1e-4)


def test_edge_and_qdrant_rank_alike(tmp_path: Path) -> None:
    """GIVEN the same records built into an Edge shard and a qdrant-client collection, both
    refreshed WHEN the same queries run THEN both return the same ids with the same scores."""
    records = _records(120, seed=11)
    edge = EdgeStore(Settings(), root=tmp_path)
    ekw = EdgeSparseKeywordIndex(edge, schema=SCHEMA)
    qdrant = LocalQdrantStore(Settings(), client=QdrantClient(":memory:"))
    qkw = QdrantSparseKeywordIndex(qdrant, schema=SCHEMA)
    for store, kw in ((edge, ekw), (qdrant, qkw)):
        _fill(store, kw, records)
        kw.refresh(SCHEMA)
    assert ekw.avg_doc_len_of(SCHEMA) == pytest.approx(qkw.avg_doc_len_of(SCHEMA))
    for query in ["vitamin bones density", "running coral", "glucose T-cells", "the of"]:
        e = {h.id: h.score for h in ekw.search(SCHEMA, query, 50)}
        q = {h.id: h.score for h in qkw.search(SCHEMA, query, 50)}
        assert set(e) == set(q)
        for rid, score in e.items():
            assert q[rid] == pytest.approx(score, rel=1e-4)
    edge.close()
    qdrant.close()


def test_a_qdrant_without_collection_metadata_keeps_the_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """GIVEN a Qdrant that refuses collection metadata (before 1.16) WHEN the index refreshes
    THEN nothing is re-weighted and new documents keep the setting's average length (weights
    it could not record would not be used for the next documents)."""
    store = LocalQdrantStore(Settings(), client=QdrantClient(":memory:"))
    kw = QdrantSparseKeywordIndex(store, schema=SCHEMA)
    _fill(store, kw, _records(30))
    before = store.vectors_of(SCHEMA, ["d1"], "bm25")["d1"]

    def refuse(*_: object) -> None:
        raise ValueError("Unknown field: metadata")

    monkeypatch.setattr(store, "set_metadata", refuse)
    assert kw.refresh(SCHEMA) is False and kw.refresh(SCHEMA) is False
    assert kw.avg_doc_len_of(SCHEMA) == 256.0
    assert store.vectors_of(SCHEMA, ["d1"], "bm25")["d1"] == before
    store.close()


def test_term_presence_after_hydration_reads_the_engine_once_with_the_same_answer(
    tmp_path: Path,
) -> None:
    """GIVEN an Edge store with 80 records, its record cache cold
    WHEN the query side hydrates 40 of them (payloads only, as finalize does) and then asks
    which query terms each contains
    THEN the answer equals the one read with a cold cache, and the engine was asked once: the
    sparse vectors came along with the payloads (no second ``retrieve`` for them)."""
    store = EdgeStore(Settings(), root=tmp_path)
    kw = EdgeSparseKeywordIndex(store, schema=SCHEMA)
    try:
        _fill(store, kw, _records())
        ids = [f"d{i}" for i in range(0, 80, 2)]
        terms = sorted(set(default_analyzer().terms("vitamin bone density running")))
        cold = kw.term_presence(SCHEMA, terms, ids)
        store.clear_record_cache()
        shard = store._shard(SCHEMA)
        calls: list[int] = []

        class _Counting:  # the engine's shard, counting its reads
            def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
                return getattr(shard, name)

            def retrieve(self, *args, **kwargs):  # type: ignore[no-untyped-def]
                calls.append(len(args[0]))
                return shard.retrieve(*args, **kwargs)

        store._shard = lambda schema: _Counting()  # type: ignore[method-assign]
        payloads = store.hydrate_records(SCHEMA, ids)
        assert len(payloads) == 40 and all(not r.vectors for r in payloads.values())
        assert kw.term_presence(SCHEMA, terms, ids) == cold
        assert calls == [40]
    finally:
        store.close()
