"""The HTTP API (API Gateway HTTP API, payload v2): ``POST /search``, ``GET /health``,
``GET /openapi.json``, the ``/sync/*`` routes of :mod:`agentic_search_lambda.sync_api`, and the
search page (``GET /``, ``/ui/*``, ``/domains``) of :mod:`agentic_search_lambda.search_page`.

Requests are validated by Powertools' data validation against :class:`SearchBody` (pydantic):
a bad field gets a 422 whose ``detail`` names it (``loc``), unknown fields are rejected. The
search runs through the runtime's orchestrator (:mod:`agentic_search_lambda.orchestrators`:
Step Functions in AWS, the local runner in ``agentic-search serve``); a failed or timed-out
execution is a 502 / 504 naming the error. A search in which every
retrieval source failed is a 503 naming them (:class:`SourcesUnavailable`); one in which some
failed is a 200 listing them in ``errors``.

Every answer is JSON: a 2xx, or an error ``{"error", "message"}`` (a 422 adds ``detail`` with
the ``field`` of each problem); never a stack trace.
"""

from __future__ import annotations

import json
import uuid
from functools import lru_cache
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from agentic_search.logic.availability import unanswered, unavailable_message
from agentic_search.logic.filters import filter_problems
from agentic_search.sync.audit import domain_health
from agentic_search.wire import (
    LIMIT_MAX,
    LIMIT_MIN,
    QUERY_MAX_CHARS,
    ROUNDS_MAX,
    ROUNDS_MIN,
    Filter,
    SearchRequest,
)
from agentic_search.wire.errors import SearchError, SourcesUnavailable
from agentic_search.wiring import domain_schema
from agentic_search_lambda.callers import caller_of
from agentic_search_lambda.http_guard import MAX_BODY_BYTES, json_body_as_declared, precheck
from agentic_search_lambda.observability import logger, metrics, tracer
from agentic_search_lambda.openapi_doc import (
    HEALTH_RESPONSES,
    SECURITY,
    SearchResponseBody,
    field_problems,
    security_schemes,
    validation_doc,
    validation_error,
)
from agentic_search_lambda.runtime import runtime
from agentic_search_lambda.search_page import router as page_router
from agentic_search_lambda.sync_api import router as sync_router


class SearchBody(SearchRequest):
    """``POST /search`` body: ``query`` (1..4,000 characters, at most 1,000 word tokens),
    ``limit`` (1..100, default 10), ``rounds`` (1..5, default the deployment's
    ``MAX_ROUNDS``), ``domain`` (default tools; one of the runtime's domains: the built-ins,
    those registered in the home and ``DOMAIN_FILES``), ``drop`` and ``filters`` (each on a
    filterable field of the domain with an operator and a value it allows; a 422 says which is
    not). Unknown fields are rejected."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    query: str = Field(
        min_length=1,
        strict=True,
        examples=["free code editor"],
        json_schema_extra={"maxLength": QUERY_MAX_CHARS},  # checked by SearchRequest's validator
    )
    limit: int = Field(default=10, ge=LIMIT_MIN, le=LIMIT_MAX, strict=True)
    rounds: int | None = Field(default=None, ge=ROUNDS_MIN, le=ROUNDS_MAX, strict=True)

    @field_validator("domain")
    @classmethod
    def _known_domain(cls, v: str) -> str:
        known = runtime().domains()  # the built-ins, the registered and DOMAIN_FILES ones
        if v not in known:
            raise ValueError(f"unknown domain {v!r} (known: {', '.join(known)})")
        return v

    @field_validator("filters")
    @classmethod
    def _allowed_filters(cls, v: list[Filter] | None, info: ValidationInfo) -> Any:
        domain = info.data.get("domain")
        if v and domain:  # (an unknown domain is its own error)
            schema = domain_schema(runtime().settings, domain)
            problems = [p for f in v for p in filter_problems(schema, f)]
            if problems:
                raise ValueError("; ".join(problems))
        return v


app = APIGatewayHttpResolver(enable_validation=True)
app.include_router(sync_router)  # GET/POST /sync/* (agentic_search_lambda.sync_api)
app.include_router(page_router)  # GET /, /ui/*, /domains (agentic_search_lambda.search_page)


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
    200: {
        "description": "the response: candidates, intent, plan, evidence pack, report",
        "content": {"application/json": {"model": SearchResponseBody}},
    },
    **validation_doc(),
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
    evidencePack and retrievalReport, over the records the caller may read (its principals:
    the JWT authorizer's claims or the IAM caller's tags, :mod:`agentic_search_lambda.callers`)."""
    correlation_id = app.current_event.request_context.request_id or str(uuid.uuid4())
    request = SearchRequest.model_validate(body.model_dump())
    rt = runtime()
    caller = caller_of(
        app.current_event.raw_event, rt.lambda_settings.access_claims, rt.iam_principals
    )
    response = rt.orchestrator.search(request, correlation_id, caller)
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


