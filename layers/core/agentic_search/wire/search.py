"""The search state machine's wire models: the request, the state passed from step to step,
the Map item, and what a Catch adds (see docs/state-machine.md)."""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from agentic_search.wire.access import Caller
from agentic_search.wire.base import WireModel
from agentic_search.wire.executor import ExecutorState, RoundWork, SubQuery
from agentic_search.wire.query import Filter, IntentState, QueryPlan
from agentic_search.wire.response import PATH_KEYS, SearchResponse
from agentic_search.wire.results import SourceError
from agentic_search.wire.texts import expand_texts, intern_texts

#: The longest query searched, in characters (a pasted paragraph or abstract is a query:
#: 4,000 characters of English prose are some 600 word tokens). The API, ``serve`` and the
#: CLI share it (:func:`query_problem`). The Step Functions state bounds it: the steps repeat
#: the query in every plan, round report and source hit; the wire form carries it once
#: (:mod:`agentic_search.wire.texts`), and the response (100 candidates listing the query
#: texts of their hits) is what the state guard trims for a longer one.
QUERY_MAX_CHARS = 4000
#: The most word tokens a query may hold: runs of 2+ letters or digits, the keyword
#: analyzer's tokens (:data:`WORD_TOKEN`) before its stopwords are dropped. Prose within
#: QUERY_MAX_CHARS stays under it; it bounds the work a query makes (BM25 terms, coverage
#: targets) where characters alone would not ("ab ab ab ..." is 1,333 tokens in 4,000).
QUERY_MAX_TOKENS = 1000
#: A request's bounds, one home for the HTTP API, MCP, ``serve``, the CLI and the settings:
#: results returned (``limit``) and executor rounds (``rounds``, ``MAX_ROUNDS``).
LIMIT_MIN, LIMIT_MAX = 1, 100
ROUNDS_MIN, ROUNDS_MAX = 1, 5
#: The keyword analyzer's tokenizer (``agentic_search.logic.text.Analyzer`` uses it).
WORD_TOKEN = re.compile(r"(?u)\b\w\w+\b")
#: One part of the understood intent to leave out (``SearchRequest.drop``): ``filter:FIELD:OP``
#: (the constraints on FIELD with operator OP), ``prefer:VOCABULARY=VALUE`` (a soft
#: preference), ``entity:ID`` (a reference or linked record) or ``exclude:ID`` (an excluded
#: record). See :mod:`agentic_search.logic.intent_overrides`.
DROP_PATTERN = (
    r"^(filter:[a-z][a-z0-9_]{0,63}:[a-z]{2,8}|(prefer|entity|exclude):[^\x00-\x1f]{1,200})$"
)
#: At most this many parts of the intent are left out in one request.
DROP_MAX = 32
#: At most this many filters are added to the understood intent in one request.
FILTERS_MAX = 16
#: At most this many earlier turns in ``SearchRequest.history``.
HISTORY_TURNS_MAX = 10
#: At most this many shown ids per earlier turn.
HISTORY_IDS_MAX = 50
#: The longest record id a turn may list, in characters.
HISTORY_ID_MAX_CHARS = 200
#: The most characters the whole history may hold (its queries and ids together): within
#: the API's 64 KiB body limit beside a longest query, so a history too large is a 422 naming
#: ``history``, not a refused body.
HISTORY_MAX_CHARS = 48_000


class Turn(WireModel):
    """One earlier turn of a conversation (``SearchRequest.history``): what was asked and the
    ids of the results that were shown for it, in the order shown (at most
    :data:`HISTORY_IDS_MAX`)."""

    query: str = Field(min_length=1, json_schema_extra={"maxLength": QUERY_MAX_CHARS})
    ids: list[Annotated[str, Field(min_length=1, max_length=HISTORY_ID_MAX_CHARS)]] = Field(
        default_factory=list,
        max_length=HISTORY_IDS_MAX,
        description="the ids of the results shown for that turn, in order (the first is "
        "'the first one', 'that one')",
    )

    @field_validator("query")
    @classmethod
    def _searchable(cls, v: str) -> str:
        problem = query_problem(v)
        if problem:
            raise ValueError(problem)
        return v


def history_problem(history: list[Turn]) -> str | None:
    """Why ``history`` is too large to read (its queries and ids over
    :data:`HISTORY_MAX_CHARS` characters together), or None."""
    size = sum(len(t.query) + sum(len(i) for i in t.ids) for t in history)
    if size > HISTORY_MAX_CHARS:
        return f"history is {size:,} characters; the maximum is {HISTORY_MAX_CHARS:,}"
    return None


def query_problem(query: str) -> str | None:
    """Why ``query`` cannot be searched, or None when it can: empty or blank, over
    :data:`QUERY_MAX_CHARS` characters or :data:`QUERY_MAX_TOKENS` word tokens, a control
    character (NUL and the other Unicode ``Cc`` characters but tab and newline), or no letter
    or digit at all (only punctuation, symbols or emoji). The API (and ``serve``) answers 422
    naming the field and the CLI exits 2 with this reason; a query of stopwords only is
    searched and answered "no good match" (see ``finalize.grade_answer``)."""
    if not query.strip():
        return "query must contain a non-space character"
    if len(query) > QUERY_MAX_CHARS:
        return f"query is {len(query):,} characters; the maximum is {QUERY_MAX_CHARS:,}"
    tokens = sum(1 for _ in WORD_TOKEN.finditer(query))
    if tokens > QUERY_MAX_TOKENS:
        return f"query is {tokens:,} word tokens; the maximum is {QUERY_MAX_TOKENS:,}"
    bad = next(
        (ch for ch in query if unicodedata.category(ch) == "Cc" and ch not in "\t\n\r"), None
    )
    if bad is not None:
        return f"query contains a control character (U+{ord(bad):04X})"
    if not any(ch.isalnum() for ch in query):
        return "query has no words to search (only punctuation, symbols or emoji)"
    return None


