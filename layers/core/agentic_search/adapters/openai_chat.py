"""The :class:`~agentic_search.ports.ChatJSONClient` port over the official openai SDK: any
OpenAI-compatible chat endpoint asked for JSON matching a schema (OpenAI structured outputs,
or llama-cpp-python's ``json_object`` + ``schema`` dialect, detected on the first call)."""

from __future__ import annotations

import concurrent.futures as cf
import threading
from typing import Any

from agentic_search.config import Settings
from agentic_search.logic.llm_budget import LLMFallback

#: The openai SDK's first retry waits at most 0.5 s (initial delay, jitter below it); a later
#: one at most 1 s here, as retries are bounded to 3. Kept out of the budget before retrying.
MAX_BACKOFF_S = 1.0

_POOL: cf.ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def llm_pool() -> cf.ThreadPoolExecutor:
    """The worker threads LLM calls run on (so a call can be abandoned at its deadline)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = cf.ThreadPoolExecutor(max_workers=8, thread_name_prefix="llm")
        return _POOL


class OpenAIChatClient:
    """:class:`ChatJSONClient` over the official openai SDK (any OpenAI-compatible server:
    OpenAI, Together AI, vLLM, Ollama, llama.cpp). ``http_client`` is for tests that replay
    recorded HTTP responses (an ``httpx.Client`` with a mock transport)."""

    def __init__(self, settings: Settings, http_client: Any = None) -> None:
        from openai import OpenAI

        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else "none"
        self._client = OpenAI(
            base_url=settings.openai_base_url,
            api_key=key,
            timeout=settings.llm_timeout_s,
            max_retries=settings.llm_max_retries,
            http_client=http_client,
        )
        self.model = settings.chat_model
        #: ``json_schema`` (OpenAI structured outputs; vLLM, Ollama, llama.cpp's llama-server)
        #: or ``json_object`` with a ``schema`` (llama-cpp-python's server); switched once when
        #: the server rejects the first.
        self.dialect = "json_schema"

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
        """See :meth:`ChatJSONClient.complete_json`. Retries are the SDK's (exponential
        backoff with jitter on connection errors, 408/409/429 and 5xx)."""
        import openai

        client = self._client.with_options(timeout=timeout_s, max_retries=max_retries)

        def create(dialect: str) -> Any:
            return client.chat.completions.create(
                model=self.model,
                messages=[
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                ],
                response_format=response_format(dialect, schema_name, json_schema),
                temperature=0.0,
                max_tokens=max_tokens,
            )

        try:
            try:
                resp = create(self.dialect)
            except openai.APIStatusError as exc:
                # A server that does not know OpenAI's json_schema format rejects the request
                # at once; llama-cpp-python's server takes the schema as json_object + schema.
                if self.dialect != "json_schema" or "response_format" not in str(exc):
                    raise
                self.dialect = "json_object"
                resp = create(self.dialect)
        except openai.APITimeoutError as exc:
            raise LLMFallback(
                "timeout", f"no answer within {timeout_s:.1f} s", transient=True
            ) from exc
        except openai.APIConnectionError as exc:
            raise LLMFallback("error", f"connection failed: {exc}", transient=True) from exc
        except openai.APIStatusError as exc:
            transient = exc.status_code >= 500 or exc.status_code in (408, 409, 429)
            raise LLMFallback(
                "error", f"HTTP {exc.status_code}: {str(exc)[:200]}", transient=transient
            ) from exc
        except openai.OpenAIError as exc:
            raise LLMFallback("error", f"{type(exc).__name__}: {exc}", transient=True) from exc
        choice = resp.choices[0] if resp.choices else None
        text = (choice.message.content or "").strip() if choice else ""
        if not text:
            raise LLMFallback("invalid", "the LLM answered with an empty message")
        return text


def response_format(dialect: str, name: str, json_schema: dict[str, Any]) -> dict[str, Any]:
    """The chat request's ``response_format`` asking for JSON that matches ``json_schema``:
    OpenAI's ``json_schema`` (strict) or the ``json_object`` + ``schema`` form of
    llama-cpp-python's server (both compile the schema into a grammar)."""
    if dialect == "json_object":
        return {"type": "json_object", "schema": json_schema}
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": json_schema, "strict": True},
    }


# ----- output models generated from the domain schema ------------------------------------------
