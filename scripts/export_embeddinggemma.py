"""Convert EmbeddingGemma-300M's sentence-transformers folder to one ONNX graph, and record
reference vectors with sentence-transformers itself.

Run only by ``scripts/assemble_embedder.py`` inside the conversion venv (``.venv-convert``:
Python 3.11, torch 2.13.0 CPU, sentence-transformers, transformers, onnx, onnxscript,
onnxruntime); the search never imports torch. Subcommands:

``export SRC OUT``
    ``OUT/model.onnx`` (+ ``model.onnx.data``, the weights as external data): the whole
    sentence-transformers pipeline (Gemma3 encoder, mean pooling, both Dense layers, L2
    normalization), ``input_ids`` and ``attention_mask`` ``[batch, tokens]`` int64 in,
    ``sentence_embedding`` ``[batch, 768]`` float32 out, batch and tokens dynamic.
    ``torch.onnx.export(dynamo=True)``: the TorchScript exporter (``dynamo=False``) fails in
    transformers' ``masking_utils.sdpa_mask``. ``tokenizer.json`` and the model card are copied
    beside. The graph is then checked against sentence-transformers on a few texts (cosine).
``quantize OUT``
    ``OUT/model_int8.onnx``: onnxruntime's dynamic int8 quantization (weights int8 per output
    channel, activations quantized at run time) of ``OUT/model.onnx``.
``reference SRC TEXTS NPY``
    The vectors sentence-transformers gives for each line of ``TEXTS`` (JSON Lines with
    ``text`` and ``kind``: ``query`` or ``document``, embedded with the model's own prompt of
    that name), saved as float16 ``[n, 768]``.

Exit codes: 0 done, 1 a failed check (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

#: Texts the exported graph is checked on against sentence-transformers right after export.
CHECK_TEXTS = [
    "task: search result | query: open source vector database I can self-host",
    "title: none | text: Qdrant is a vector similarity search engine written in Rust.",
    "task: search result | query: base de datos vectorial de código abierto",
    "title: none | text: 一个开源的向量数据库，支持过滤和混合检索。",
]
#: The least cosine between the graph's vectors and sentence-transformers' accepted on export.
MIN_COSINE = 0.999


def _load(src: Path):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(src), device="cpu")


def _pipeline(st):
    import torch

    class Pipeline(torch.nn.Module):
        """sentence-transformers' modules in order (Transformer, Pooling, Dense, Dense,
        Normalize) fed token ids and the mask; returns the sentence embedding."""

        def __init__(self) -> None:
            super().__init__()
            self.st = st

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            features = {"input_ids": input_ids, "attention_mask": attention_mask}
            return self.st(features)["sentence_embedding"]

    return Pipeline().eval()


def export(src: Path, out: Path) -> None:
    """Export ``src`` (a sentence-transformers folder) to ``out/model.onnx`` and check it."""
    import numpy as np
    import onnxruntime as ort
    import torch

    torch.set_num_threads(2)
    st = _load(src)
    model = _pipeline(st)
    batch = st.tokenizer(CHECK_TEXTS[:2], padding=True, return_tensors="pt")
    out.mkdir(parents=True, exist_ok=True)
    target = out / "model.onnx"
    started = time.monotonic()
    with torch.no_grad():
        program = torch.onnx.export(
            model,
            (batch["input_ids"], batch["attention_mask"]),
            dynamo=True,
            input_names=["input_ids", "attention_mask"],
            output_names=["sentence_embedding"],
            dynamic_shapes={
                "input_ids": {0: "batch", 1: "tokens"},
                "attention_mask": {0: "batch", 1: "tokens"},
            },
            external_data=True,
        )
        program.save(str(target), external_data=True)
    print(f"exported {target} in {time.monotonic() - started:.0f} s")
    for name in ("tokenizer.json", "README.md"):
        shutil.copyfile(src / name, out / name)
    session = ort.InferenceSession(str(target), providers=["CPUExecutionProvider"])
    enc = st.tokenizer(CHECK_TEXTS, padding=True, return_tensors="np")
    got = session.run(
        None,
        {
            "input_ids": enc["input_ids"].astype(np.int64),
            "attention_mask": enc["attention_mask"].astype(np.int64),
        },
    )[0]
    want = st.encode(CHECK_TEXTS, convert_to_numpy=True, normalize_embeddings=True)
    cosines = np.sum(got * want, axis=1) / (
        np.linalg.norm(got, axis=1) * np.linalg.norm(want, axis=1)
    )
    if got.shape != (len(CHECK_TEXTS), 768) or float(cosines.min()) < MIN_COSINE:
        raise SystemExit(f"error: the ONNX graph disagrees with sentence-transformers: {cosines}")
    print(f"checked against sentence-transformers: least cosine {cosines.min():.7f}")


def quantize(out: Path) -> None:
    """Write ``out/model_int8.onnx``: dynamic int8 quantization of ``out/model.onnx``."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    started = time.monotonic()
    quantize_dynamic(
        out / "model.onnx", out / "model_int8.onnx", weight_type=QuantType.QInt8, per_channel=True
    )
    print(f"quantized {out / 'model_int8.onnx'} in {time.monotonic() - started:.0f} s")


def reference(src: Path, texts: Path, npy: Path) -> None:
    """Save sentence-transformers' vectors of ``texts`` (with their prompts) to ``npy``."""
    import numpy as np

    st = _load(src)
    rows = [json.loads(line) for line in texts.read_text(encoding="utf-8").splitlines() if line]
    vectors = np.zeros((len(rows), 768), dtype=np.float32)
    for kind in ("query", "document"):
        idx = [i for i, r in enumerate(rows) if r["kind"] == kind]
        if idx:
            vectors[idx] = st.encode(
                [rows[i]["text"] for i in idx], prompt_name=kind, convert_to_numpy=True
            )
    np.save(npy, vectors.astype(np.float16))
    print(f"{npy}: {len(rows)} vectors (float16), prompts {st.prompts}")


def main(argv: list[str] | None = None) -> int:
    """Entry point (see module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    e = sub.add_parser("export")
    e.add_argument("src", type=Path)
    e.add_argument("out", type=Path)
    q = sub.add_parser("quantize")
    q.add_argument("out", type=Path)
    r = sub.add_parser("reference")
    r.add_argument("src", type=Path)
    r.add_argument("texts", type=Path)
    r.add_argument("npy", type=Path)
    args = ap.parse_args(argv)
    if args.command == "export":
        export(args.src, args.out)
    elif args.command == "quantize":
        quantize(args.out)
    else:
        reference(args.src, args.texts, args.npy)
    return 0


if __name__ == "__main__":
    sys.exit(main())
