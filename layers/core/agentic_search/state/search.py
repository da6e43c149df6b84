"""The search state machine's wire models: the request, the state passed from step to step,
the Map item, and what a Catch adds (see docs/state-machine.md)."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from agentic_search.state.base import WireModel
from agentic_search.state.executor import ExecutorState, RoundWork, SubQuery
from agentic_search.state.query import IntentState, QueryPlan
from agentic_search.state.response import PATH_KEYS, SearchResponse
from agentic_search.state.results import SourceError

#: Query length bounds (characters), the same as the API's.
QUERY_MAX_CHARS = 1000


def query_problem(query: str) -> str | None:
    """Why ``query`` cannot be searched, or None when it can: empty or blank, a control
    character (NUL and the other Unicode ``Cc`` characters but tab and newline), or no letter
    or digit at all (only punctuation, symbols or emoji). The API answers 422 and the CLI
    exits 2 with this reason; a query of stopwords only is searched and answered "no good
    match" (see ``finalize.judge``)."""
    if not query.strip():
        return "query must contain a non-space character"
    bad = next(
        (ch for ch in query if unicodedata.category(ch) == "Cc" and ch not in "\t\n\r"), None
    )
    if bad is not None:
        return f"query contains a control character (U+{ord(bad):04X})"
    if not any(ch.isalnum() for ch in query):
        return "query has no words to search (only punctuation, symbols or emoji)"
    return None


class SearchRequest(WireModel):
    """A search request: ``query`` 1..1,000 characters, ``limit`` 1..100 results, ``rounds``
    1..5 executor rounds (default ``MAX_ROUNDS``), ``domain`` a bundled domain schema."""

    query: str = Field(min_length=1, max_length=QUERY_MAX_CHARS)
    limit: int = Field(default=10, ge=1, le=100)
    rounds: int | None = Field(default=None, ge=1, le=5)
    domain: str = Field(default="tools", pattern=r"^[a-z][a-z0-9_-]{0,39}$")

    @field_validator("query")
    @classmethod
    def _searchable(cls, v: str) -> str:
        problem = query_problem(v)
        if problem:
            raise ValueError(problem)
        return v


class StepError(BaseModel):
    """What a Step Functions Catch puts at its ResultPath: ``{"Error", "Cause"}``."""

    model_config = ConfigDict(extra="ignore")

    Error: str = "States.TaskFailed"
    Cause: str | None = None

    def source_error(self, step: str) -> SourceError:
        """The error as the response lists it (``source`` = the failed step), without the
        Lambda stack trace."""
        return SourceError(source=step, error=self.Error, message=error_message(self.Cause))


def error_message(cause: str | None, limit: int = 500) -> str:
    """A client-safe message from a Step Functions error cause: a Lambda function error's
    cause is JSON with ``errorMessage`` and ``stackTrace``; only the message is kept."""
    text = cause or ""
    if text.startswith("{"):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and "errorMessage" in parsed:
            text = str(parsed["errorMessage"])
    return text[:limit]


class CacheInfo(WireModel):
    """The cache lookup: key, hit or miss, backend, and a cache failure if any."""

    key: str = ""
    hit: bool = False
    backend: str = "none"
    error: str | None = None


class ExtractorInfo(WireModel):
    """Which path produced the intent (or the plan) and why: ``llm``, ``rules`` or ``cache``
    (the plan cache). ``fallback`` names the kind of LLM failure that sent it to the rules
    (timeout, error, invalid, low-confidence, budget) and ``transient`` whether it may pass;
    ``llm_ms`` is the time spent waiting on the LLM."""

    path: str
    reason: str
    fallback: str | None = None
    transient: bool | None = None
    llm_ms: float | None = None
    fields: dict[str, str] | None = Field(
        default=None,
        description="merged intent: per field, whether it came from the rules, the LLM or both",
    )
    overruled: list[str] | None = Field(
        default=None, description="LLM constraints dropped because the rules read the field"
    )


class RunConfig(WireModel):
    """Execution settings the state machine reads (``MaxConcurrencyPath``)."""

    map_max_concurrency: int = Field(default=8, ge=1, le=40)


class SearchState(WireModel):
    """The state passed from step to step (JSON-able, no vectors; see docs/state-machine.md)."""

    request: SearchRequest
    correlation_id: str | None = Field(default=None, max_length=128)
    config: RunConfig = Field(default_factory=RunConfig)
    cache: CacheInfo | None = None
    intent: IntentState | None = None
    extractor: ExtractorInfo | None = None
    planner: ExtractorInfo | None = None
    plan_cache: CacheInfo | None = None
    plan: QueryPlan | None = Field(
        default=None, description="a plan found in the plan cache, for PlanQuery"
    )
    llm_ms: float | None = Field(default=None, ge=0.0, description="LLM time spent so far (ms)")
    executor: ExecutorState | None = None
    round: RoundWork | None = None
    response: dict[str, Any] | None = None
    stage_ms: dict[str, float] = Field(default_factory=dict)
    cache_error: StepError | None = None
    intent_error: StepError | None = None
    plan_error: StepError | None = None
    round_error: StepError | None = None
    fuse_error: StepError | None = None
    grade_error: StepError | None = None
    _built: SearchResponse | None = PrivateAttr(default=None)
    """Finalize's response object before it was made JSON (in-process only, never on the
    wire): the local runner hands it back instead of parsing ``response`` again."""

    def need_executor(self) -> ExecutorState:
        """The executor state.

        Raises:
            ValueError: when there is none (PlanQuery has not run).
        """
        if self.executor is None:
            raise ValueError("this step needs the executor state (run PlanQuery first)")
        return self.executor

    def need_round(self) -> RoundWork:
        """The round in flight.

        Raises:
            ValueError: when there is none (PrepareRound has not run).
        """
        if self.round is None:
            raise ValueError("this step needs a round in the state (run PrepareRound first)")
        return self.round

    @property
    def built_response(self) -> SearchResponse | None:
        """The response object Finalize built in this process, with ``paths`` set from the
        final ``response`` (None after a cache hit or when the state crossed JSON)."""
        built, wire = self._built, self.response
        if built is None or wire is None:
            return None
        built.paths = {k: wire[k] for k in PATH_KEYS if k in wire}
        return built


class RetrieveEvent(WireModel):
    """One Map item: the domain and one sub-query."""

    domain: str = Field(pattern=r"^[a-z][a-z0-9_-]{0,39}$")
    sub_query: SubQuery
    correlation_id: str | None = Field(default=None, max_length=128)
