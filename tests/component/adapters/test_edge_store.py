"""The Qdrant Edge adapters (``VECTOR_STORE=edge``) run against the real engine.

The same checks as the local-mode store's: every compiled filter returns exactly the ids the
Python reference ``matches`` admits over the bundled catalog, the structured source ranks as
``rank_structured``, writes read back, dense search is exact before ``optimize()``, sparse BM25
scores are ``(k1 + 1)`` times Lucene BM25's (bm25s's), the engine's RRF equals ours, and a
shard closed and reopened holds what was written.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

# The operator and structured cases are the local-mode store's (tests/component/adapters/
# test_filters.py), so both engines are held to one list.
from component.adapters.test_filters import OPERATOR_CASES, STORE_CASES

from agentic_search.adapters.edge.filters import to_edge
from agentic_search.adapters.edge.sparse import EdgeSparseKeywordIndex
from agentic_search.adapters.edge.store import READ_WITHOUT, EdgeStore
from agentic_search.adapters.edge.structured import EdgeStructuredStore
from agentic_search.config import Settings
from agentic_search.logic.bm25 import terms_vector
from agentic_search.logic.filters import FilterError, matches
from agentic_search.logic.fusion import rrf
from agentic_search.logic.schema import DomainSchema, load_schema
from agentic_search.logic.structured import rank_structured
from agentic_search.logic.text import keyword_text
from agentic_search.ports import VectorStoreError
from agentic_search.wire import (
    HASHES_KEY,
    SPARSE_VECTOR,
    Filter,
    PointWrite,
    RankedList,
    SparseVector,
    VectorUpdate,
)


def _edge_ids(store: EdgeStore, schema: DomainSchema, flt: Any) -> set[str]:
    return {p["id"] for p in store.scroll(schema, ["id"], flt=flt)}


def _expected(schema: DomainSchema, records: list[dict], filters: list[Filter]) -> set[str]:
    return {r["id"] for r in records if all(matches(schema, f, r) for f in filters)}


@pytest.fixture(scope="module")
def edge_store(
    tmp_path_factory: pytest.TempPathFactory, tools_schema: DomainSchema, catalog_records
) -> Iterator[EdgeStore]:
    """The bundled catalog in an Edge shard, one tiny dummy vector per aspect."""
    store = EdgeStore(Settings(), root=tmp_path_factory.mktemp("edge"))
    store.ensure_collection(tools_schema, dim=2)
    store.upsert(
        tools_schema,
        [
            PointWrite(r["id"], {a: [1.0, 0.0] for a in tools_schema.aspect_names}, dict(r))
            for r in catalog_records
        ],
    )
    yield store
    store.close()


def test_the_shard_holds_the_catalog_with_payload_indexes(
    edge_store: EdgeStore, tools_schema: DomainSchema, catalog_records: list[dict]
) -> None:
    """GIVEN the catalog upserted THEN every record is there and every filterable field and
    the id field carry a payload index."""
    assert edge_store.count(tools_schema) == len(catalog_records) > 100
    assert _edge_ids(edge_store, tools_schema, None) == {r["id"] for r in catalog_records}
    shard = edge_store._shard(tools_schema)
    indexed = set(shard.info().payload_schema)
    assert indexed == {*tools_schema.filterable_fields, tools_schema.id_field}


@pytest.mark.parametrize("case", OPERATOR_CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_operator_edge_matches_reference(
    case: tuple[str, str, Any],
    tools_schema: DomainSchema,
    catalog_records: list[dict],
    edge_store: EdgeStore,
) -> None:
    """GIVEN one filter WHEN compiled by to_edge and scrolled in the Edge shard
    THEN the ids equal those ``matches()`` admits, a proper non-empty subset."""
    flt = Filter(field=case[0], operator=case[1], value=case[2])
    expected = _expected(tools_schema, catalog_records, [flt])
    assert 0 < len(expected) < len(catalog_records)
    assert _edge_ids(edge_store, tools_schema, to_edge(tools_schema, [flt])) == expected


@pytest.mark.parametrize("text", ["pilot", "code", "whisper", "copilot", "stable diffusion"])
def test_contains_is_whole_words_as_the_reference(
    text: str, tools_schema: DomainSchema, catalog_records: list[dict], edge_store: EdgeStore
) -> None:
    flt = Filter(field="name", operator="contains", value=text)
    expected = _expected(tools_schema, catalog_records, [flt])
    assert _edge_ids(edge_store, tools_schema, to_edge(tools_schema, [flt])) == expected


def test_filters_and_excluded_ids_combine(
    tools_schema: DomainSchema, catalog_records: list[dict], edge_store: EdgeStore
) -> None:
    """GIVEN two filters and excluded ids THEN the ids are the reference's minus the excluded."""
    filters = [
        Filter(field="open_source", operator="eq", value=True),
        Filter(field="category", operator="ne", value="IDE"),
    ]
    expected = _expected(tools_schema, catalog_records, filters)
    excluded = sorted(expected)[:3]
    got = _edge_ids(edge_store, tools_schema, to_edge(tools_schema, filters, excluded))
    assert len(expected) > 5
    assert got == expected - set(excluded)
    aspect = tools_schema.aspect_names[0]
    hits = edge_store.query_dense(tools_schema, aspect, [1.0, 0.0], 500, filters, excluded)
    assert {h.id for h in hits} == expected - set(excluded)


