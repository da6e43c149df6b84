"""Embeddings from Amazon Bedrock (``bedrock-runtime`` InvokeModel), Amazon Titan Text
Embeddings v2 by default: the AWS-native option (``EMBEDDING_PROVIDER=bedrock``), with no
secret to manage (the function's role needs ``bedrock:InvokeModel`` on the model).

Titan v2 takes one text per call: request body ``{"inputText": str, "dimensions": 256 | 512
| 1024, "normalize": bool}``, response body ``{"embedding": [float, ...],
"inputTextTokenCount": int}`` (up to 8,192 tokens or 50,000 characters; longer texts are cut
at :data:`MAX_CHARS` here). Documents are embedded by a small thread pool, in input order.

Nothing is imported, built or called at construction: boto3 and the client come on the first
call (inside the caller's deadline). The region is ``region`` when given, else boto3's own
(``AWS_REGION`` / ``AWS_DEFAULT_REGION`` in Lambda). Every failure is an
:class:`~agentic_search.ports.EmbedderError` naming the model and the error code (a throttled
call says so after botocore's own retries).
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from agentic_search.ports import EmbedderError
from agentic_search.wire import EmbedderIdentity

TITAN_V2 = "amazon.titan-embed-text-v2:0"
#: Titan v2's input limit in characters (the API refuses longer texts).
MAX_CHARS = 50_000
#: Error codes of a call that may succeed later.
THROTTLED = {"ThrottlingException", "ServiceUnavailableException", "ModelNotReadyException"}


class BedrockEmbedder:
    """Titan Text Embeddings v2 (or a model with the same body) through InvokeModel.

    ``dimensions`` is 256, 512 or 1024 (Titan v2's choices); ``normalize`` asks the model for
    unit vectors (the stores use cosine either way, the identity records it). ``client`` is a
    ready ``bedrock-runtime`` client (tests: one with botocore's Stubber); otherwise one is
    made on first use with ``timeout_s`` connect/read timeouts and ``max_attempts`` calls in all,
    the first one included (botocore's ``total_max_attempts``, standard retry mode, which backs
    off on throttling). Thread-safe.
    """

    def __init__(
        self,
        model_id: str = TITAN_V2,
        dimensions: int = 1024,
        normalize: bool = True,
        region: str | None = None,
        client: Any = None,
        timeout_s: float = 10.0,
        max_attempts: int = 3,
        concurrency: int = 8,
    ) -> None:
        self.name = model_id
        self.dim = dimensions
        self.normalize = normalize
        self.region = region
        self.timeout_s = timeout_s
        self.max_attempts = max_attempts
        self.concurrency = concurrency
        self._client = client
        self._lock = threading.Lock()

    @property
    def identity(self) -> EmbedderIdentity:
        """The model id, ``dimensions``, ``normalize``; truncation is the model's own."""
        return EmbedderIdentity(model=self.name, dim=self.dim, normalized=self.normalize)

    @property
    def client(self) -> Any:
        """The ``bedrock-runtime`` client, made on first use (no network I/O).

        Raises:
            EmbedderError: when boto3 is missing or no region is configured.
        """
        with self._lock:
            if self._client is None:
                try:
                    import boto3
                    from botocore.config import Config
                    from botocore.exceptions import BotoCoreError
                except ImportError as exc:  # pragma: no cover - in the Lambda runtime
                    raise EmbedderError("Bedrock embeddings need boto3 (extra `aws`)") from exc
                config = Config(
                    connect_timeout=self.timeout_s,
                    read_timeout=self.timeout_s,
                    retries={"total_max_attempts": self.max_attempts, "mode": "standard"},
                )
                try:
                    self._client = boto3.client(
                        "bedrock-runtime", region_name=self.region, config=config
                    )
                except BotoCoreError as exc:  # e.g. NoRegionError
                    raise EmbedderError(f"Bedrock client for {self.name}: {exc}") from exc
            return self._client

    def _embed_one(self, text: str) -> np.ndarray:
        body = {
            "inputText": text[:MAX_CHARS] or " ",
            "dimensions": self.dim,
            "normalize": self.normalize,
        }
        client = self.client
        try:
            resp = client.invoke_model(
                modelId=self.name,
                body=json.dumps(body),
                contentType="application/json",
                accept="application/json",
            )
            answer = json.loads(resp["body"].read())
        except Exception as exc:
            raise _error(self.name, exc) from exc
        vector = answer.get("embedding") if isinstance(answer, dict) else None
        if not isinstance(vector, list) or len(vector) != self.dim:
            got = len(vector) if isinstance(vector, list) else type(vector).__name__
            raise EmbedderError(
                f"Bedrock {self.name} answered no {self.dim}-dimension embedding (got {got})"
            )
        return np.asarray(vector, dtype=np.float32)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` (one call each, ``concurrency`` at a time); returns
        ``(n, dimensions)`` float32 in input order.

        Raises:
            EmbedderError: when any call fails (the first failure).
        """
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if len(texts) == 1:
            return self._embed_one(texts[0])[np.newaxis, :]
        workers = max(1, min(self.concurrency, len(texts)))
        with cf.ThreadPoolExecutor(workers, thread_name_prefix="bedrock") as pool:
            return np.vstack(list(pool.map(self._embed_one, texts)))

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query text; returns ``(dimensions,)`` float32."""
        return self._embed_one(text)


def _error(model: str, exc: Exception) -> EmbedderError:
    """A botocore failure as the port's error: the code and message of a ClientError (and
    whether it was throttling), else the exception's own text."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict) and "Error" in response:
        code = response["Error"].get("Code", "Error")
        message = response["Error"].get("Message", "")
        hint = " (throttled: retry later or raise the account's quota)" if code in THROTTLED else ""
        return EmbedderError(f"Bedrock {model} refused the call: {code}: {message}{hint}")
    return EmbedderError(f"Bedrock {model} call failed: {type(exc).__name__}: {exc}")


__all__ = ["MAX_CHARS", "TITAN_V2", "BedrockEmbedder"]
