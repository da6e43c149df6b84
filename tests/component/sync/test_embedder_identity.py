"""The collection records the embedder that built it; ingest, sync and search refuse another.

Real stores (Qdrant local mode, the server-mode code path on the embedded engine, Qdrant Edge)
and the real MiniLM; the "other" embedder is the real one under another identity (the same
dimension: the dangerous case, where nothing else would notice).
"""

from __future__ import annotations

import numpy as np
import pytest
from qdrant_client import QdrantClient

from agentic_search.adapters.qdrant.identity import IDENTITY_KEY
from agentic_search.adapters.qdrant.store import QdrantStore
from agentic_search.config import Settings
from agentic_search.pipeline.runner import LocalRunner
from agentic_search.ports import EmbedderMismatch
from agentic_search.service import SearchService
from agentic_search.sync.indexer import Indexer
from agentic_search.wire import EmbedderIdentity, SearchRequest

OTHER = EmbedderIdentity(model="amazon.titan-embed-text-v2:0", dim=384, normalized=True)


class _Other:
    """The real embedder's vectors under another identity."""

    def __init__(self, inner, identity: EmbedderIdentity = OTHER) -> None:
        self.inner, self.identity = inner, identity
        self.name, self.dim = identity.model, inner.dim

    def embed_documents(self, texts) -> np.ndarray:
        return self.inner.embed_documents(texts)

    def embed_query(self, text) -> np.ndarray:
        return self.inner.embed_query(text)


def _engine(tmp_path, embedder, mode: str) -> SearchService:
    if mode == "edge":
        settings = Settings(agentic_search_home=tmp_path, vector_store="edge", cache_backend="none")
        return SearchService.create(settings, "tools", embedder=embedder)
    if mode == "server":  # the server's calls on the embedded engine (no server here)
        settings = Settings(
            agentic_search_home=tmp_path,
            qdrant_url="http://qdrant.invalid:6333",
            cache_backend="none",
        )
        store = QdrantStore(settings, client=QdrantClient(":memory:"))
        return SearchService.create(settings, "tools", store=store, embedder=embedder)
    settings = Settings(agentic_search_home=tmp_path, vector_store="local", cache_backend="none")
    return SearchService.create(settings, "tools", embedder=embedder)


@pytest.fixture(params=["local", "server", "edge"])
def built(request, tmp_path, embedder, catalog_records):
    engine = _engine(tmp_path, embedder, request.param)
    engine.ingest_records(catalog_records[:24])
    yield engine
    engine.close()


def test_ingest_records_the_embedders_identity(built, embedder):
    store = built.deps.store
    assert store.embedder_identity(built.schema) == embedder.identity
    assert embedder.identity == EmbedderIdentity(
        model="all-MiniLM-L6-v2-int8", dim=384, normalized=True, max_length=256
    )


def test_search_with_another_embedder_is_refused_naming_both(built, embedder):
    other = built.deps.derive(embedder=_Other(embedder))
    with pytest.raises(EmbedderMismatch) as exc:
        SearchService(other).search("code completion that runs locally")
    message = str(exc.value)
    assert "all-MiniLM-L6-v2-int8 (384 dims, normalized, max 256 tokens)" in message
    assert "amazon.titan-embed-text-v2:0 (384 dims, normalized)" in message
    assert "they differ in model" in message and "ingest --rebuild" in message
    assert "\n" not in message


def test_the_state_machines_dense_sources_fail_with_the_mismatch(built, embedder):
    # the steps as Lambda runs them (no SearchService): dense sources carry the error, the
    # keyword and structured ones still answer
    other = built.deps.derive(embedder=_Other(embedder))
    request = SearchRequest(query="code completion that runs locally", domain="tools")
    response = LocalRunner(lambda _: other).run(request).state.built_response
    dense = [e for e in response.output.errors if e.source.startswith("dense:")]
    assert dense and all("amazon.titan-embed-text-v2:0" in e.message for e in dense)
    assert all("all-MiniLM-L6-v2-int8" in e.message for e in dense)
    assert response.output.candidates  # BM25 still answers