def test_a_rejected_filter_raises_before_any_query(tools_schema: DomainSchema) -> None:
    with pytest.raises(FilterError):
        to_edge(tools_schema, [Filter(field="category", operator="in", value=[{"$ne": None}])])


@pytest.mark.parametrize(
    ("filters", "prefs", "top_k", "exclude"),
    [c[1:] for c in STORE_CASES],
    ids=[c[0] for c in STORE_CASES],
)
def test_structured_edge_ranks_as_the_reference(
    filters: list[Filter],
    prefs: list[Filter],
    top_k: int,
    exclude: list[str],
    tools_schema: DomainSchema,
    catalog_records: list[dict],
    edge_store: EdgeStore,
) -> None:
    """GIVEN filters, preferences, top_k and excluded ids WHEN the Edge structured source
    finds THEN the ranked ids and scores are ``rank_structured``'s over the admitted records."""
    hits = EdgeStructuredStore(edge_store).find(tools_schema, filters, prefs, top_k, exclude)
    admitted = [
        r
        for r in catalog_records
        if r["id"] not in exclude and all(matches(tools_schema, f, r) for f in filters)
    ]
    reference = rank_structured(tools_schema, admitted, prefs, top_k)
    assert len(reference) > 0
    assert [h.id for h in hits] == [h.id for h in reference]
    assert [h.score for h in hits] == pytest.approx([h.score for h in reference])


# ----- writes, reads, persistence -----------------------------------------------------------------

DOCS = load_schema("documents")


def _docs_store(
    root: Path, n: int = 80, dim: int = 8, seed: int = 3, on_disk: bool = False
) -> EdgeStore:
    store = EdgeStore(Settings(qdrant_edge_on_disk=on_disk), root=root)
    store.ensure_collection(DOCS, dim=dim)
    kw = EdgeSparseKeywordIndex(store)
    rng = np.random.default_rng(seed)
    words = ["vitamin", "bone", "density", "coral", "reef", "insulin", "glucose", "chess"]
    points = []
    for i in range(n):
        text = " ".join(rng.choice(words, size=int(rng.integers(1, 9))))
        payload = {"id": f"d{i}", "title": f"doc {i}", "text": text, HASHES_KEY: {"x": "h"}}
        points.append(
            PointWrite(
                f"d{i}",
                {a: rng.normal(size=dim).tolist() for a in DOCS.aspect_names},
                payload,
                kw.sparse_vector(text),
            )
        )
    store.upsert(DOCS, points)
    return store


