"""The HTTP API (API Gateway HTTP API, payload v2): ``POST /search``, ``GET /health``,
``GET /openapi.json``, and the ``/sync/*`` routes of :mod:`agentic_search_lambda.sync_api`.

Requests are validated by Powertools' data validation against :class:`SearchBody` (pydantic):
a bad field gets a 422 whose ``detail`` names it (``loc``), unknown fields are rejected. The
search runs through an :class:`Orchestrator`: :class:`StepFunctionsOrchestrator` in AWS
(``StartSyncExecution`` on the Express state machine) or :class:`LocalOrchestrator` (the local
runner; what ``agentic-search serve`` uses).

A failed or timed-out synchronous execution still returns HTTP 200 from the Step Functions API
with ``status`` FAILED / TIMED_OUT: the orchestrator turns it into :class:`SearchUnavailable`,
answered as 502 (FAILED) or 504 (TIMED_OUT) with the error name. A search in which every
retrieval source failed is a 503 naming them (:class:`SourcesUnavailable`); one in which some
failed is a 200 listing them in ``errors``.

Every answer is JSON: a 2xx, or an error ``{"error", "message"}`` (a 422 adds ``detail`` with
the ``field`` of each problem); never a stack trace.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import uuid
from functools import lru_cache
from typing import Any, Protocol

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentic_search.domain.availability import unanswered, unavailable_message
from agentic_search.domain.schema import available_domains
from agentic_search.pipeline.runner import LocalRunner, SearchFailed
from agentic_search.state import (
    QUERY_MAX_CHARS,
    RunConfig,
    SearchRequest,
    SearchState,
    error_message,
)
from agentic_search_lambda.observability import logger, metrics, tracer
from agentic_search_lambda.sync_api import router as sync_router

#: Largest request body accepted (bytes); API Gateway's own limit is 10 MB.
MAX_BODY_BYTES = 64 * 1024


class SearchBody(SearchRequest):
    """``POST /search`` body: ``query`` (1..1,000 characters), ``limit`` (1..100, default 10),
    ``rounds`` (1..5, default the deployment's ``MAX_ROUNDS``), ``domain`` (default tools).
    Unknown fields are rejected."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    query: str = Field(
        min_length=1, max_length=QUERY_MAX_CHARS, strict=True, examples=["free code editor"]
    )
    limit: int = Field(default=10, ge=1, le=100, strict=True)
    rounds: int | None = Field(default=None, ge=1, le=5, strict=True)

    @field_validator("domain")
    @classmethod
    def _known_domain(cls, v: str) -> str:
        known = _domains()
        if v not in known:
            raise ValueError(f"unknown domain {v!r} (known: {', '.join(known)})")
        return v


@lru_cache(maxsize=1)
def _domains() -> tuple[str, ...]:
    return tuple(available_domains())


class SearchUnavailable(RuntimeError):
    """The search execution failed or timed out; ``status`` is 502 or 504."""

    def __init__(self, status: int, error: str, cause: str) -> None:
        super().__init__(f"{error}: {cause}")
        self.status = status
        self.error = error
        self.cause = cause


class SourcesUnavailable(RuntimeError):
    """Every retrieval source failed: answered as 503 naming them (``failed``), with the
    response's ``errors``."""

    def __init__(self, failed: list[str], errors: list[dict[str, Any]]) -> None:
        super().__init__(f"no source answered: {', '.join(failed)}")
        self.failed = failed
        self.errors = errors


class Orchestrator(Protocol):
    """Runs one search request end to end and returns the response dict."""

    def search(self, request: SearchRequest, correlation_id: str) -> dict[str, Any]:
        """The search response. Raises :class:`SearchUnavailable`."""
        ...


class LocalOrchestrator:
    """The local runner in place of the state machine."""

    def __init__(self, runner: LocalRunner) -> None:
        self.runner = runner

    def search(self, request: SearchRequest, correlation_id: str) -> dict[str, Any]:
        """Run the graph in-process; a :class:`SearchFailed` becomes a 502."""
        try:
            result = self.runner.run(request)
        except SearchFailed as exc:
            raise SearchUnavailable(502, exc.error, exc.cause) from exc
        assert result.state.response is not None
        return result.state.response


