"""EmbeddingGemma-300M run by onnxruntime and ``tokenizers``: the opt-in multilingual model.

Google's EmbeddingGemma-300M (2025; 308M parameters, 100+ languages, Gemma Terms of Use),
converted once by ``make embedder MODEL=embeddinggemma`` (scripts/assemble_embedder.py) into
``$AGENTIC_SEARCH_HOME/models/embeddinggemma-300m/``: ``model.onnx`` + ``model.onnx.data``
(fp32) and ``model_int8.onnx`` (onnxruntime dynamic int8), each the whole
sentence-transformers pipeline (Gemma3 encoder, mean pooling, both Dense layers, L2
normalization: ``input_ids``, ``attention_mask`` ``[batch, tokens]`` → ``[batch, 768]``),
``tokenizer.json`` and ``manifest.json`` (each file's sha256, each variant's artefact hash).

What this adapter adds around the graph is what sentence-transformers adds: the model card's
prompts before the text (:data:`QUERY_PROMPT`, :data:`DOCUMENT_PROMPT`), the tokenizer's
``<bos>`` … ``<eos>``, truncation at ``max_length`` tokens and right padding to the longest
text of a batch. A Matryoshka dimension under 768 keeps the first ``dim`` values and
normalises them again (:func:`truncate_normalize`), as the model card prescribes. The vectors
equal sentence-transformers' (tests/component/adapters/test_gemma_parity.py, when the
artefact is present).

Nothing is read at construction but the manifest's recorded hash (for the identity); the
tokenizer and the sessions are made on first use, once, under a lock. A missing artefact is
an :class:`~agentic_search.ports.EmbedderError` naming ``make embedder MODEL=embeddinggemma``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_search.adapters.onnx_embedder import CPU, TwoSessionEmbedder
from agentic_search.config import GEMMA_DIM, GEMMA_MODEL_NAME, gemma_model_name
from agentic_search.ports import EmbedderError
from agentic_search.wire import EmbedderIdentity

if TYPE_CHECKING:
    import numpy as np

#: The model card's prompts (sentence-transformers' ``prompts``: ``query``, ``document``).
QUERY_PROMPT = "task: search result | query: "
DOCUMENT_PROMPT = "title: none | text: "
#: The dimensions the model was trained to be truncated to (Matryoshka representation).
MATRYOSHKA_DIMS = (768, 512, 256, 128)
#: The folder ``make embedder MODEL=embeddinggemma`` writes under the home's models folder.
ARTEFACT_DIR = GEMMA_MODEL_NAME
MANIFEST = "manifest.json"
#: The files each graph needs (what its artefact hash covers), by quantization.
VARIANT_FILES = {
    "fp32": ("model.onnx", "model.onnx.data", "tokenizer.json"),
    "int8": ("model_int8.onnx", "tokenizer.json"),
}
#: The longest input: the model's sliding attention window (512 tokens) is what was checked.
GEMMA_MAX_LENGTH = 512
MAKE_HINT = (
    "run `make embedder MODEL=embeddinggemma ACCEPT_GEMMA_TERMS=yes` (docs/guides/embedders.md)"
)
_NORM_EPS = 1e-12


def artefact_digest(file_sha256: Sequence[str]) -> str:
    """The artefact hash of a variant: sha256 of its files' hex sha256s joined by newlines,
    in :data:`VARIANT_FILES` order."""
    return hashlib.sha256("\n".join(file_sha256).encode()).hexdigest()


def with_prompt(texts: Sequence[str], kind: str) -> list[str]:
    """``texts`` with the model card's prompt before each: :data:`QUERY_PROMPT` for
    ``queries``, :data:`DOCUMENT_PROMPT` for ``documents`` (sentence-transformers' ``query`` /
    ``document`` prompts).

    Raises:
        ValueError: for another ``kind``.
    """
    prompts = {"queries": QUERY_PROMPT, "documents": DOCUMENT_PROMPT}
    if kind not in prompts:
        raise ValueError(f"kind is queries or documents, not {kind!r}")
    return [prompts[kind] + t for t in texts]


def truncate_normalize(vectors: np.ndarray, dim: int) -> np.ndarray:
    """The first ``dim`` values of each row of ``vectors`` ``(n, d)``, L2-normalised again
    (norm floored at 1e-12); ``(n, dim)`` float32. ``dim == d`` returns the rows as given."""
    import numpy as np

    if dim == vectors.shape[1]:
        return vectors.astype(np.float32, copy=False)
    head = vectors[:, :dim].astype(np.float64)
    norms = np.maximum(np.linalg.norm(head, axis=1, keepdims=True), _NORM_EPS)
    return (head / norms).astype(np.float32)


def read_manifest(folder: Path) -> dict[str, Any]:
    """``folder/manifest.json`` as written by ``make embedder``.

    Raises:
        EmbedderError: when it is missing or unreadable (the message names the command).
    """
    path = folder / MANIFEST
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EmbedderError(f"EmbeddingGemma is not built at {folder}: {MAKE_HINT}") from None
    except (OSError, ValueError) as exc:
        raise EmbedderError(f"could not read {path}: {exc}; {MAKE_HINT}") from exc


class OnnxGemmaEmbedder(TwoSessionEmbedder):
    """EmbeddingGemma-300M through onnxruntime + tokenizers; offline, CPU, lazy.

    ``folder``: the artefact (``make embedder``'s output); ``quantization``: ``fp32`` or
    ``int8``; ``dim``: 768 or a Matryoshka truncation (512, 256, 128); ``max_length``: tokens
    per text, prompt included (longer texts are truncated). Documents are embedded in
    length-sorted batches of ``batch_size`` by a session with ``threads`` intra-op threads
    (onnxruntime's default when None); queries by a second session with ``query_threads``.
    Thread-safe: each session runs under its own lock.

    Raises (at construction):
        ValueError: for a ``dim`` or ``quantization`` the model does not have.
    """

    #: CPU work in this process (:func:`~agentic_search.pipeline.source_pool.runs_in_process`)
    in_process = True

    def __init__(
        self,
        folder: Path,
        quantization: str = "fp32",
        dim: int = GEMMA_DIM,
        max_length: int = 256,
        batch_size: int = 16,
        threads: int | None = None,
        query_threads: int = 1,
    ) -> None:
        if dim not in MATRYOSHKA_DIMS:
            raise ValueError(f"EmbeddingGemma's dimension is one of {MATRYOSHKA_DIMS}, not {dim}")
        if quantization not in VARIANT_FILES:
            raise ValueError(f"EmbeddingGemma's quantization is fp32 or int8, not {quantization}")
        self.folder = folder
        self.quantization = quantization
        self.dim = dim
        self.max_length = min(max_length, GEMMA_MAX_LENGTH)
        self.name = gemma_model_name(quantization, dim)
        self._artefact: str | None = None
        super().__init__(batch_size, threads, query_threads)

    @property
    def artefact_sha256(self) -> str:
        """This variant's artefact hash, as ``make embedder`` recorded it in the manifest.

        Raises:
            EmbedderError: when the artefact or this variant is missing.
        """
        if self._artefact is None:
            variants = read_manifest(self.folder).get("variants", {})
            if self.quantization not in variants:
                raise EmbedderError(
                    f"EmbeddingGemma's {self.quantization} graph is not built at "
                    f"{self.folder}: {MAKE_HINT}"
                )
            self._artefact = str(variants[self.quantization])
        return self._artefact

    @property
    def identity(self) -> EmbedderIdentity:
        """Model (graph and dimension), dimension, normalised, ``max_length``, mean pooling,
        the two prompts and the artefact hash (what the collection records).

        Raises:
            EmbedderError: when the artefact is missing (no identity can be told).
        """
        return EmbedderIdentity(
            model=self.name,
            dim=self.dim,
            normalized=True,
            max_length=self.max_length,
            pooling="mean",
            query_prefix=QUERY_PROMPT,
            passage_prefix=DOCUMENT_PROMPT,
            artefact=self.artefact_sha256,
        )

    def _file(self, name: str) -> Path:
        path = self.folder / name
        if not path.is_file():
            raise EmbedderError(f"EmbeddingGemma: {path} is missing: {MAKE_HINT}")
        return path

    @property
    def tokenizer(self) -> Any:
        """The ``tokenizers.Tokenizer`` (its ``<bos>``/``<eos>`` template, truncation at
        ``max_length``, right padding to the batch's longest text with ``<pad>``).

        Raises:
            EmbedderError: when the file is missing or unreadable.
        """
        with self._load_lock:
            if self._tokenizer is None:
                from tokenizers import Tokenizer

                path = self._file("tokenizer.json")
                try:
                    tok = Tokenizer.from_file(str(path))
                except Exception as exc:  # tokenizers raises plain exceptions
                    raise EmbedderError(f"could not read {path}: {exc}") from exc
                tok.enable_truncation(max_length=self.max_length)
                pad = "<pad>"
                tok.enable_padding(direction="right", pad_id=tok.token_to_id(pad), pad_token=pad)
                self._tokenizer = tok
            return self._tokenizer

    def _session(self, kind: str) -> Any:
        """The onnxruntime session for ``documents`` or ``queries``, made on first use.

        Raises:
            EmbedderError: when onnxruntime or the graph cannot be loaded.
        """
        with self._load_lock:
            if kind not in self._sessions:
                for name in VARIANT_FILES[self.quantization]:
                    self._file(name)
                graph = self.folder / VARIANT_FILES[self.quantization][0]
                ort, options = self._runtime(kind)
                try:
                    session = ort.InferenceSession(str(graph), options, providers=[CPU])
                except Exception as exc:  # onnxruntime raises its own plain exceptions
                    raise EmbedderError(f"could not load {graph}: {exc}") from exc
                self._sessions[kind] = session
            return self._sessions[kind]

    def _run(self, kind: str, texts: list[str]) -> np.ndarray:
        import numpy as np

        session = self._session(kind)
        encoded = self.tokenizer.encode_batch(with_prompt(texts, kind))
        feed = {
            "input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
        }
        with self._locks[kind]:
            try:
                vectors = session.run(None, feed)[0]
            except Exception as exc:
                raise EmbedderError(f"the embedding model failed on a batch: {exc}") from exc
        return truncate_normalize(np.asarray(vectors), self.dim)


__all__ = [
    "ARTEFACT_DIR",
    "DOCUMENT_PROMPT",
    "MANIFEST",
    "MATRYOSHKA_DIMS",
    "QUERY_PROMPT",
    "VARIANT_FILES",
    "OnnxGemmaEmbedder",
    "artefact_digest",
    "read_manifest",
    "truncate_normalize",
    "with_prompt",
]