def test_records_read_back_and_update_in_place(tmp_path: Path) -> None:
    """GIVEN points written WHEN read, updated (one vector, payload), deleted
    THEN reads reflect each write; an update keeps the vectors it does not replace."""
    store = _docs_store(tmp_path)
    aspect = DOCS.aspect_names[0]
    full = store.retrieve_records(DOCS, ["d1", "missing"], with_vectors=True)
    assert set(full) == {"d1"}
    assert isinstance(full["d1"].vectors[SPARSE_VECTOR], SparseVector)
    assert HASHES_KEY in full["d1"].payload
    assert not set(READ_WITHOUT) & set(store.hydrate_records(DOCS, ["d1"])["d1"].payload)
    before_sparse = full["d1"].vectors[SPARSE_VECTOR]

    store.update_points(
        DOCS, [VectorUpdate("d1", {aspect: [1.0] + [0.0] * 7})], {"d1": {"id": "d1", "n": 2}}
    )
    after = store.retrieve_records(DOCS, ["d1"], with_vectors=True)["d1"]
    assert after.payload == {"id": "d1", "n": 2}
    assert after.vectors[aspect] == pytest.approx([1.0] + [0.0] * 7)  # stored unit-normalized
    assert after.vectors[SPARSE_VECTOR] == before_sparse  # not replaced: kept
    for other in DOCS.aspect_names[1:]:
        assert after.vectors[other] == pytest.approx(full["d1"].vectors[other])
    assert store.vector_of(DOCS, "d1", aspect) == pytest.approx([1.0] + [0.0] * 7)

    store.update_points(DOCS, [], {"d2": {"id": "d2", "only": True}})
    assert store.retrieve_records(DOCS, ["d2"])["d2"].payload == {"id": "d2", "only": True}
    store.delete(DOCS, ["d3", "never-there"])
    assert store.count(DOCS) == 79 and not store.retrieve_records(DOCS, ["d3"])
    store.close()


def test_a_closed_shard_reopens_with_every_write(tmp_path: Path) -> None:
    """GIVEN writes then close (flush) WHEN a new store opens the folder THEN it holds them."""
    store = _docs_store(tmp_path)
    store.delete(DOCS, ["d0"])
    store.close()
    again = EdgeStore(Settings(), root=tmp_path)
    assert again.count(DOCS) == 79
    assert set(again.retrieve_records(DOCS, ["d0", "d5"])) == {"d5"}
    again.ensure_collection(DOCS, dim=8)  # matches: no error
    with pytest.raises(VectorStoreError, match="dimension"):
        again.ensure_collection(DOCS, dim=16)
    again.drop(DOCS)
    assert not again.exists(DOCS) and again.count(DOCS) == 0
    again.close()


def test_dense_search_is_exact(tmp_path: Path) -> None:
    """GIVEN random vectors WHEN searched (no HNSW before optimize) THEN the top 10 and their
    cosine scores are numpy's brute force's."""
    store = _docs_store(tmp_path, n=200)
    aspect = DOCS.aspect_names[0]
    ids = [f"d{i}" for i in range(200)]
    mat = np.asarray([store.vectors_of(DOCS, ids, aspect)[i] for i in ids])
    q = np.random.default_rng(9).normal(size=8)
    scores = mat @ (q / np.linalg.norm(q))
    expected = [ids[i] for i in np.argsort(-scores)[:10]]
    hits = store.query_dense(DOCS, aspect, q, 10)
    assert [h.id for h in hits] == expected
    assert [h.score for h in hits] == pytest.approx(sorted(scores, reverse=True)[:10], abs=1e-5)
    store.close()


def test_a_collection_built_twice_breaks_ties_the_same_way(tmp_path: Path) -> None:
    """GIVEN 64 records whose vectors are all the same, written in one batch, into three new
    shards (a fresh index of one catalog, three times)
    WHEN the same query is asked of each (every score ties)
    THEN the three answer the same top 20 in the same order, and writing the batch again (the
    records replaced) changes nothing: the engine breaks ties by where a point was placed, and
    a batch is placed in the order written, not in an order of the engine's own."""
    aspect = DOCS.aspect_names[0]
    points = [
        PointWrite(f"d{i:02d}", {a: [1.0, 0.5] for a in DOCS.aspect_names}, {"id": f"d{i:02d}"})
        for i in range(64)
    ]
    answers = []
    for n in range(3):
        store = EdgeStore(Settings(), root=tmp_path / str(n))
        store.ensure_collection(DOCS, dim=2)
        store.upsert(DOCS, points)
        answers.append([h.id for h in store.query_dense(DOCS, aspect, [1.0, 0.5], 20)])
        store.upsert(DOCS, points[::-1])
        assert [h.id for h in store.query_dense(DOCS, aspect, [1.0, 0.5], 20)] == answers[-1]
        store.close()
    assert len(set(answers[0])) == 20 and answers[0] == answers[1] == answers[2]