class StepFunctionsOrchestrator:
    """``StartSyncExecution`` on the Express state machine ``state_machine_arn``."""

    def __init__(self, state_machine_arn: str, client: Any | None = None, concurrency: int = 8):
        if client is None:
            import boto3

            client = boto3.client("stepfunctions")
        self.arn = state_machine_arn
        self.client = client
        self.concurrency = concurrency

    def execution_input(self, request: SearchRequest, correlation_id: str) -> dict[str, Any]:
        """The state machine's input: a fresh :class:`SearchState`."""
        state = SearchState(
            request=request,
            config=RunConfig(map_max_concurrency=self.concurrency),
            correlation_id=correlation_id,
        )
        return state.wire()

    def search(self, request: SearchRequest, correlation_id: str) -> dict[str, Any]:
        """Start, wait, and map the execution's status.

        Raises:
            SearchUnavailable: 502 for FAILED (with the Fail state's error name), 504 for
                TIMED_OUT.
        """
        out = self.client.start_sync_execution(
            stateMachineArn=self.arn,
            name=correlation_id,
            input=json.dumps(self.execution_input(request, correlation_id)),
        )
        status = out.get("status")
        if status == "SUCCEEDED":
            return json.loads(out["output"])
        error = out.get("error") or f"Execution{str(status).title().replace('_', '')}"
        cause = error_message(out.get("cause")) or f"the search execution ended {status}"
        raise SearchUnavailable(504 if status == "TIMED_OUT" else 502, error, cause)


def _from_env() -> Orchestrator:
    arn = os.environ.get("STATE_MACHINE_ARN")
    if arn:
        return StepFunctionsOrchestrator(
            arn, concurrency=int(os.environ.get("MAP_MAX_CONCURRENCY", "8"))
        )
    from agentic_search_lambda.runtime import registry, settings, steps

    registry()  # one engine registry per process
    return LocalOrchestrator(LocalRunner(steps(), settings().max_parallel_sources))


_orchestrator: Orchestrator | None = None


def set_orchestrator(orchestrator: Orchestrator | None) -> None:
    """Use ``orchestrator`` for searches (``None``: choose from the environment again)."""
    global _orchestrator
    _orchestrator = orchestrator


def orchestrator() -> Orchestrator:
    """The orchestrator in use (from the environment on first use)."""
    global _orchestrator
    if _orchestrator is None:
        _orchestrator = _from_env()
    return _orchestrator


app = APIGatewayHttpResolver(enable_validation=True)
app.configure_openapi(
    title="agentic-search",
    version="0.1.0",
    summary="Agentic search: intent, plan, multi-round hybrid retrieval, evidence, provenance.",
)

app.include_router(sync_router)  # GET/POST /sync/* (agentic_search_lambda.sync_api)


class ErrorBody(BaseModel):
    """Every error answer: ``error`` (a name), ``message`` (for people), and, for a 422, the
    ``detail`` of each invalid field; a 503 adds ``failedSources`` and ``errors``."""

    error: str
    message: str
    detail: list[dict[str, str]] | None = None
    failed_sources: list[str] | None = Field(default=None, alias="failedSources")
    errors: list[dict[str, Any]] | None = None


def _err(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"model": ErrorBody}}}


SEARCH_RESPONSES: dict[int, Any] = {
    200: {"description": "the response: candidates, intent, plan, evidence pack, report"},
    400: _err("the body is not UTF-8, not JSON, or nested too deeply"),
    405: _err("wrong method"),
    413: _err(f"the body is over {MAX_BODY_BYTES} bytes"),
    415: _err("the content type is not JSON"),
    502: _err("the search execution failed (the error is named)"),
    503: _err("no retrieval source could answer (failedSources names them)"),
    504: _err("the search execution timed out"),
}


