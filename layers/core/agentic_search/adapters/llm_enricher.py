"""The :class:`~agentic_search.ports.Enricher` over any chat client: the local llama.cpp
server, Bedrock Converse (a forced tool: the answer's schema) or an OpenAI-compatible API
(structured outputs), each asked for JSON matching the kind's schema at temperature 0.

The prompts and what is done with the answer live in :mod:`agentic_search.logic.enrichment`;
this adapter only asks and validates.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from agentic_search.logic.enrichment import PROMPTS, user_message
from agentic_search.logic.llm_answers import validation_reason
from agentic_search.logic.llm_budget import LLMFallback
from agentic_search.logic.llm_prompts import strict_json_schema
from agentic_search.ports import ChatJSONClient, EnrichmentError


class LLMEnricher:
    """Asks ``client`` for one kind's JSON answer (``max_retries`` SDK retries per call)."""

    def __init__(self, client: ChatJSONClient, max_retries: int = 1) -> None:
        self.client = client
        self.model = client.model
        self.max_retries = max_retries
        self._schemas = {k: strict_json_schema(p.output) for k, p in PROMPTS.items()}

    def enrich(self, kind: str, text: str, timeout_s: float) -> dict[str, Any]:
        """See :meth:`Enricher.enrich`.

        Raises:
            EnrichmentError: when the call fails or its answer does not validate; KeyError
                for an unknown kind.
        """
        prompt = PROMPTS[kind]
        try:
            answer = self.client.complete_json(
                prompt.system,
                user_message(prompt.kind, text),
                schema_name=f"enrichment_{kind}",
                json_schema=self._schemas[kind],
                timeout_s=timeout_s,
                max_retries=self.max_retries,
                max_tokens=prompt.max_tokens,
            )
            return prompt.output.model_validate_json(answer).model_dump()
        except LLMFallback as exc:
            raise EnrichmentError(f"{self.model}: {exc}") from exc
        except ValidationError as exc:
            raise EnrichmentError(
                f"{self.model}: invalid answer: {validation_reason(exc)}"
            ) from exc


__all__ = ["LLMEnricher"]