def test_an_on_disk_shard_keeps_an_int8_copy_and_ranks_as_brute_force(tmp_path: Path) -> None:
    """GIVEN QDRANT_EDGE_ON_DISK (vectors memory-mapped, an int8 scalar-quantized copy in RAM)
    WHEN 3,000 points are optimized (HNSW over the quantized copy) THEN the top 10 rescored
    with the float32 vectors is numpy's brute force's, AND the shard reopened by a store
    without the setting keeps its placement (the config is the shard's, not the process')."""
    n = 3000
    store = _docs_store(tmp_path, n=n, dim=32, on_disk=True)
    aspect = DOCS.aspect_names[0]
    ids = [f"d{i}" for i in range(n)]
    vecs = store.vectors_of(DOCS, ids, aspect)
    mat = np.asarray([vecs[i] for i in ids])
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    store.optimize(DOCS)
    rng = np.random.default_rng(11)
    for q in rng.normal(size=(5, 32)):
        scores = mat @ (q / np.linalg.norm(q))
        expected = [ids[i] for i in np.argsort(-scores)[:10]]
        assert [h.id for h in store.query_dense(DOCS, aspect, q, 10)] == expected
    store.close()
    config = next(tmp_path.glob("*/edge_config.json")).read_text()
    assert "int8" in config.lower()
    again = EdgeStore(Settings(), root=tmp_path)
    assert again.count(DOCS) == n
    again.close()
    assert "int8" in next(tmp_path.glob("*/edge_config.json")).read_text().lower()


def lucene_bm25(
    docs: dict[str, list[str]], query: list[str], k1: float, b: float
) -> dict[str, float]:
    """Lucene's BM25 (as bm25s computes it, the reference the project's keyword index was
    measured against): sum over the query's terms, each occurrence counted (Lucene's
    ``BooleanQuery`` holds one clause per occurrence; bm25s sums over the query's tokens), of
    ``ln(1 + (N - n + 0.5) / (n + 0.5)) * tf / (tf + k1 * (1 - b + b * dl / avgdl))``; only
    documents scoring above 0."""
    n_docs = len(docs)
    avgdl = sum(map(len, docs.values())) / n_docs
    out: dict[str, float] = {}
    for rid, terms in docs.items():
        score = 0.0
        for t in query:
            tf = terms.count(t)
            if tf:
                df = sum(1 for d in docs.values() if t in d)
                idf = math.log(1 + (n_docs - df + 0.5) / (df + 0.5))
                score += idf * tf / (tf + k1 * (1 - b + b * len(terms) / avgdl))
        if score > 0:
            out[rid] = score
    return out


def test_sparse_scores_are_k1_plus_1_times_lucene_bm25_after_refresh(tmp_path: Path) -> None:
    """GIVEN documents weighted with a guessed average length (256, the setting) WHEN the
    index refreshes THEN every sparse vector is re-weighted with the corpus' true average, and
    a query's Edge scores are (k1 + 1) x Lucene BM25's (same analyzer, k1, b; bm25s's) on the
    same ids, a repeated query term counted once per occurrence; a second refresh with nothing
    changed rewrites nothing."""
    store = _docs_store(tmp_path)
    kw = EdgeSparseKeywordIndex(store, schema=DOCS)
    texts = {p["id"]: keyword_text(DOCS, p) for p in store.scroll(DOCS, ["id", "title", "text"])}
    terms = {i: kw.analyzer.terms(t) for i, t in texts.items()}
    avgdl = sum(map(len, terms.values())) / len(terms)
    assert abs(avgdl - 256) > 100  # the vectors were written with a wrong guess
    assert kw.refresh(DOCS) is True
    assert kw.avg_doc_len_of(DOCS) == pytest.approx(avgdl)
    assert kw.refresh(DOCS) is False
    # a new document is weighted with the recorded average
    assert kw.sparse_vector("coral reef reef").values == pytest.approx(
        terms_vector(["coral", "reef", "reef"], avgdl).values
    )

    ids = list(terms)
    # (the last two repeat a term: it counts once per occurrence, as in Lucene and bm25s)
    for query in ["coral reef", "insulin glucose bone", "chess", "coral coral reef", "bone bone"]:
        expected = lucene_bm25(terms, kw.analyzer.terms(query), kw.k1, kw.b)
        assert expected
        hits = kw.search(DOCS, query, len(ids))
        assert {h.id for h in hits} == set(expected)
        for h in hits:
            assert h.score == pytest.approx((kw.k1 + 1) * expected[h.id], rel=1e-4)
    # term presence and known terms read the stored sparse vectors
    present = kw.term_presence(DOCS, ["coral", "zebra"], ids[:5])
    for i in ids[:5]:
        assert present[i] == ({"coral"} if "coral" in terms[i] else set())
    assert kw.known_terms(DOCS, ["coral", "zebra"]) == {"coral"}
    # the dense vectors were left as they were by the re-weighting
    assert store.vector_of(DOCS, "d1", DOCS.aspect_names[0]) is not None
    store.close()


