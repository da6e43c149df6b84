"""Fakes at the adapter edge (wrapping the real thing where there is one)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


class CountingEmbedder:
    """Wraps an embedder and counts the texts it embeds for documents (the real work goes to
    the wrapped one)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.dim = inner.dim
        self.texts = 0
        self.calls = 0

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts += len(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class MemoEmbedder:
    """Wraps an embedder and remembers each document text's vector: a test that writes the
    same few texts again and again pays the model once per text (the vectors are the wrapped
    embedder's own)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.dim = inner.dim
        self._vectors: dict[str, np.ndarray] = {}

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if todo:
            self._vectors.update(zip(todo, self.inner.embed_documents(todo), strict=True))
        if not texts:
            return self.inner.embed_documents(texts)
        return np.stack([self._vectors[t] for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