@app.post("/search", responses=SEARCH_RESPONSES)
def search(body: SearchBody) -> dict[str, Any]:
    """Search the catalog; the response is the QueryExecutorOutput with intent, plan,
    evidencePack and retrievalReport."""
    correlation_id = app.current_event.request_context.request_id or str(uuid.uuid4())
    request = SearchRequest.model_validate(body.model_dump())
    response = orchestrator().search(request, correlation_id)
    metrics.add_metric(name="Searches", unit=MetricUnit.Count, value=1)
    failed = unanswered(response)
    if failed:  # every source failed: not "nothing matches" but "nothing could be asked"
        logger.error("no source answered", extra={"failed_sources": failed})
        metrics.add_metric(name="SearchUnavailable", unit=MetricUnit.Count, value=1)
        raise SourcesUnavailable(failed, response.get("errors") or [])
    if response.get("errors"):
        metrics.add_metric(name="PartialResults", unit=MetricUnit.Count, value=1)
    if (response.get("cache") or {}).get("hit"):
        metrics.add_metric(name="CacheHits", unit=MetricUnit.Count, value=1)
    return response


@app.get("/health")
def health() -> dict[str, str]:
    """Liveness: the function is up (it does not touch the sources)."""
    return {"status": "ok"}


@app.get("/openapi.json")
def openapi() -> Response[str]:
    """This API's OpenAPI 3 document."""
    return Response(
        status_code=200, content_type="application/json", body=app.get_openapi_json_schema()
    )


@app.not_found
def _not_found(exc: Exception) -> Response:
    method = app.current_event.request_context.http.method
    path = app.current_event.path
    if path in ("/search", "/health", "/openapi.json"):
        allowed = "POST" if path == "/search" else "GET"
        resp = _error(405, "MethodNotAllowed", f"{method} {path}: use {allowed}")
        resp.headers["Allow"] = allowed
        return resp
    return _error(404, "NotFound", f"no route {method} {path}")


@app.exception_handler(SearchUnavailable)
def _unavailable(exc: SearchUnavailable) -> Response:
    logger.error("search execution failed", extra={"error": exc.error, "cause": exc.cause})
    metrics.add_metric(name="SearchFailures", unit=MetricUnit.Count, value=1)
    return _error(exc.status, exc.error, exc.cause[:500])


@app.exception_handler(UnicodeDecodeError)
def _undecodable(exc: UnicodeDecodeError) -> Response:
    # A body that is not UTF-8 (API Gateway passes it base64-encoded): the client's fault.
    return _error(400, "InvalidBody", f"the body is not UTF-8 ({exc.reason} at byte {exc.start})")


@app.exception_handler(RequestValidationError)
def _invalid(exc: RequestValidationError) -> Response:
    detail = [
        {
            "field": ".".join(str(p) for p in e.get("loc", ())[1:] if not isinstance(p, int))
            or "body",
            "message": e.get("msg", ""),
            "type": e.get("type", ""),
        }
        for e in exc.errors()
    ]
    fields = ", ".join(d["field"] or "body" for d in detail)
    return Response(
        status_code=422,
        content_type="application/json",
        body=json.dumps(
            {"error": "ValidationError", "message": f"invalid field(s): {fields}", "detail": detail}
        ),
    )


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """SearchApiFunction's handler (``functions/search_api/app.py`` re-exports it; ``serve``
    calls it with events it builds from local HTTP requests).

    A JSON body sent as ``application/x-www-form-urlencoded`` (what ``curl -d`` declares by
    default) is read as JSON; any other non-JSON content type is refused with a 415, and
    bodies that are too large, not UTF-8, not JSON or too deeply nested get a 413 / 400
    before validation (:func:`_precheck`)."""
    event = _json_body_as_declared(event)
    refused = _precheck(event)
    if refused is not None:
        return refused
    return app.resolve(event, context)


#: How deep a request body may nest (a SearchBody is flat; the parser's own limit is ~1,000
#: levels and exceeding it raises RecursionError, which must not become a 500).
MAX_JSON_DEPTH = 32