@app.get("/health", responses=HEALTH_RESPONSES)
def health(deep: Annotated[bool, Query()] = False) -> dict[str, Any]:
    """Liveness: the function is up (it does not touch the sources); with ``?deep=true``,
    each domain's index is opened and read: ``domains`` maps a domain to ``ok``, ``empty``
    or the one-line error of a store or keyword index that cannot be read, and ``status`` is
    ``degraded`` when one failed (the others still answer)."""
    if not deep:
        return {"status": "ok"}
    domains = {d: domain_health(runtime().deps(d)) for d in runtime().domains()}
    bad = any(v not in ("ok", "empty") for v in domains.values())
    return {"status": "degraded" if bad else "ok", "domains": domains}


@lru_cache(maxsize=1)
def openapi_document() -> str:
    """This API's OpenAPI 3 document (JSON text), built on the first call and kept.

    Built here rather than at import: Powertools' OpenAPI models and the schema generation
    would cost every cold start time that only ``GET /openapi.json`` needs."""
    app.configure_openapi(
        title="agentic-search",
        version="0.1.0",
        summary="Agentic search: intent, plan, multi-round hybrid retrieval, evidence, provenance.",
        security_schemes=security_schemes(),  # see openapi_doc: IAM SigV4 or JWT, by AuthMode
        security=SECURITY,
    )
    return app.get_openapi_json_schema()


@app.get("/openapi.json")
def openapi() -> Response[str]:
    """This API's OpenAPI 3 document."""
    return Response(status_code=200, content_type="application/json", body=openapi_document())


def allowed_methods(path: str) -> list[str]:
    """The methods of the routes matching ``path`` (``/sync/tool/x``: ``/sync/tool/<id>``),
    sorted; empty for no route. Read from the routes Powertools' own dispatch walks."""
    routes = [*app._static_routes, *app._dynamic_routes]
    return sorted({r.method.upper() for r in routes if r.rule.match(path)})


@app.not_found
def _not_found(exc: Exception) -> Response:
    method, path = app.current_event.request_context.http.method, app.current_event.path
    allowed = ", ".join(allowed_methods(path))
    if allowed:  # a known route, another method: 405 with Allow (RFC 9110 section 15.5.6)
        resp = _error(405, "MethodNotAllowed", f"{method} {path}: use {allowed}")
        resp.headers["Allow"] = allowed
        return resp
    return _error(404, "NotFound", f"no route {method} {path}")


@app.exception_handler(SearchError)
def _unavailable(exc: SearchError) -> Response:
    logger.error("search execution failed", extra={"error": exc.error, "cause": exc.cause})
    metrics.add_metric(name="SearchFailures", unit=MetricUnit.Count, value=1)
    return _error(exc.status, exc.error, exc.cause[:500])


@app.exception_handler(UnicodeDecodeError)
def _undecodable(exc: UnicodeDecodeError) -> Response:
    # A body that is not UTF-8 (API Gateway passes it base64-encoded): the client's fault.
    return _error(400, "InvalidBody", f"the body is not UTF-8 ({exc.reason} at byte {exc.start})")


@app.exception_handler(RequestValidationError)
def _invalid(exc: RequestValidationError) -> Response:
    detail = field_problems(exc.errors(), skip=1)  # (the first part is the body)
    return Response(
        status_code=422, content_type="application/json", body=json.dumps(validation_error(detail))
    )


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """SearchApiFunction's handler (``functions/search_api/app.py`` re-exports it; ``serve``
    calls it with events it builds from local HTTP requests).

    A body sent as ``application/x-www-form-urlencoded`` (``curl -d``'s default) is read as
    JSON; another non-JSON content type is a 415, and bodies that are too large, not UTF-8,
    not JSON or too deeply nested get a 413 / 400 before validation (``http_guard.precheck``)."""
    event = json_body_as_declared(event)
    refused = precheck(event)
    if refused is not None:
        return refused
    return app.resolve(event, context)


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
    "SearchBody",
    "SourcesUnavailable",
    "allowed_methods",
    "app",
    "handler",
    "openapi_document",
]