def test_engine_rrf_equals_ours(tmp_path: Path) -> None:
    """GIVEN a dense and a sparse list WHEN the engine fuses them (RRF, k = 60) in one query
    THEN every id gets the score our rrf() gives the two lists queried separately."""
    store = _docs_store(tmp_path)
    kw = EdgeSparseKeywordIndex(store)
    aspect = DOCS.aspect_names[0]
    dense = np.random.default_rng(1).normal(size=8)
    sparse = kw.query_vector("vitamin bone coral")
    fused = store.query_hybrid_rrf(DOCS, aspect, dense, sparse, 20, rrf_k=60)
    d_hits = store.query_dense(DOCS, aspect, dense, 20)
    s_hits = store.query_sparse(DOCS, sparse, 20, None)
    ours = rrf(
        [RankedList("d", [h.id for h in d_hits]), RankedList("s", [h.id for h in s_hits])], 60
    )
    ours_scores = {f.id: f.fused for f in ours}
    assert len(fused) == 20
    for h in fused:
        assert math.isclose(h.score, ours_scores[h.id], rel_tol=1e-5)
    assert [round(h.score, 6) for h in fused] == [round(f.fused, 6) for f in ours[:20]]
    store.close()


def test_edge_is_the_default_and_local_mode_the_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN no VECTOR_STORE WHEN deps are built THEN the store, the keyword index and
    the structured source are the Edge ones, the shard lives under QDRANT_EDGE_PATH; GIVEN
    VECTOR_STORE=local THEN qdrant-client local mode with the shared sparse BM25 index."""
    from agentic_search.adapters.qdrant.sparse import QdrantSparseKeywordIndex
    from agentic_search.adapters.qdrant.store import QdrantStore
    from agentic_search.wiring import build_dependencies

    monkeypatch.delenv("VECTOR_STORE", raising=False)  # the default, whatever the run sets
    edge = build_dependencies(Settings(agentic_search_home=tmp_path / "e"), "documents")
    assert isinstance(edge.store, EdgeStore)
    assert isinstance(edge.keyword, EdgeSparseKeywordIndex) and edge.keyword.schema is DOCS
    assert isinstance(edge.structured, EdgeStructuredStore)
    edge.store.ensure_collection(DOCS, dim=2)
    assert (tmp_path / "e" / "edge" / "documents" / "edge_config.json").is_file()
    edge.store.close()

    local = build_dependencies(
        Settings(agentic_search_home=tmp_path / "l", vector_store="local"), "documents"
    )
    assert isinstance(local.store, QdrantStore) and not local.store.server_mode
    assert isinstance(local.keyword, QdrantSparseKeywordIndex) and local.keyword.schema is DOCS
    local.store.close()


def test_missing_payload_indexes_are_added_and_drop_removes_the_bm25_statistics(
    tmp_path: Path,
) -> None:
    """GIVEN a shard that lost a payload index (a crash right after create) WHEN
    ensure_collection runs again THEN the index is back; GIVEN recorded BM25 statistics WHEN
    the shard is dropped THEN they go with it, and the keyword index falls back to its default
    average length."""
    import qdrant_edge as qe

    store = _docs_store(tmp_path)
    shard = store._shard(DOCS)
    shard.update(qe.UpdateOperation.delete_field_index("year"))
    assert "year" not in shard.info().payload_schema
    store.ensure_collection(DOCS, dim=8)
    assert "year" in shard.info().payload_schema

    kw = EdgeSparseKeywordIndex(store, schema=DOCS)
    assert kw.refresh(DOCS) is True and kw.avg_doc_len_of(DOCS) != 256.0
    store.drop(DOCS)
    assert not list(tmp_path.glob("documents.*.json"))
    assert kw.avg_doc_len_of(DOCS) == 256.0
    store.close()


def test_query_side_reads_are_cached_until_a_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN records read by the query side with their vectors WHEN read again, or their
    sparse or dense vectors asked for THEN the engine is not asked again (same answers);
    WHEN any write goes through the store (payload overwrite, sparse re-weighting, delete)
    THEN the next read sees it; clear_record_cache forgets too."""
    store = _docs_store(tmp_path)
    calls: list[str] = []
    real_shard = store._shard

    class Counting:
        def __init__(self, shard: Any) -> None:
            self.shard = shard

        def retrieve(self, *args: Any, **kwargs: Any) -> Any:
            calls.append("retrieve")
            return self.shard.retrieve(*args, **kwargs)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.shard, name)

    monkeypatch.setattr(store, "_shard", lambda schema: Counting(real_shard(schema)))
    aspect = DOCS.aspect_names[0]
    ids = ["d1", "d2", "d3"]
    first = store.hydrate_records(DOCS, ids, with_vectors=True)
    assert calls == ["retrieve"] and HASHES_KEY not in first["d1"].payload
    again = store.hydrate_records(DOCS, ids)
    sparse = store.vectors_of(DOCS, ids, SPARSE_VECTOR)
    dense = store.vectors_of(DOCS, ids, aspect)
    assert calls == ["retrieve"]
    assert again == first and set(sparse) == set(dense) == set(ids)
    assert sparse["d1"] == first["d1"].vectors[SPARSE_VECTOR]
    store.hydrate_records(DOCS, ["d4"])  # a miss reads only the missing one
    assert calls == ["retrieve", "retrieve"]

    store.update_points(DOCS, [], {"d1": {"id": "d1", "title": "changed", "text": "chess"}})
    assert store.hydrate_records(DOCS, ["d1"])["d1"].payload["title"] == "changed"
    EdgeSparseKeywordIndex(store, schema=DOCS).refresh(DOCS)  # re-weights every sparse vector
    assert store.vectors_of(DOCS, ["d2"], SPARSE_VECTOR)["d2"] != sparse["d2"]
    store.delete(DOCS, ["d3"])
    assert "d3" not in store.hydrate_records(DOCS, ids)
    n = len(calls)
    store.clear_record_cache()
    store.hydrate_records(DOCS, ["d2"])
    assert len(calls) == n + 1
    store.close()


