"""Text an LLM writes for retrieval, through any :class:`~agentic_search.ports.ChatJSONClient`
(the OpenAI-compatible API, the local llama.cpp server, Bedrock Converse): a HyDE passage for
round 1 (``LLM_HYDE=on``) and a later round's queries from the evidence so far
(``LLM_ROUNDS=on``, IRCoT-style).

Both ask for JSON matching a small schema (``{"passage": str}``, ``{"queries": [str]}``), so
every provider's structured output applies (a grammar on llama.cpp, a forced tool on Bedrock).
The query and the evidence are data between tags, never instructions. Sources: Gao, Ma, Lin
and Callan, "Precise Zero-Shot Dense Retrieval without Relevance Labels" (ACL 2023); Trivedi,
Balasubramanian, Khot and Sabharwal, "Interleaving Retrieval with Chain-of-Thought Reasoning
for Knowledge-Intensive Multi-Step Questions" (ACL 2023).
"""

from __future__ import annotations

from pydantic import ValidationError

from agentic_search.config import Settings
from agentic_search.logic.llm_answers import validation_reason, written_queries
from agentic_search.logic.llm_budget import LLMFallback
from agentic_search.logic.llm_prompts import (
    HydeOutput,
    NextQueriesOutput,
    hyde_prompt,
    next_round_message,
    next_round_prompt,
    quote_query,
    strict_json_schema,
)
from agentic_search.logic.schema import DomainSchema
from agentic_search.ports import ChatJSONClient, HydeError

#: Output tokens of one answer: an 80-word passage, or two short queries.
HYDE_MAX_TOKENS = 200
ROUND_MAX_TOKENS = 120


class LLMHyde:
    """:class:`~agentic_search.ports.HydeGenerator` over a chat client (``LLM_HYDE=on``):
    ``{"passage": str}`` for the query, within ``LLM_TIMEOUT_S`` per call."""

    def __init__(self, schema: DomainSchema, settings: Settings, client: ChatJSONClient) -> None:
        self.client = client
        self.settings = settings
        self.system = hyde_prompt(schema)
        self.json_schema = strict_json_schema(HydeOutput)
        self.name = f"llm:{client.model}"

    def generate(self, query: str) -> str:
        """See :meth:`HydeGenerator.generate`.

        Raises:
            HydeError: when the call fails, or the answer does not parse or is empty.
        """
        try:
            text = self.client.complete_json(
                self.system,
                quote_query(query),
                schema_name="passage",
                json_schema=self.json_schema,
                timeout_s=self.settings.llm_timeout_s,
                max_retries=self.settings.llm_max_retries,
                max_tokens=HYDE_MAX_TOKENS,
            )
            passage = HydeOutput.model_validate_json(text).passage.strip()
        except LLMFallback as exc:
            raise HydeError(f"{self.name}: {exc}") from exc
        except ValidationError as exc:
            raise HydeError(f"{self.name}: passage: {validation_reason(exc)}") from exc
        if not passage:
            raise HydeError(f"{self.name} answered with an empty passage")
        return passage


class LLMRoundWriter:
    """:class:`~agentic_search.ports.RoundQueryWriter` over a chat client (``LLM_ROUNDS=on``):
    ``{"queries": [str]}`` from the query, the evidence so far and what is still missing,
    kept by :func:`~agentic_search.logic.llm_answers.written_queries`."""

    def __init__(self, schema: DomainSchema, settings: Settings, client: ChatJSONClient) -> None:
        self.client = client
        self.settings = settings
        self.system = next_round_prompt(schema)
        self.json_schema = strict_json_schema(NextQueriesOutput)
        self.name = f"llm:{client.model}"

    def write(
        self, query: str, found: list[tuple[str, str]], missing: list[str], asked: list[str]
    ) -> list[str]:
        """See :meth:`RoundQueryWriter.write`.

        Raises:
            LLMFallback: when the call fails (as the client raises it) or the answer does not
                parse (``invalid``).
        """
        text = self.client.complete_json(
            self.system,
            next_round_message(query, found, missing),
            schema_name="queries",
            json_schema=self.json_schema,
            timeout_s=self.settings.llm_timeout_s,
            max_retries=self.settings.llm_max_retries,
            max_tokens=ROUND_MAX_TOKENS,
        )
        try:
            out = NextQueriesOutput.model_validate_json(text)
        except ValidationError as exc:
            raise LLMFallback("invalid", "queries: " + validation_reason(exc)) from exc
        return written_queries(out.queries, query, asked)


__all__ = ["LLMHyde", "LLMRoundWriter"]