class SearchRequest(WireModel):
    """A search request: ``query`` 1..4,000 characters and at most 1,000 word tokens
    (:func:`query_problem`), ``limit`` 1..100 results, ``rounds`` 1..5 executor rounds
    (default ``MAX_ROUNDS``), ``domain`` a bundled domain schema."""

    # the length bounds are query_problem's (its one-line reasons); maxLength documents them
    query: str = Field(min_length=1, json_schema_extra={"maxLength": QUERY_MAX_CHARS})
    limit: int = Field(default=10, ge=LIMIT_MIN, le=LIMIT_MAX)
    rounds: int | None = Field(default=None, ge=ROUNDS_MIN, le=ROUNDS_MAX)
    domain: str = Field(default="tools", pattern=r"^[a-z][a-z0-9_-]{0,39}$")
    drop: list[Annotated[str, Field(pattern=DROP_PATTERN)]] | None = Field(
        default=None,
        max_length=DROP_MAX,
        description="parts of the understood intent to leave out (the search page's removed "
        "chips): 'filter:FIELD:OP' drops the constraints on FIELD with operator OP (e.g. "
        "'filter:released:gte'), 'prefer:VOCABULARY=VALUE' a soft preference (e.g. "
        "'prefer:categories=IDE'), 'entity:ID' a reference or linked record (e.g. "
        "'entity:vs-code'), 'exclude:ID' an excluded record; one that names nothing in the "
        "intent changes nothing",
        examples=[["filter:released:gte"]],
    )
    filters: list[Filter] | None = Field(
        default=None,
        max_length=FILTERS_MAX,
        description="hard filters to add to the understood intent, each {field, operator, "
        "value} on a filterable field of the domain (the domain's schema names them and their "
        "operators; vocabulary fields take canonical values), e.g. {'field': "
        "'price_monthly_usd', 'operator': 'lte', 'value': 20}; one replaces the intent's own "
        "constraint on the same field and operator; 'must': true keeps it from relaxation",
        examples=[[{"field": "open_source", "operator": "eq", "value": True}]],
    )
    history: list[Turn] | None = Field(
        default=None,
        max_length=HISTORY_TURNS_MAX,
        description="the conversation's earlier turns, oldest first: each {query, ids} (the "
        "ids shown for it, in order); the query is then read as a follow-up of the last turn "
        "('only the free ones', 'not that one', 'more like the second one', 'cheaper') "
        "unless it stands alone; intent.followUp says how it was read",
        examples=[[{"query": "AI code completion tools", "ids": ["cursor", "tabnine"]}]],
    )

    @field_validator("history")
    @classmethod
    def _bounded(cls, v: list[Turn] | None) -> list[Turn] | None:
        problem = history_problem(v) if v else None
        if problem:
            raise ValueError(problem)
        return v or None

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
    """The cache lookup: key, hit or miss, backend, and a cache failure if any; for the
    result cache, ``catalog_version``: the domain's catalog version the key was made with
    (bumped by every write to the index; None when the cache could not say, always 0 with
    the ``none`` backend)."""

    key: str = ""
    hit: bool = False
    backend: str = "none"
    error: str | None = None
    catalog_version: int | None = None
    computed_at: str | None = Field(
        default=None,
        description="on a hit, when the cached response was computed (ISO 8601, UTC); "
        "None for an entry stored before it was recorded",
    )
    lookup_ms: float | None = Field(
        default=None, ge=0.0, description="on a hit, how long the cache lookup took (ms)"
    )


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
    caller: Caller = Field(
        default_factory=Caller,
        description="the verified caller's principals (set by the front door, never by the "
        "request body): every step reads only the records they may read",
    )
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
    texts: list[str] = Field(
        default_factory=list,
        description="on the wire, each long text of the state once (agentic_search.wire.texts; "
        "empty in process, where the texts are in place)",
    )
    _built: SearchResponse | None = PrivateAttr(default=None)
    """Finalize's response object before it was made JSON (in-process only, never on the
    wire): the local runner hands it back instead of parsing ``response`` again."""

    @model_validator(mode="before")
    @classmethod
    def _texts_back(cls, data: Any) -> Any:
        """A wire state's long texts back in place (:func:`expand_texts`)."""
        return expand_texts(data) if isinstance(data, dict) else data

    def wire(self) -> dict[str, Any]:
        """JSON-able dict with camelCase keys, each long text once (``texts``, see
        :mod:`agentic_search.wire.texts`): what crosses Step Functions' states."""
        return intern_texts(super().wire())

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
    """One Map item: the domain, one sub-query and the state's ``texts``, which its
    ``"$texts[i]"`` references are expanded from (:mod:`agentic_search.wire.texts`)."""

    domain: str = Field(pattern=r"^[a-z][a-z0-9_-]{0,39}$")
    sub_query: SubQuery
    correlation_id: str | None = Field(default=None, max_length=128)
    caller: Caller = Field(default_factory=Caller, description="the state's caller")
    texts: list[str] = Field(default_factory=list, description="empty once parsed")

    @model_validator(mode="before")
    @classmethod
    def _texts_back(cls, data: Any) -> Any:
        """The sub-query's long texts back in place (:func:`expand_texts`)."""
        return expand_texts(data) if isinstance(data, dict) else data
