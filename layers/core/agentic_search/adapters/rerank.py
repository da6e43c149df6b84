"""Rerankers: a cross-encoder from a local model folder, or a rerank API; none by default.

A reranker scores (query, text) pairs for the top-N fused candidates only. Its scores are
stored beside the fused scores (``Candidate.rerank_score``), never in their place.

* :class:`CrossEncoderReranker`: an ONNX cross-encoder (e.g. ms-marco-MiniLM-L-6-v2 exported
  to ONNX with its ``tokenizer.json``) loaded by fastembed's ``TextCrossEncoder`` from
  ``RERANKER_MODEL_PATH``; nothing is downloaded.
* :class:`ApiReranker`: ``POST {RERANKER_URL}`` with ``{"model", "query", "documents",
  "top_n"}`` and a ``results: [{"index", "relevance_score"}]`` answer (the shape Cohere,
  Jina, Voyage, Together and Hugging Face TEI's ``/rerank`` share).
"""

from __future__ import annotations

import http.client
import json
import threading
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from agentic_search.ports import RerankerError


class CrossEncoderReranker:
    """An ONNX cross-encoder from a local folder (``model.onnx`` + ``tokenizer.json``)."""

    def __init__(self, folder: Path, batch_size: int = 32, threads: int | None = None) -> None:
        """Load the model.

        Raises:
            RerankerError: when the folder lacks ``model.onnx`` or ``tokenizer.json`` or the
                model does not load.
        """
        folder = Path(folder)
        missing = [f for f in ("model.onnx", "tokenizer.json") if not (folder / f).is_file()]
        if missing:
            raise RerankerError(
                f"RERANKER_MODEL_PATH {str(folder)!r} lacks {', '.join(missing)} "
                "(expected an ONNX cross-encoder folder)"
            )
        from fastembed.common.model_description import ModelSource
        from fastembed.rerank.cross_encoder import TextCrossEncoder

        model_name = f"local/{folder.name}"
        known = {m["model"] for m in TextCrossEncoder.list_supported_models()}
        if model_name not in known:
            TextCrossEncoder.add_custom_model(
                model=model_name, sources=ModelSource(hf=model_name), model_file="model.onnx"
            )
        try:
            self._model = TextCrossEncoder(
                model_name, specific_model_path=str(folder), threads=threads, cuda=False
            )
        except Exception as exc:  # fastembed raises plain exceptions
            raise RerankerError(f"could not load the cross-encoder: {exc}") from exc
        self.name = f"cross-encoder:{folder.name}"
        self.batch_size = batch_size
        self._lock = threading.Lock()

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """Cross-encoder logits, one per text."""
        if not texts:
            return []
        try:
            with self._lock:
                return [
                    float(s) for s in self._model.rerank(query, texts, batch_size=self.batch_size)
                ]
        except Exception as exc:
            raise RerankerError(f"cross-encoder failed: {exc}") from exc


class ApiReranker:
    """A rerank endpoint (Cohere / Jina / TEI request and answer shape)."""

    def __init__(
        self, url: str, model: str | None = None, api_key: str | None = None, timeout_s: float = 5
    ) -> None:
        self.url = url
        self.model = model
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.name = f"api:{model or url}"

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """Scores from the API, one per text (texts it did not score get -inf)."""
        if not texts:
            return []
        body: dict[str, object] = {"query": query, "documents": list(texts), "top_n": len(texts)}
        if self.model:
            body["model"] = self.model
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(
            self.url, data=json.dumps(body).encode(), headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                data = json.loads(resp.read())
        except (OSError, http.client.HTTPException, json.JSONDecodeError) as exc:
            # OSError covers URLError, timeouts and resets; HTTPException a server that hangs
            # up (RemoteDisconnected) or sends a truncated body (IncompleteRead)
            raise RerankerError(f"rerank API {self.url} failed: {exc}") from exc
        results = data.get("results") if isinstance(data, dict) else data
        if not isinstance(results, list):
            raise RerankerError(f"rerank API {self.url} answered without 'results'")
        scores = [float("-inf")] * len(texts)
        for item in results:
            try:
                idx = int(item["index"])
                value = float(item.get("relevance_score", item.get("score")))
            except (KeyError, TypeError, ValueError) as exc:
                raise RerankerError(f"rerank API {self.url}: bad result {item!r}") from exc
            if 0 <= idx < len(texts):
                scores[idx] = value
        return scores
