"""The :class:`~agentic_search.ports.Reranker` on Amazon Bedrock's Rerank API
(``bedrock-agent-runtime`` ``Rerank``; models ``amazon.rerank-v1:0``, ``cohere.rerank-v3-5:0``).

One call per round scores the texts the pipeline hands it (the top ``rerank_top_n`` fused
candidates: :func:`agentic_search.pipeline.rerank.rerank_candidates`), as inline text
documents against one text query, asking for every result. The client makes one attempt with
``RERANKER_TIMEOUT_S`` as its connect and read timeout, so a slow or failing call costs at most
that inside the round; its failure is a :class:`~agentic_search.ports.RerankerError`, which the
pipeline lists in the errors while the fused order stands.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from agentic_search.ports import RerankerError


def model_arn(model_id: str, region: str) -> str:
    """The foundation-model ARN of ``model_id`` in ``region`` (its partition from the
    region's prefix)."""
    partition = (
        "aws-cn"
        if region.startswith("cn-")
        else "aws-us-gov"
        if region.startswith("us-gov-")
        else "aws"
    )
    return f"arn:{partition}:bedrock:{region}::foundation-model/{model_id}"


class BedrockReranker:
    """Bedrock Rerank of ``model_id`` in ``region`` (None: boto3's); ``client``: a ready
    ``bedrock-agent-runtime`` client (tests: one under botocore's Stubber), else made on first
    use."""

    def __init__(
        self,
        model_id: str,
        region: str | None = None,
        timeout_s: float = 3.0,
        client: Any = None,
    ) -> None:
        self.model_id = model_id
        self.region = region
        self.timeout_s = timeout_s
        self.name = f"bedrock:{model_id}"
        self._client = client
        self._lock = threading.Lock()

    def client(self) -> Any:
        """The ``bedrock-agent-runtime`` client (one attempt, ``timeout_s``).

        Raises:
            RerankerError: when no region is configured.
        """
        with self._lock:
            if self._client is None:
                import boto3
                from botocore.config import Config
                from botocore.exceptions import BotoCoreError

                config = Config(
                    connect_timeout=self.timeout_s,
                    read_timeout=self.timeout_s,
                    retries={"total_max_attempts": 1, "mode": "standard"},
                )
                try:
                    self._client = boto3.session.Session().client(
                        "bedrock-agent-runtime", region_name=self.region, config=config
                    )
                except BotoCoreError as exc:  # NoRegionError
                    raise RerankerError(f"Bedrock Rerank {self.model_id}: {exc}") from exc
            return self._client

    def request(self, query: str, texts: Sequence[str]) -> dict[str, Any]:
        """The ``rerank`` keyword arguments for ``texts`` (every result asked for)."""
        region = self.client().meta.region_name
        return {
            "queries": [{"type": "TEXT", "textQuery": {"text": query}}],
            "sources": [
                {
                    "type": "INLINE",
                    "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": t}},
                }
                for t in texts
            ],
            "rerankingConfiguration": {
                "type": "BEDROCK_RERANKING_MODEL",
                "bedrockRerankingConfiguration": {
                    "numberOfResults": len(texts),
                    "modelConfiguration": {"modelArn": model_arn(self.model_id, region)},
                },
            },
        }

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """Relevance scores, one per text in input order (a text Bedrock did not rank: -inf).

        Raises:
            RerankerError: when the call fails or times out, or the answer is malformed.
        """
        if not texts:
            return []
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            out = self.client().rerank(**self.request(query, texts))
        except (BotoCoreError, ClientError) as exc:
            raise RerankerError(f"Bedrock Rerank {self.model_id} failed: {exc}") from exc
        scores = [float("-inf")] * len(texts)
        for item in out.get("results", []):
            idx = item.get("index")
            if not isinstance(idx, int) or not 0 <= idx < len(texts):
                raise RerankerError(f"Bedrock Rerank {self.model_id}: bad result {item!r}")
            scores[idx] = float(item["relevanceScore"])
        return scores


__all__ = ["BedrockReranker", "model_arn"]
