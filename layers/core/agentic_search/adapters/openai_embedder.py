"""Embeddings from an OpenAI-compatible ``/embeddings`` endpoint (the openai SDK), lazily:
no import, client or call at construction (see :class:`OpenAIEmbedder`)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from agentic_search.ports import EmbedderError
from agentic_search.wire import EmbedderIdentity


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible ``/embeddings`` endpoint (openai SDK).

    Nothing is imported, built or called at construction: the client is made on the first call
    and ``dim``, unless given, is discovered by one probe call the first time it is read (so a
    hanging API is met inside the caller's deadline, e.g. the search's source deadline, never
    while the dependencies are made). Thread-safe.
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        dim: int | None = None,
        batch_size: int = 64,
        timeout_s: float = 30.0,
    ) -> None:
        self.name = model
        self.batch_size = batch_size
        self._client_options = {
            "base_url": base_url,
            "api_key": api_key or "unused",
            "timeout": timeout_s,
            "max_retries": 2,
        }
        self._client: Any = None
        self._dim = dim
        self._lock = threading.Lock()

    @property
    def client(self) -> Any:
        """The ``openai.OpenAI`` client, made on first use (no network I/O)."""
        with self._lock:
            if self._client is None:
                from openai import OpenAI

                self._client = OpenAI(**self._client_options)
            return self._client

    @property
    def dim(self) -> int:
        """Vector dimension: the given one, else the length of a probe embedding (one call,
        made the first time this is read).

        Raises:
            EmbedderError: when the probe call fails.
        """
        if self._dim is None:
            self._dim = len(self._call(["dimension probe"])[0])
        return self._dim

    @property
    def identity(self) -> EmbedderIdentity:
        """The model name, normalised (vectors are L2-normalised here), the API's own
        truncation; ``dim`` only once known (given, or learnt from a call: no probe here)."""
        return EmbedderIdentity(model=self.name, dim=self._dim, normalized=True)

    def _call(self, texts: list[str]) -> np.ndarray:
        try:
            resp = self.client.embeddings.create(model=self.name, input=texts)
        except Exception as exc:
            raise EmbedderError(f"embedding API call failed: {exc}") from exc
        rows = sorted(resp.data, key=lambda d: d.index)
        arr = np.asarray([r.embedding for r in rows], dtype=np.float32)
        if self._dim is None and arr.ndim == 2:
            self._dim = int(arr.shape[1])  # learnt from the first answer
        norms = np.linalg.norm(arr, axis=1, keepdims=True)
        return arr / np.where(norms == 0, 1.0, norms)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` in batches of ``batch_size``; returns ``(n, dim)`` float32."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        chunks = [
            self._call(list(texts[i : i + self.batch_size]))
            for i in range(0, len(texts), self.batch_size)
        ]
        return np.vstack(chunks)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query text; returns ``(dim,)`` float32."""
        return self._call([text])[0]


__all__ = ["OpenAIEmbedder"]
