"""EmbeddingGemma without its 1.2 GB artefact: the identity a collection records (prompts,
dimension, graph, artefact hash), the prompts put before the text, the Matryoshka truncation,
the settings that choose it, and the one-line error naming `make embedder` when the artefact
is missing. The artefact's own vectors are tests/component/adapters/test_gemma_parity.py's."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from agentic_search.adapters.gemma_embedder import (
    DOCUMENT_PROMPT,
    MANIFEST,
    QUERY_PROMPT,
    OnnxGemmaEmbedder,
    artefact_digest,
    truncate_normalize,
    with_prompt,
)
from agentic_search.config import Settings
from agentic_search.logic.embedder_identity import identity_of, mismatch_message
from agentic_search.ports import EmbedderError
from agentic_search.wiring import build_embedder

FP32, INT8 = "a" * 64, "b" * 64


def _artefact(folder: Path, variants: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MANIFEST).write_text(
        json.dumps({"model": "embeddinggemma-300m", "variants": variants})
    )
    return folder


def test_the_model_cards_prompts_go_before_the_text() -> None:
    """Queries get `task: search result | query: `, documents `title: none | text: ` (the
    model card's, which the recorded sentence-transformers vectors were made with)."""
    assert QUERY_PROMPT == "task: search result | query: "
    assert DOCUMENT_PROMPT == "title: none | text: "
    assert with_prompt(["vector db", "x"], "queries") == [
        "task: search result | query: vector db",
        "task: search result | query: x",
    ]
    assert with_prompt(["vector db"], "documents") == ["title: none | text: vector db"]
    with pytest.raises(ValueError, match="queries or documents"):
        with_prompt(["x"], "passages")


def test_identity_records_prompts_dimension_graph_and_artefact_hash(tmp_path) -> None:
    """Everything that makes two EmbeddingGemma indexes comparable is in the identity, so an
    int8 index, a 256-dim index or another conversion is never searched with this one."""
    folder = _artefact(tmp_path / "g", {"fp32": FP32, "int8": INT8})
    full = identity_of(OnnxGemmaEmbedder(folder))
    assert full.model == "embeddinggemma-300m"
    assert (full.dim, full.normalized, full.pooling, full.max_length) == (768, True, "mean", 256)
    assert (full.query_prefix, full.passage_prefix) == (QUERY_PROMPT, DOCUMENT_PROMPT)
    assert full.artefact == FP32
    small = identity_of(OnnxGemmaEmbedder(folder, quantization="int8", dim=256))
    assert small.model == "embeddinggemma-300m-int8-256d"
    assert full.differences(small) == ["model", "dim", "artefact"]
    rebuilt = _artefact(tmp_path / "g2", {"fp32": "c" * 64})
    assert full.differences(identity_of(OnnxGemmaEmbedder(rebuilt))) == ["artefact"]
    message = mismatch_message("tools", full, small)
    assert (
        "artefact aaaaaaaaaaaa" in message
        and "--embedder minilm|e5-small|embeddinggemma" in message
    )


def test_settings_name_the_model_the_thresholds_are_keyed_by(tmp_path) -> None:
    """LOCAL_EMBEDDING_MODEL=embeddinggemma wires the ONNX adapter at the home's models folder;
    the settings tell its identity's model name without loading anything."""
    home = tmp_path / "home"
    _artefact(home / "models" / "embeddinggemma-300m", {"fp32": FP32, "int8": INT8})
    for quantization, dim, name in [
        ("fp32", 768, "embeddinggemma-300m"),
        ("int8", 768, "embeddinggemma-300m-int8"),
        ("fp32", 256, "embeddinggemma-300m-256d"),
    ]:
        s = Settings(
            agentic_search_home=home,
            local_embedding_model="embeddinggemma",
            embeddinggemma_quantization=quantization,
            embeddinggemma_dim=dim,
        )
        embedder = build_embedder(s)
        assert isinstance(embedder, OnnxGemmaEmbedder)
        assert embedder.folder == home / "models" / "embeddinggemma-300m"
        assert identity_of(embedder).model == s.embedder_model == name
        assert identity_of(embedder).dim == dim


def test_settings_read_the_dimension_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("LOCAL_EMBEDDING_MODEL", "embeddinggemma")
    monkeypatch.setenv("EMBEDDINGGEMMA_DIM", "256")
    assert Settings().embedder_model == "embeddinggemma-300m-int8-256d"  # int8 by default
    monkeypatch.setenv("EMBEDDINGGEMMA_DIM", "300")
    with pytest.raises(ValueError, match="EMBEDDINGGEMMA_DIM must be 768, 512, 256 or 128"):
        Settings()


def test_a_missing_artefact_is_one_line_naming_make_embedder(tmp_path) -> None:
    """No artefact: telling the identity or embedding fails with one line that names the
    command that builds it; a manifest without the asked graph names it too."""
    embedder = OnnxGemmaEmbedder(tmp_path / "nowhere")
    for call in (lambda: embedder.identity, lambda: embedder.embed_query("x")):
        with pytest.raises(EmbedderError) as err:
            call()
        assert "\n" not in str(err.value)
        assert "make embedder MODEL=embeddinggemma" in str(err.value)
    only_fp32 = OnnxGemmaEmbedder(_artefact(tmp_path / "g", {"fp32": FP32}), quantization="int8")
    with pytest.raises(EmbedderError, match=r"int8 graph is not built.*make embedder"):
        _ = only_fp32.identity
    with pytest.raises(EmbedderError, match=r"model_int8\.onnx is missing.*make embedder"):
        only_fp32.embed_query("x")


def test_only_the_models_dimensions_and_graphs_are_accepted(tmp_path) -> None:
    with pytest.raises(ValueError, match="one of"):
        OnnxGemmaEmbedder(tmp_path, dim=300)
    with pytest.raises(ValueError, match="fp32 or int8"):
        OnnxGemmaEmbedder(tmp_path, quantization="int4")


def test_artefact_digest_covers_every_file_in_order() -> None:
    one = artefact_digest(["1" * 64, "2" * 64])
    assert len(one) == 64
    assert one != artefact_digest(["2" * 64, "1" * 64])
    assert one != artefact_digest(["1" * 64])


@settings(max_examples=60, deadline=None)
@given(
    arrays(
        np.float32,
        (3, 768),
        elements=st.floats(-1, 1, width=32, allow_nan=False, allow_subnormal=False),
    ),
    st.sampled_from([512, 256, 128]),
)
def test_matryoshka_truncation_keeps_the_head_renormalized(vectors, dim) -> None:
    """The first `dim` values, unit length again, pointing the same way as the head."""
    vectors[:, 0] += 2.0  # no all-zero head
    out = truncate_normalize(vectors, dim)
    assert out.shape == (3, dim) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    head = vectors[:, :dim] / np.linalg.norm(vectors[:, :dim], axis=1, keepdims=True)
    np.testing.assert_allclose(out, head, atol=1e-5)


def test_full_dimension_is_passed_through() -> None:
    v = np.eye(2, 768, dtype=np.float32)
    assert truncate_normalize(v, 768) is v
