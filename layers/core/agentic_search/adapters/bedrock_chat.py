"""The :class:`~agentic_search.ports.ChatJSONClient` port over Amazon Bedrock's Converse API
(``bedrock-runtime`` ``converse`` through boto3): ``LLM_PROVIDER=bedrock``.

Structured output is a forced tool call: the request carries one tool whose ``inputSchema``
is the answer's JSON Schema (the intent or plan schema generated from the domain schema) and
``toolChoice`` names that tool, so the model answers with a ``toolUse`` content block whose
``input`` is the JSON object (Bedrock's "Call a tool with the Converse API"; ``toolChoice``
``tool`` is honoured by Anthropic Claude 3+ and Amazon Nova models). The object is returned
as JSON text and parsed and validated by the caller exactly as the OpenAI-compatible answer
(:class:`~agentic_search.adapters.llm_planner.LLMIntentPlanner`).

Request (``converse`` keyword arguments)::

    modelId, system=[{"text": system}],
    messages=[{"role": "user", "content": [{"text": user}]}],
    inferenceConfig={"maxTokens": max_tokens, "temperature": 0.0},
    toolConfig={"tools": [{"toolSpec": {"name", "description", "inputSchema": {"json": schema}}}],
                "toolChoice": {"tool": {"name": schema_name}}}

Response: ``output.message.content`` holds ``{"toolUse": {"toolUseId", "name", "input"}}``.

Timeouts and retries: the client's read timeout is ``LLM_TIMEOUT_S`` and botocore's standard
retry mode makes ``max_retries + 1`` attempts (backing off on throttling); the planner also
abandons a call at its own hard deadline within ``LLM_BUDGET_S``. Every failure is an
:class:`~agentic_search.logic.llm_budget.LLMFallback` naming the model and the error code. Only a
``ValidationException`` is not transient (the same model refuses the same request the same
way, and the plan cache key names the model): throttling, 5xx, timeouts, and configuration
the operator can fix without changing the model (no region or credentials, access not
granted) are transient, so the fallback is not cached. Nothing is imported or built at
construction: boto3 comes on the first call.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from agentic_search.config import DEFAULT_BEDROCK_CHAT_MODEL
from agentic_search.logic.llm_budget import LLMFallback

#: Error codes of a refusal the same request always gets from the same model (the fallback
#: may be cached); every other failure may succeed later.
PERMANENT_CODES = {"ValidationException"}


class BedrockChatClient:
    """:class:`~agentic_search.ports.ChatJSONClient` over Bedrock Converse with a forced tool
    (see module docstring).

    ``model`` is the model id (``amazon.nova-micro-v1:0``, ``anthropic.claude-3-haiku-...``,
    or an inference profile id); ``region`` is Bedrock's region when not boto3's own
    (``AWS_REGION``/``AWS_DEFAULT_REGION``); ``timeout_s`` the read/connect timeout of the
    client. ``client`` is a ready ``bedrock-runtime`` client (tests: one with botocore's
    Stubber), used for every call whatever ``max_retries`` asks. Thread-safe.
    """

    def __init__(
        self,
        model: str = DEFAULT_BEDROCK_CHAT_MODEL,
        region: str | None = None,
        timeout_s: float = 10.0,
        client: Any = None,
    ) -> None:
        self.model = model
        self.region = region
        self.timeout_s = timeout_s
        self._given = client
        self._clients: dict[int, Any] = {}
        self._lock = threading.Lock()

    def client(self, max_retries: int) -> Any:
        """The ``bedrock-runtime`` client making ``max_retries + 1`` attempts (made on first
        use, no network I/O).

        Raises:
            LLMFallback: (``error``, transient: configuration can be fixed) when boto3 is
                missing or no region or profile is usable.
        """
        if self._given is not None:
            return self._given
        with self._lock:
            client = self._clients.get(max_retries)
            if client is None:
                try:
                    import boto3
                    from botocore.config import Config
                    from botocore.exceptions import BotoCoreError
                except ImportError as exc:  # pragma: no cover - in the Lambda runtime
                    raise LLMFallback(
                        "error", "LLM_PROVIDER=bedrock needs boto3 (extra `aws`)", transient=True
                    ) from exc
                config = Config(
                    connect_timeout=self.timeout_s,
                    read_timeout=self.timeout_s,
                    retries={"total_max_attempts": max_retries + 1, "mode": "standard"},
                )
                try:
                    # A session per client: boto3's default session is not thread-safe.
                    client = boto3.session.Session().client(
                        "bedrock-runtime", region_name=self.region, config=config
                    )
                except BotoCoreError as exc:  # e.g. NoRegionError
                    raise LLMFallback(
                        "error", f"Bedrock client for {self.model}: {exc}", transient=True
                    ) from exc
                self._clients[max_retries] = client
            return client

    def request(
        self,
        system: str,
        user: str,
        *,
        schema_name: str,
        json_schema: dict[str, Any],
        max_tokens: int,
    ) -> dict[str, Any]:
        """The ``converse`` keyword arguments of one call (see module docstring)."""
        return {
            "modelId": self.model,
            "system": [{"text": system}],
            "messages": [{"role": "user", "content": [{"text": user}]}],
            "inferenceConfig": {"maxTokens": max_tokens, "temperature": 0.0},
            "toolConfig": {
                "tools": [
                    {
                        "toolSpec": {
                            "name": schema_name,
                            "description": f"Record the {schema_name} read from the query.",
                            "inputSchema": {"json": json_schema},
                        }
                    }
                ],
                "toolChoice": {"tool": {"name": schema_name}},
            },
        }

    def complete_json(
        self,
        system: str,
        user: str,
        *,
        schema_name: str,
        json_schema: dict[str, Any],
        timeout_s: float,
        max_retries: int,
        max_tokens: int,
    ) -> str:
        """See :meth:`ChatJSONClient.complete_json`: the forced tool call's ``input`` as JSON
        text. ``timeout_s`` is bounded by the planner's deadline (the client's own timeout is
        ``LLM_TIMEOUT_S``).

        Raises:
            LLMFallback: ``timeout`` (transient) when no answer came in time; ``error`` for a
                refused or failed call (transient for throttling and 5xx); ``invalid`` when the
                answer holds no call of the tool (e.g. the output hit ``maxTokens``).
                Transient or not as the module docstring says.
        """
        kwargs = self.request(
            system, user, schema_name=schema_name, json_schema=json_schema, max_tokens=max_tokens
        )
        client = self.client(max_retries)
        try:
            resp = client.converse(**kwargs)
        except Exception as exc:
            raise _fallback(self.model, exc) from exc
        content = ((resp.get("output") or {}).get("message") or {}).get("content") or []
        for block in content:
            call = block.get("toolUse") if isinstance(block, dict) else None
            if call and call.get("name") == schema_name and isinstance(call.get("input"), dict):
                return json.dumps(call["input"], ensure_ascii=False)
        stop = resp.get("stopReason", "unknown")
        raise LLMFallback(
            "invalid", f"Bedrock {self.model} answered no {schema_name} tool call (stop: {stop})"
        )


def _fallback(model: str, exc: Exception) -> LLMFallback:
    """A boto3 failure as the planner's fallback: a ClientError's code and message (transient
    unless a ValidationException), a timeout, or the exception's own text (transient)."""
    from botocore.exceptions import ConnectTimeoutError, ReadTimeoutError

    if isinstance(exc, ReadTimeoutError | ConnectTimeoutError):
        return LLMFallback("timeout", f"Bedrock {model}: {exc}", transient=True)
    response = getattr(exc, "response", None)
    if isinstance(response, dict) and "Error" in response:
        code = response["Error"].get("Code", "Error")
        message = response["Error"].get("Message", "")
        transient = code not in PERMANENT_CODES
        return LLMFallback("error", f"Bedrock {model}: {code}: {message}", transient=transient)
    if isinstance(exc, LLMFallback):
        return exc
    return LLMFallback("error", f"Bedrock {model}: {type(exc).__name__}: {exc}", transient=True)


__all__ = ["DEFAULT_BEDROCK_CHAT_MODEL", "BedrockChatClient"]
