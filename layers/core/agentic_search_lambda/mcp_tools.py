"""The MCP server (Model Context Protocol; the official SDK's ``MCPServer``): agentic-search's
tools and resources, defined once for every transport: ``agentic-search mcp`` (stdio),
``serve``'s ``/mcp`` and McpFunction (stateless streamable HTTP,
:mod:`agentic_search_lambda.mcp_http`).

Tools (each read-only, with a JSON Schema input and a structured output schema made from the
response contract's wire models):

* ``search``: query, domain, limit, rounds, drop, filters, history -> :class:`SearchResult` (the
  candidates with their provenance, the comparison block, the answer's quality, failed
  sources);
* ``explain``: the same input -> :class:`Explanation` (intent, plan, rounds, why each result);
* ``get_record``: an id -> :class:`RecordResult` (the stored fields, no index bookkeeping);
* ``compare``: 2..5 ids -> the :class:`~agentic_search.wire.Comparison` block;
* ``list_domains``: the domains and their vocabularies' names.

Resources: ``agentic-search://domains/{domain}/schema`` and ``.../vocabularies`` (JSON) for each
bundled domain.

Searches run through the runtime's orchestrator, as ``POST /search`` does (Step Functions in
AWS, the local runner elsewhere); records are read from the domain's store. A failure is an
MCP tool error (``isError``) whose text is the HTTP API's one-line reason: an invalid argument
names the field (``invalid field(s): limit (...)``), an unknown domain lists the known ones, a
search no source could answer names the failed sources.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from contextvars import ContextVar
from functools import lru_cache
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from agentic_search.logic.availability import unanswered, unavailable_message
from agentic_search.logic.comparison import compare as compare_records
from agentic_search.logic.schema import available_domains, load_schema
from agentic_search.pipeline.access import caller_view
from agentic_search.ports import EmbedderError, KeywordIndexError, VectorStoreError
from agentic_search.wire import (
    INTERNAL_KEYS,
    QUERY_MAX_CHARS,
    AnswerQuality,
    Caller,
    Candidate,
    ExecutionStats,
    ExtractorInfo,
    Filter,
    FollowUp,
    IntentState,
    Provenance,
    QueryPlan,
    RetrievalReport,
    SearchRequest,
    SourceError,
    WireModel,
)
from agentic_search.wire.errors import SearchError
from agentic_search.wire.response import Comparison
from agentic_search.wire.search import (
    DROP_MAX,
    DROP_PATTERN,
    FILTERS_MAX,
    HISTORY_TURNS_MAX,
    LIMIT_MAX,
    LIMIT_MIN,
    ROUNDS_MAX,
    ROUNDS_MIN,
    Turn,
)
from agentic_search_lambda.handlers import fresh
from agentic_search_lambda.openapi_doc import field_problems, one_line
from agentic_search_lambda.runtime import runtime
from agentic_search_lambda.search_page import DomainsBody, domain_infos

#: What every tool is: it reads the index, changes nothing, and answers the same to the same
#: call on an unchanged catalog.
READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
#: How many ids ``compare`` takes.
COMPARE_MIN, COMPARE_MAX = 2, 5
#: The URI scheme of the resources.
RESOURCE_SCHEME = "agentic-search"


class SearchResult(WireModel):
    """``search``: the ranked candidates (metadata, score, provenance: why each matched),
    the comparison block of a comparison query, whether the answer fits, and the sources
    that failed (the others still answered)."""

    query: str
    domain: str
    candidates: list[Candidate]
    confidence: float = Field(ge=0.0, le=1.0)
    answer_quality: AnswerQuality | None = None
    comparison: Comparison | None = None
    errors: list[SourceError] = Field(default_factory=list)
    follow_up: FollowUp | None = Field(
        default=None, description="with history: how the query was read against it"
    )


class Reason(WireModel):
    """Why one result is where it is: its rank, id, display name, score and provenance
    (which aspects, keywords, filters and sources found it)."""

    rank: int = Field(ge=1)
    id: str
    name: str
    score: float = Field(ge=0.0, le=1.0)
    provenance: Provenance


class Explanation(WireModel):
    """``explain``: how the query was read (intent), planned (plan) and searched round by
    round (retrievalReport), which path made the intent and plan, and why each result."""

    query: str
    domain: str
    intent: IntentState
    plan: QueryPlan
    retrieval_report: RetrievalReport | None = None
    extractor: ExtractorInfo | None = None
    planner: ExtractorInfo | None = None
    execution_stats: ExecutionStats
    answer_quality: AnswerQuality | None = None
    results: list[Reason]


class RecordResult(WireModel):
    """``get_record``: one stored record's fields (the catalog's own, without the index's
    bookkeeping)."""

    id: str
    domain: str
    record: dict[str, Any]


Query = Annotated[
    str,
    Field(
        min_length=1,
        max_length=QUERY_MAX_CHARS,
        description="what to find, in natural language (e.g. 'free alternative to Cursor')",
    ),
]
Domain = Annotated[
    str,
    Field(description="the domain to search (list_domains names them)", examples=["tools"]),
]
Limit = Annotated[int, Field(ge=LIMIT_MIN, le=LIMIT_MAX, description="how many results at most")]
Rounds = Annotated[
    int | None,
    Field(
        ge=ROUNDS_MIN,
        le=ROUNDS_MAX,
        description="executor rounds at most (default: the deployment's)",
    ),
]
Drop = Annotated[
    list[Annotated[str, Field(pattern=DROP_PATTERN)]] | None,
    Field(
        max_length=DROP_MAX,
        description=SearchRequest.model_fields["drop"].description,
        examples=[["filter:released:gte"]],
    ),
]
Filters = Annotated[
    list[Filter] | None,
    Field(
        max_length=FILTERS_MAX,
        description=SearchRequest.model_fields["filters"].description,
        examples=[[{"field": "price_monthly_usd", "operator": "lte", "value": 20}]],
    ),
]
History = Annotated[
    list[Turn] | None,
    Field(
        max_length=HISTORY_TURNS_MAX,
        description=SearchRequest.model_fields["history"].description,
        examples=[[{"query": "AI code completion tools", "ids": ["cursor", "tabnine"]}]],
    ),
]
RecordId = Annotated[str, Field(min_length=1, max_length=200, description="a record's id")]


class SearchServer(MCPServer):
    """:class:`MCPServer` whose tool errors say the HTTP API's one-line reason: an argument
    that fails the input schema names each field (the SDK's own text is pydantic's
    multi-line report), a tool's own :class:`ToolError` is its text without the SDK's
    ``Error executing tool NAME:`` prefix. A crash stays the SDK's generic line."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """The SDK's ``call_tool``.

        Raises:
            ToolError: ``invalid field(s): FIELD (reason)`` for arguments that fail the
                input schema, else the tool's own reason.
        """
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(one_line(field_problems(cause.errors()))) from None
            if type(cause) is ToolError:  # raised by a tool below: its reason as it wrote it
                raise ToolError(str(cause)) from None
            raise


#: One search or record read at a time in a process: the embedded stores (Qdrant Edge and
#: local mode) take one client per folder, as ``serve`` does without workers.
_searching = threading.Lock()


def index_lock() -> threading.Lock:
    """The lock the tools read the index under (``agentic-search mcp`` holds it while a first
    use ingests the bundled catalog, so that a search waits for the index)."""
    return _searching


#: Called with the index lock held before each tool reads the index (None: nothing).
_before_read: Callable[[], None] | None = None


def set_before_read(hook: Callable[[], None] | None) -> None:
    """Call ``hook`` before each tool reads the index, holding the index lock (no read runs
    meanwhile): ``agentic-search mcp`` swaps in a fresh copy of an index that changed since
    its copy was taken (:mod:`agentic_search_cli.cmd_mcp`). The hook must not raise: a tool
    call never fails for it. None: nothing is called (serve's ``/mcp``, McpFunction)."""
    global _before_read
    _before_read = hook


def _reading() -> None:
    """Run the :func:`set_before_read` hook (inside the index lock)."""
    if _before_read is not None:
        _before_read()


def _request(**fields: Any) -> SearchRequest:
    """The HTTP API's validated request (its unknown-domain and query checks).

    Raises:
        ToolError: naming each invalid field in one line.
    """
    from agentic_search_lambda.api import SearchBody

    try:
        body = SearchBody.model_validate({k: v for k, v in fields.items() if v is not None})
    except ValidationError as exc:
        raise ToolError(one_line(field_problems(exc.errors()))) from None
    return SearchRequest.model_validate(body.model_dump())


def _known(domain: str) -> str:
    """``domain`` when bundled.

    Raises:
        ToolError: ``invalid field(s): domain (unknown domain 'x' (known: ...))``.
    """
    known = available_domains()
    if domain not in known:
        reason = f"unknown domain {domain!r} (known: {', '.join(known)})"
        raise ToolError(one_line([{"field": "domain", "message": reason, "type": "value_error"}]))
    return domain


_CALLER: ContextVar[Caller | None] = ContextVar("mcp_caller", default=None)
_process_caller = Caller()


def set_caller(caller: Caller) -> None:
    """Make ``caller`` the one the tools answer next (an HTTP request's, from its verified
    authorizer claims; ``agentic-search mcp``'s ``--as``): every search and record read runs
    as it reads. One request at a time per process (Lambda, serve's lock), so the value also
    stands for the process where a tool runs outside the request's context."""
    global _process_caller
    _process_caller = caller
    _CALLER.set(caller)


def current_caller() -> Caller:
    """The caller the tools answer (anonymous, public records only, until one is set)."""
    return _CALLER.get() or _process_caller


def run_search(request: SearchRequest) -> dict[str, Any]:
    """The response wire dict of ``request``, through the runtime's orchestrator.

    Raises:
        ToolError: the search failed or timed out, no source could answer, or an index
            cannot be read (each its one-line reason).
    """
    try:
        with _searching:
            _reading()
            response = runtime().orchestrator.search(request, str(uuid.uuid4()), current_caller())
    except SearchError as exc:
        raise ToolError(f"{exc.error}: {exc.cause[:500]}") from None
    except (VectorStoreError, KeywordIndexError, EmbedderError) as exc:
        raise ToolError(str(exc)) from None
    failed = unanswered(response)
    if failed:
        raise ToolError(unavailable_message(failed, response.get("errors") or []))
    return response


def records(domain: str, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The stored fields of the records ``ids`` found in ``domain`` that the current caller
    may read (id -> fields, without the index's bookkeeping keys).

    Raises:
        ToolError: when the store cannot be read (its one-line reason).
    """
    # edge-s3: a newer published snapshot swapped in first; the caller's view: a record it
    # may not read is absent, exactly as a missing one
    try:
        with _searching:
            _reading()
            deps = caller_view(fresh(domain), current_caller())
            found = deps.store.hydrate_records(deps.schema, ids)
    except VectorStoreError as exc:
        raise ToolError(str(exc)) from None
    return {
        rid: {k: v for k, v in rec.payload.items() if k not in INTERNAL_KEYS}
        for rid, rec in found.items()
    }


def _missing(domain: str, ids: list[str], found: dict[str, Any]) -> ToolError | None:
    absent = [rid for rid in ids if rid not in found]
    if not absent:
        return None
    names = ", ".join(repr(rid) for rid in absent)
    return ToolError(f"no record {names} in domain {domain!r} (search for its id first)")


def answer(model: WireModel) -> CallToolResult:
    """A tool's answer: the model's wire form (camelCase, what the output schema says) as the
    structured content and, for clients that read text only, as compact JSON text."""
    wire = model.wire()
    text = json.dumps(wire, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=wire)


def search(
    query: Query,
    domain: Domain = "tools",
    limit: Limit = 10,
    rounds: Rounds = None,
    drop: Drop = None,
    filters: Filters = None,
    history: History = None,
) -> Annotated[CallToolResult, SearchResult]:
    """Search the catalog: intent extraction, planning, hybrid retrieval (dense vectors per
    aspect, BM25, structured filters) and fusion. Returns the ranked candidates, each with
    its metadata and why it matched (provenance), the comparison block of a comparison
    query ('Cursor vs Windsurf'), and whether the answer fits (answerQuality). With
    history (the earlier turns and the ids they showed) a follow-up such as 'only the free
    ones' or 'more like the second one' is read against the last turn (followUp says how)."""
    _, response, wire = searched(
        _SEARCH_KEYS,
        query=query,
        domain=domain,
        limit=limit,
        rounds=rounds,
        drop=drop,
        filters=filters,
        history=history,
    )
    follow_up = (response.get("intent") or {}).get("followUp")
    if follow_up is not None:
        wire["followUp"] = follow_up
    return answer(SearchResult.model_validate(wire))


def searched(keys: tuple[str, ...], **fields: Any) -> tuple[SearchRequest, dict, dict]:
    """Validate and run a search tool's request (:func:`_request`, :func:`run_search`): the
    request, the response, and its ``query``, ``domain`` and ``keys`` (those set)."""
    request = _request(**fields)
    response = run_search(request)
    wire = {
        "query": response.get("query", request.query),
        "domain": response.get("domain", request.domain),
        **{k: response[k] for k in keys if response.get(k) is not None},
    }
    return request, response, wire


_SEARCH_KEYS = ("candidates", "confidence", "answerQuality", "comparison", "errors")
_EXPLAIN_KEYS = (
    "intent",
    "plan",
    "retrievalReport",
    "extractor",
    "planner",
    "executionStats",
    "answerQuality",
)


def explain(
    query: Query,
    domain: Domain = "tools",
    limit: Limit = 10,
    rounds: Rounds = None,
    drop: Drop = None,
    filters: Filters = None,
    history: History = None,
) -> Annotated[CallToolResult, Explanation]:
    """How a query is read and answered: the intent (filters, preferences, named entities,
    time ranges), the plan (sources and weights), each round (what it searched, added and
    why it stopped) and why each result matched; with history, how the query was read
    against the conversation (followUp: which turn, what was kept, added and dropped)."""
    request, response, wire = searched(
        _EXPLAIN_KEYS,
        query=query,
        domain=domain,
        limit=limit,
        rounds=rounds,
        drop=drop,
        filters=filters,
        history=history,
    )
    title = load_schema(request.domain).name_fields[0]
    wire["results"] = [
        {
            "rank": rank,
            "id": c["id"],
            "name": str((c.get("metadata") or {}).get(title) or c["id"]),
            "score": c["score"],
            "provenance": c["provenance"],
        }
        for rank, c in enumerate(response.get("candidates") or [], start=1)
    ]
    return answer(Explanation.model_validate(wire))


def get_record(id: RecordId, domain: Domain = "tools") -> Annotated[CallToolResult, RecordResult]:
    """One record by its id (as search results name it): all its stored fields."""
    found = records(_known(domain), [id])
    missing = _missing(domain, [id], found)
    if missing is not None:
        raise missing
    return answer(RecordResult(id=id, domain=domain, record=found[id]))


def compare(
    ids: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=200)]],
        Field(
            min_length=COMPARE_MIN,
            max_length=COMPARE_MAX,
            description="2 to 5 record ids, in the order to show them",
        ),
    ],
    domain: Domain = "tools",
) -> Annotated[CallToolResult, Comparison]:
    """Records side by side on the domain's comparison fields: each record's values, and for
    each list field what all of them share (common) and what only some have (distinct)."""
    unique = list(dict.fromkeys(ids))
    if len(unique) < COMPARE_MIN:
        raise ToolError(one_line([{"field": "ids", "message": "name 2 different records"}]))
    found = records(_known(domain), unique)
    missing = _missing(domain, unique, found)
    if missing is not None:
        raise missing
    block = compare_records(load_schema(domain), unique, found)
    assert block is not None  # (two or more records were found)
    return answer(block)