def test_queries_map_point_ids_to_record_ids_as_the_payload_says(tmp_path: Path) -> None:
    """GIVEN a shard WHEN dense, sparse and hybrid queries run with the id map (no payload
    read per hit) and without it THEN both give the same record ids and scores; a record
    deleted and written again is still found under its id."""
    store = _docs_store(tmp_path)
    kw = EdgeSparseKeywordIndex(store)
    aspect = DOCS.aspect_names[0]
    rng = np.random.default_rng(5)

    def run() -> list[tuple[list[float], list[str]]]:
        """Each query's hits, ties in any order (RRF ties are common)."""
        out = []
        for _ in range(3):
            dense = rng.normal(size=8)
            sparse = kw.query_vector("coral insulin chess")
            out.append([(h.id, h.score) for h in store.query_dense(DOCS, aspect, dense, 20)])
            out.append([(h.id, h.score) for h in store.query_sparse(DOCS, sparse, 20, None)])
            hybrid = store.query_hybrid_rrf(DOCS, aspect, dense, sparse, 20)
            out.append([(h.id, h.score) for h in hybrid])
        # scores in order, and the ids above the last score (ties at the cut may differ)
        return [
            (
                [round(s, 6) for _, s in hits],
                sorted(i for i, s in hits if round(s, 6) > round(hits[-1][1], 6)),
            )
            for hits in out
        ]

    rng = np.random.default_rng(5)
    mapped = run()
    assert store._rids[store.collection(DOCS)]  # filled by the queries
    store.map_ids = False
    rng = np.random.default_rng(5)
    assert run() == mapped
    store.map_ids = True
    record = store.retrieve_records(DOCS, ["d7"], with_vectors=True)["d7"]
    store.delete(DOCS, ["d7"])
    vec = record.vectors[aspect]
    assert "d7" not in {h.id for h in store.query_dense(DOCS, aspect, vec, 80)}
    store.upsert(
        DOCS, [PointWrite("d7", {a: record.vectors[a] for a in DOCS.aspect_names}, record.payload)]
    )
    assert store.query_dense(DOCS, aspect, vec, 1)[0].id == "d7"
    store.close()


