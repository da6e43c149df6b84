"""The server-mode code paths (sparse BM25 vectors, payload indexes) on Qdrant's embedded engine.

No Qdrant server runs here, so the store is forced into server mode on top of an in-memory
local client: the same qdrant-client calls a server receives, executed by the local engine.
"""

from __future__ import annotations

import numpy as np
import pytest
from qdrant_client import QdrantClient

from agentic_search.adapters.qdrant.sparse import QdrantSparseKeywordIndex
from agentic_search.adapters.qdrant.store import QdrantStore
from agentic_search.config import Settings
from agentic_search.logic.bm25 import term_index
from agentic_search.logic.text import keyword_text
from agentic_search.service import SearchService


@pytest.fixture
def server_engine(tmp_path, embedder, catalog_records):
    settings = Settings(agentic_search_home=tmp_path, qdrant_url="http://qdrant.invalid:6333")
    store = QdrantStore(settings, client=QdrantClient(":memory:"))
    engine = SearchService.create(settings, "tools", store=store, embedder=embedder)
    engine.ingest_records(catalog_records[:60])
    yield engine
    engine.close()


def test_server_mode_uses_sparse_vectors_in_the_collection(server_engine):
    # GIVEN server mode THEN BM25 is the Qdrant sparse index, stored with each point
    assert isinstance(server_engine.deps.keyword, QdrantSparseKeywordIndex)
    schema = server_engine.schema
    info = server_engine.deps.store.client.get_collection(
        server_engine.deps.store.collection(schema)
    )
    assert "bm25" in (info.config.params.sparse_vectors or {})
    rec = server_engine.deps.store.retrieve_records(schema, ["cursor"], with_vectors=True)["cursor"]
    sparse = rec.vectors["bm25"]
    assert len(sparse.indices) > 5 and all(v > 0 for v in sparse.values)


def test_sparse_bm25_returns_exactly_the_records_containing_the_term(server_engine, catalog_by_id):
    # WHEN searching one word
    schema = server_engine.schema
    hits = server_engine.deps.keyword.search(schema, "cursor", 50)
    ids = {h.id for h in hits}
    # THEN the hits are exactly the indexed records whose keyword text has that word
    analyzer = server_engine.deps.keyword.analyzer
    indexed = [p[schema.id_field] for p in server_engine.deps.store.scroll(schema)]
    expected = {
        rid
        for rid in indexed
        if "cursor" in analyzer.terms(keyword_text(schema, catalog_by_id[rid]))
    }
    assert "cursor" in ids
    assert ids == expected


def test_bm25_document_weights_follow_the_formula():
    # GIVEN k1 = 1.2, b = 0.75, avgdl = 4 and a document "alpha alpha beta gamma" (dl = 4)
    idx = QdrantSparseKeywordIndex(store=None, avg_doc_len=4.0)  # type: ignore[arg-type]
    vec = idx.sparse_vector("alpha alpha beta gamma")
    weights = dict(zip(vec.indices, vec.values, strict=True))
    # tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)) with dl/avgdl = 1 -> norm = 1.2
    assert weights[term_index("alpha")] == pytest.approx(2 * 2.2 / (2 + 1.2))
    assert weights[term_index("beta")] == pytest.approx(1 * 2.2 / (1 + 1.2))


def test_server_mode_search_end_to_end(server_engine):
    resp = server_engine.search("AI code editor", limit=5)
    assert not resp.output.errors
    sources = {h.source for c in resp.output.candidates for h in c.provenance.hits}
    assert "sparse:qdrant-sparse-bm25" in sources
    assert any(s.startswith("dense:") for s in sources)
    assert np.isfinite([c.score for c in resp.output.candidates]).all()
