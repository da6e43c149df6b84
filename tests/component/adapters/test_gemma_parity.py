"""EmbeddingGemma's ONNX artefact gives sentence-transformers' vectors: 200 inputs in five
languages (en, es, de, fr, zh; queries and documents, each with its prompt) against the
vectors sentence-transformers 6.2 / torch 2.13.0 made from the same folder, recorded once
(tests/data/embeddinggemma/: texts.jsonl, reference.npy float16; `python
scripts/assemble_embedder.py --accept-gemma-terms --reference TEXTS NPY`).

Runs where `make embedder MODEL=embeddinggemma` has built the artefact (its home's models
folder, or EMBEDDINGGEMMA_PATH); elsewhere, CI included (no 1.2 GB download), it is skipped
with one line. No torch is needed: the reference is recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agentic_search.adapters.gemma_embedder import MANIFEST, OnnxGemmaEmbedder
from agentic_search.config import Settings

DATA = Path(__file__).resolve().parents[2] / "data" / "embeddinggemma"
#: The issue's bound: every vector within 1e-3 of sentence-transformers' in cosine.
MAX_COSINE_DISTANCE = 1e-3
FOLDER = Settings().resolved_gemma_path

pytestmark = pytest.mark.skipif(
    not (FOLDER / MANIFEST).is_file(),
    reason=f"EmbeddingGemma artefact not built at {FOLDER} (make embedder MODEL=embeddinggemma)",
)


def _rows() -> list[dict]:
    lines = (DATA / "texts.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line]


def _vectors(embedder: OnnxGemmaEmbedder, rows: list[dict]) -> np.ndarray:
    out = np.zeros((len(rows), embedder.dim), dtype=np.float32)
    for kind, method in (("query", embedder.embed_queries), ("document", embedder.embed_documents)):
        idx = [i for i, r in enumerate(rows) if r["kind"] == kind]
        out[idx] = method([rows[i]["text"] for i in idx])
    return out


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return np.sum(a64 * b64, axis=1) / (np.linalg.norm(a64, axis=1) * np.linalg.norm(b64, axis=1))


@pytest.fixture(scope="module")
def reference() -> tuple[list[dict], np.ndarray]:
    rows = _rows()
    ref = np.load(DATA / "reference.npy").astype(np.float32)
    assert ref.shape == (200, 768) and len(rows) == 200
    assert {r["lang"] for r in rows} == {"en", "es", "de", "fr", "zh"}
    return rows, ref


def test_fp32_artefact_equals_sentence_transformers(reference) -> None:
    """Every one of the 200 vectors within 1e-3 cosine distance of the recorded one (texts
    shorter than the truncation, so both saw every token)."""
    rows, ref = reference
    gemma = OnnxGemmaEmbedder(FOLDER, max_length=512, batch_size=8)
    assert max(gemma.count_tokens([r["text"] for r in rows])) + 12 < gemma.max_length
    got = _vectors(gemma, rows)
    distance = 1.0 - _cosines(got, ref)
    worst = int(np.argmax(distance))
    assert distance.max() <= MAX_COSINE_DISTANCE, (rows[worst], distance.max())


def test_matryoshka_256_is_the_truncated_reference(reference) -> None:
    """EMBEDDINGGEMMA_DIM=256 gives the reference's first 256 values, normalised again."""
    rows, ref = reference
    head = ref[:, :256] / np.linalg.norm(ref[:, :256], axis=1, keepdims=True)
    got = _vectors(OnnxGemmaEmbedder(FOLDER, dim=256, max_length=512, batch_size=8), rows[:40])
    assert got.shape == (40, 256)
    assert (1.0 - _cosines(got, head[:40])).max() <= MAX_COSINE_DISTANCE


def test_int8_graph_stays_close_to_sentence_transformers(reference) -> None:
    """The int8 graph (onnxruntime dynamic quantization) is an approximation: its least cosine
    to the reference is bounded below what fp32 keeps, as measured (least 0.956, mean 0.985:
    benchmarks/embedders/README.md)."""
    if not (FOLDER / "model_int8.onnx").is_file():
        pytest.skip("int8 graph not built (make embedder without --no-int8)")
    rows, ref = reference
    got = _vectors(OnnxGemmaEmbedder(FOLDER, quantization="int8", max_length=512), rows)
    cosines = _cosines(got, ref)
    assert cosines.min() >= INT8_MIN_COSINE
    assert cosines.mean() >= INT8_MIN_MEAN_COSINE


#: The least cosine the int8 graph keeps to sentence-transformers on these 200 inputs.
INT8_MIN_COSINE = 0.94
#: ... and the mean cosine it keeps over them.
INT8_MIN_MEAN_COSINE = 0.98