def test_a_shard_holding_less_than_the_sync_status_says_is_damaged_until_dropped(
    tmp_path: Path,
) -> None:
    """GIVEN a closed shard of 80 points WHEN it is opened with what the sync status says it
    holds THEN a shard holding fewer points, or lacking a sampled record, answers every read
    with the one-line damage error naming the rebuild, until it is dropped; a shard holding
    what the status says opens (the check runs once, at open)."""
    from agentic_search.wire.sync import Holdings

    _docs_store(tmp_path).close()
    said: list[Holdings | None] = []
    opened = EdgeStore(Settings(), root=tmp_path, holdings=lambda schema: said[-1])
    for holdings, reason in (
        (Holdings(81, ["d1"]), "holds 80 points where the sync status has 81 records synced"),
        (Holdings(80, ["d1", "d80"]), "synced record 'd80' is not in the shard"),
    ):
        said.append(holdings)
        store = EdgeStore(Settings(), root=tmp_path, holdings=lambda schema: said[-1])
        for read in (
            lambda s=store: s.count(DOCS),
            lambda s=store: s.retrieve_records(DOCS, ["d1"]),
            lambda s=store: list(s.scroll(DOCS, ["id"])),
        ):
            with pytest.raises(VectorStoreError) as err:
                read()
            assert reason in str(err.value) and "\n" not in str(err.value)
            assert "agentic-search ingest FILE --rebuild --domain documents" in str(err.value)
        store.close()
    said.append(Holdings(80, ["d0", "d1", "d79"]))
    assert opened.count(DOCS) == 80
    opened.verify(DOCS)  # checked again, as /health?deep=true does: no error
    said.append(Holdings(81, []))
    with pytest.raises(VectorStoreError, match="81 records synced"):
        opened.verify(DOCS)
    opened.drop(DOCS)  # what ingest --rebuild does first
    assert not opened.exists(DOCS) and opened.count(DOCS) == 0
    opened.close()