def test_ingest_with_another_embedder_is_refused_before_writing(built, embedder, catalog_records):
    store, schema = built.deps.store, built.schema
    before = store.count(schema)
    indexer = Indexer(store, _Other(embedder), built.deps.keyword)
    with pytest.raises(EmbedderMismatch, match=r"amazon\.titan-embed-text-v2:0"):
        indexer.upsert(schema, catalog_records[24:30])
    assert store.count(schema) == before
    assert store.embedder_identity(schema) == embedder.identity


def test_another_max_length_is_a_mismatch(built, embedder):
    shorter = embedder.identity.model_copy(update={"max_length": 128})
    other = built.deps.derive(embedder=_Other(embedder, shorter))
    with pytest.raises(EmbedderMismatch, match="they differ in max_length"):
        SearchService(other).search("code completion")


def test_rebuild_drops_the_identity_with_the_collection(built, embedder, catalog_records):
    store, schema = built.deps.store, built.schema
    store.drop(schema)
    assert store.embedder_identity(schema) is None
    rebuilt = built.deps.derive(embedder=_Other(embedder))
    SearchService(rebuilt).ingest_records(catalog_records[:5])
    assert store.embedder_identity(schema) == OTHER


def test_a_store_built_before_identities_is_adopted(tmp_path, embedder, catalog_records):
    engine = _engine(tmp_path, embedder, "local")
    schema = engine.schema
    store = engine.deps.store
    engine.ingest_records(catalog_records[:10])
    # GIVEN a collection as an earlier version left it: no identity in its metadata
    store._c(schema).update_collection(store.collection(schema), metadata={IDENTITY_KEY: None})
    store._identities.clear()
    assert store.embedder_identity(schema) is None
    # THEN a search accepts it as it is (and writes nothing)
    assert engine.search("code completion").output.candidates
    assert store.embedder_identity(schema) is None
    # AND the next write records the current embedder
    engine.ingest_records(catalog_records[10:12])
    store._identities.clear()
    assert store.embedder_identity(schema) == embedder.identity
    engine.close()


def test_an_api_embedders_dimension_is_learnt_and_recorded(tmp_path, embedder, catalog_records):
    # GIVEN an identity recorded before the dimension was known (an API not yet called)
    engine = _engine(tmp_path, embedder, "edge")
    schema, store = engine.schema, engine.deps.store
    engine.ingest_records(catalog_records[:3])
    unknown = embedder.identity.model_copy(update={"dim": None})
    store.record_embedder_identity(schema, unknown)
    # WHEN the same embedder writes again THEN the dimension is filled in
    engine.ingest_records(catalog_records[3:5])
    assert store.embedder_identity(schema) == embedder.identity
    engine.close()


def test_sync_with_another_embedder_fails_each_change_naming_both(
    tmp_path, embedder, catalog_records
):
    from agentic_search.sync.apply import apply_changes
    from agentic_search.sync.changes import CatalogChange, ChangeOp

    engine = _engine(tmp_path, embedder, "local")
    engine.ingest_records(catalog_records[:6])
    schema, store = engine.schema, engine.deps.store
    other = engine.deps.derive(embedder=_Other(embedder))
    changes = [
        CatalogChange(op=ChangeOp.INSERT, record_id=r[schema.id_field], version=1, record=r)
        for r in catalog_records[6:9]
    ]
    report = apply_changes(other, changes)
    assert [o.outcome for o in report.outcomes] == ["failed"] * 3
    for outcome in report.outcomes:
        assert "amazon.titan-embed-text-v2:0" in outcome.error
        assert "all-MiniLM-L6-v2-int8" in outcome.error
    assert store.count(schema) == 6
    engine.close()