def _precheck(event: dict[str, Any]) -> dict[str, Any] | None:
    """What ``POST /search`` refuses before validation, as a finished response (None: go on):
    413 over :data:`MAX_BODY_BYTES`, 415 for a non-JSON content type, 400 for a body that is
    not UTF-8 or not JSON (including nesting deeper than :data:`MAX_JSON_DEPTH` and integers
    over Python's digit limit), 422 naming ``body`` for JSON that is not an object."""
    http = (event.get("requestContext") or {}).get("http") or {}
    path = str(event.get("rawPath") or "")
    if http.get("method") != "POST" or not path.rstrip("/").endswith("/search"):
        return None  # (a named stage prefixes rawPath: /prod/search)
    headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}
    ctype = headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype and ctype != "application/json" and not ctype.endswith("+json"):
        return _refusal(
            415, "UnsupportedMediaType", f"content-type {ctype!r}: send application/json"
        )
    body = event.get("body") or ""
    try:
        raw = base64.b64decode(body, validate=True) if event.get("isBase64Encoded") else None
    except (binascii.Error, ValueError):
        return _refusal(400, "InvalidBody", "the body is not valid base64")
    size = len(raw) if raw is not None else len(body.encode("utf-8", "surrogatepass"))
    if size > MAX_BODY_BYTES:
        return _refusal(413, "PayloadTooLarge", f"body over {MAX_BODY_BYTES} bytes")
    if raw is not None:
        try:
            body = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return _refusal(
                400, "InvalidBody", f"the body is not UTF-8 ({exc.reason} at byte {exc.start})"
            )
    if not body.strip():
        return None  # Powertools answers 422 naming the missing body
    brackets = body.count("[") + body.count("{")
    if brackets > MAX_JSON_DEPTH and _depth(body) > MAX_JSON_DEPTH:
        return _refusal(400, "InvalidJSON", f"the body nests deeper than {MAX_JSON_DEPTH} levels")
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError) as exc:
        return _refusal(400, "InvalidJSON", f"the body is not valid JSON: {str(exc)[:200]}")
    if not isinstance(parsed, dict):
        detail = [{"field": "body", "message": "must be a JSON object", "type": "dict_type"}]
        return _refusal(422, "ValidationError", "invalid field(s): body", detail=detail)
    return None


def _depth(text: str) -> int:
    """Deepest nesting of ``[``/``{`` outside strings (a linear scan, no recursion)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _refusal(status: int, error: str, message: str, **extra: Any) -> dict[str, Any]:
    """A finished API Gateway v2 response with the JSON error body."""
    return {
        "statusCode": status,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps({"error": error, "message": message, **extra}),
        "isBase64Encoded": False,
    }


def _json_body_as_declared(event: dict[str, Any]) -> dict[str, Any]:
    headers = event.get("headers") or {}
    ctype = str(headers.get("content-type", "")).lower()
    body = event.get("body") or ""
    if (
        ctype.startswith("application/x-www-form-urlencoded")
        and not event.get("isBase64Encoded")
        and body.lstrip().startswith("{")
    ):
        event = {**event, "headers": {**headers, "content-type": "application/json"}}
    return event


@app.exception_handler(SourcesUnavailable)
def _sources_unavailable(exc: SourcesUnavailable) -> Response:
    # Raised, not returned: a returned Response would be validated as the route's dict result.
    body = {
        "error": "SourcesUnavailable",
        "message": unavailable_message(exc.failed, exc.errors),
        "failedSources": exc.failed,
        "errors": exc.errors,
    }
    return Response(
        status_code=503,
        content_type="application/json",
        body=json.dumps(body),
        headers={"Retry-After": "5"},
    )


def _error(status: int, error: str, message: str) -> Response:
    return Response(
        status_code=status,
        content_type="application/json",
        body=json.dumps({"error": error, "message": message}),
    )


__all__ = [
    "LocalOrchestrator",
    "Orchestrator",
    "SearchBody",
    "SearchUnavailable",
    "SourcesUnavailable",
    "StepFunctionsOrchestrator",
    "app",
    "handler",
    "orchestrator",
    "set_orchestrator",
]