class _FailingShard:
    """An open Edge shard whose reads fail as the engine does on a damaged file."""

    def __init__(self, shard: Any) -> None:
        self.shard = shard

    def __getattr__(self, name: str) -> Any:
        return getattr(self.shard, name)

    def count(self, *args: Any) -> Any:
        raise RuntimeError("Service internal error: mmap out of range")

    def retrieve(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("Service internal error: mmap out of range")


def test_count_and_vectors_of_answer_an_engine_failure_as_the_damage_error(
    tmp_path: Path,
) -> None:
    store = _docs_store(tmp_path)
    name = store.collection(DOCS)
    store.shards.open_shards[name] = _FailingShard(store.shards.open_shards[name])
    aspect = DOCS.aspect_names[0]
    for read in (lambda: store.count(DOCS), lambda: store.vectors_of(DOCS, ["d1"], aspect)):
        with pytest.raises(VectorStoreError) as err:
            read()
        assert "mmap out of range" in str(err.value)
        assert "agentic-search ingest FILE --rebuild --domain documents" in str(err.value)
    store.close()


def test_the_query_side_reads_a_sparse_vector_s_weights_only_when_used(tmp_path: Path) -> None:
    """GIVEN records read back for a search (payload with the sparse vector) WHEN term
    presence reads them THEN their weights were never converted from the engine's vectors
    (only the indices are needed; converting both cost twice as much), AND read later they
    are the weights written, equal as a list, with the vectors read whole for evidence too."""
    store = _docs_store(tmp_path, n=12)
    kw = EdgeSparseKeywordIndex(store, schema=DOCS)
    ids = [f"d{i}" for i in range(12)]
    records = store.hydrate_records(DOCS, ids)
    present = kw.term_presence(DOCS, ["coral", "bone"], ids)
    assert set(present) == set(ids)
    weights = [rec.sparse.values for rec in records.values() if rec.sparse is not None]
    assert len(weights) == len(ids)
    # (on 8a1452b each was a list of floats built as the record was read)
    assert all(not isinstance(w, list) and getattr(w, "_values", 0) is None for w in weights)
    written = {p["id"]: kw.sparse_vector(p["text"]) for p in store.scroll(DOCS, ["id", "text"])}
    for rid, rec in records.items():
        assert rec.sparse is not None
        assert list(rec.sparse.indices) == list(written[rid].indices)
        assert rec.sparse.values == pytest.approx(list(written[rid].values), rel=1e-6)
        assert rec.sparse == type(rec.sparse)(list(rec.sparse.indices), list(rec.sparse.values))
    store.clear_record_cache()
    whole = store.hydrate_records(DOCS, ids, with_vectors=True)
    for rid, rec in whole.items():
        assert rec.vectors is not None
        assert list(rec.vectors[SPARSE_VECTOR].values) == list(records[rid].sparse.values)


def test_vectors_of_records_not_read_yet_reads_no_payload(tmp_path: Path, monkeypatch) -> None:
    """GIVEN records the query side has not read WHEN their stored vectors are asked for
    (a search's relevance of its head, Rocchio feedback) THEN the engine is asked for the
    vectors alone, no payload (on 8a1452b, the id field of each: 0.4 ms more per 100
    records), AND each vector comes back under its own record id, equal to the vector read
    whole; an id with no point is left out."""
    store = _docs_store(tmp_path, n=12)
    aspect = DOCS.aspect_names[0]
    ids = ["d3", "d1", "d7", "nope"]
    asked: list[Any] = []
    real_shard = store._shard

    class Spy:
        def __init__(self, shard: Any) -> None:
            self.shard = shard

        def retrieve(self, *args: Any, **kwargs: Any) -> Any:
            asked.append(kwargs.get("with_payload"))
            return self.shard.retrieve(*args, **kwargs)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.shard, name)

    monkeypatch.setattr(store, "_shard", lambda schema: Spy(real_shard(schema)))
    dense = store.vectors_of(DOCS, ids, aspect)
    sparse = store.vectors_of(DOCS, ids, SPARSE_VECTOR)
    assert asked == [False, False]
    monkeypatch.undo()
    whole = store.retrieve_records(DOCS, ids, with_vectors=True)
    assert set(dense) == set(sparse) == set(whole) == {"d3", "d1", "d7"}
    for rid, rec in whole.items():
        assert rec.vectors is not None
        assert list(dense[rid]) == list(rec.vectors[aspect])
        assert sparse[rid] == rec.vectors[SPARSE_VECTOR]


def test_the_embedder_identity_is_read_again_only_when_its_file_changed(
    tmp_path: Path, monkeypatch
) -> None:
    """GIVEN a shard's recorded embedder identity WHEN it is asked for again (every search
    asks twice: before its walk and before its query embedding) THEN the sidecar is not read
    and parsed again (on 8a1452b: each time), AND once another identity is recorded, or the
    sidecar removed, the next ask sees it."""
    from agentic_search.wire.identity import EmbedderIdentity

    store = _docs_store(tmp_path, n=3)
    first = EmbedderIdentity(model="m1", dim=8)
    store.record_embedder_identity(DOCS, first)
    reads: list[Path] = []
    read_bytes = Path.read_bytes

    def counting(self: Path) -> bytes:
        reads.append(self)
        return read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", counting)
    assert [store.embedder_identity(DOCS) for _ in range(3)] == [first] * 3
    assert len(reads) == 1
    second = EmbedderIdentity(model="m2", dim=8)
    store.record_embedder_identity(DOCS, second)
    assert store.embedder_identity(DOCS) == second
    assert len(reads) == 2
    store._identity_file(DOCS).unlink()
    assert store.embedder_identity(DOCS) is None