def list_domains() -> Annotated[CallToolResult, DomainsBody]:
    """The domains search takes (the default, tools, first), each with its schema version,
    the field its time ranges filter on and its vocabularies (read them as resources)."""
    body = domain_infos()
    wire = body.model_dump(mode="json", by_alias=True, exclude_none=True)
    text = json.dumps(wire, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=wire)


def schema_document(domain: str) -> str:
    """``agentic-search://domains/{domain}/schema``: the domain's schema as JSON (fields with
    their types, filter operators and vocabularies, aspects, comparison fields), without the
    vocabularies' values (their own resource) and the tuning (the operator's numbers, nothing
    a query is written by: ``agentic-search config --domain NAME`` prints them)."""
    schema = load_schema(domain)
    body = schema.model_dump(mode="json", exclude={"vocabularies", "tuning"})
    return json.dumps(body, indent=1)


def vocabularies_document(domain: str) -> str:
    """``agentic-search://domains/{domain}/vocabularies``: vocabulary -> canonical value ->
    synonyms, the values filters and preferences compare against."""
    return json.dumps(load_schema(domain).vocabularies, indent=1, ensure_ascii=False)


TOOLS = (search, explain, get_record, compare, list_domains)


@lru_cache(maxsize=1)
def build_server() -> SearchServer:
    """The server with every tool and resource (built once per process)."""
    server = SearchServer(
        "agentic-search",
        title="agentic-search",
        version="0.1.0",
        instructions=(
            "Agentic search over a catalog (default domain: tools, 284 AI and developer "
            "tools) or a document corpus. Call search with a natural-language need; each "
            "result says why it matched. explain shows how a query was read; get_record and "
            "compare read records by id; list_domains and the resources give each domain's "
            "schema and vocabularies."
        ),
        log_level="WARNING",
    )
    for fn in TOOLS:  # the docstring as one paragraph (a client shows it as it comes)
        server.add_tool(fn, description=" ".join((fn.__doc__ or "").split()), annotations=READ_ONLY)
    for domain in available_domains():
        for kind, read in (("schema", schema_document), ("vocabularies", vocabularies_document)):
            server.resource(
                f"{RESOURCE_SCHEME}://domains/{domain}/{kind}",
                name=f"{domain}-{kind}",
                description=f"the {domain} domain's {kind} (JSON)",
                mime_type="application/json",
            )(_reader(read, domain))
    return server


def _reader(read: Any, domain: str) -> Any:
    """A resource function without parameters (the SDK reads parameters as a URI
    template's) answering ``read(domain)``."""

    def reader() -> str:
        return read(domain)

    return reader


__all__ = [
    "READ_ONLY",
    "Explanation",
    "RecordResult",
    "SearchResult",
    "SearchServer",
    "build_server",
    "index_lock",
    "records",
    "run_search",
    "set_before_read",
]
