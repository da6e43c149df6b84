"""What the OpenAPI document (``GET /openapi.json``) says beyond the routes themselves: the
security schemes of the deployed HTTP API, the typed ``POST /search`` 200 body and the 422 body
every route actually returns.

* **Security** (template.yaml's ``AuthMode``, on for every route): ``sigv4`` = IAM, a request
  signed with AWS Signature Version 4 (described the way API Gateway's OpenAPI import spells
  it: an ``apiKey`` in the ``Authorization`` header with ``x-amazon-apigateway-authtype:
  awsSigv4``); ``jwt`` = a bearer JWT from the stack's issuer (``JwtIssuer``/``JwtAudience``).
  A deployment enforces exactly one of the two; ``agentic-search serve`` enforces neither.
* **422**: :class:`ValidationErrorBody` (``error``, ``message``, ``detail`` with the ``field``,
  ``message`` and ``type`` of each problem), built by the API's validation handler from this
  model, so the document and the answer cannot drift apart.
* **200 of /search**: :class:`SearchResponseBody`, the wire form of
  :class:`~agentic_search.wire.SearchResponse` (the executor output plus ``query``,
  ``domain``, ``intent``, ``plan``, and with the multi-round executor ``evidencePack`` and
  ``retrievalReport``; ``cache``, ``extractor``, ``planner`` and ``planCache`` are the steps'
  notes).

Powertools' OpenAPI models (``aws_lambda_powertools.event_handler.openapi.models``, a
noticeable share of a cold start) are imported by :func:`security_schemes` only, when the
document is first built: a cold start that never serves ``GET /openapi.json`` never imports
them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentic_search.wire import (
    CacheInfo,
    Coverage,
    Evidence,
    ExtractorInfo,
    IntentState,
    QueryExecutorOutput,
    QueryPlan,
    RetrievalReport,
)
from agentic_search.wire.response import Comparison

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler.openapi.models import SecurityScheme


def security_schemes() -> dict[str, SecurityScheme]:
    """The security schemes of the deployed API, by name (built anew on each call: the caller
    builds the document once)."""
    from aws_lambda_powertools.event_handler.openapi.models import APIKey, APIKeyIn, HTTPBearer

    return {
        "sigv4": APIKey(
            type_="apiKey",
            name="Authorization",
            in_=APIKeyIn.header,
            description="AuthMode IAM (the default): requests signed with AWS SigV4 (service "
            "execute-api) by a principal allowed execute-api:Invoke on the API.",
            **{"x-amazon-apigateway-authtype": "awsSigv4"},
        ),
        "jwt": HTTPBearer(
            bearerFormat="JWT",
            description="AuthMode JWT: a bearer token from the stack's JwtIssuer, for one of "
            "its JwtAudience values.",
        ),
    }


#: Either scheme (a deployment turns on one of them, for every route).
SECURITY: list[dict[str, list[str]]] = [{"sigv4": []}, {"jwt": []}]


class FieldProblem(BaseModel):
    """One invalid field of a request: its dotted name (``body`` for the whole body), the
    validator's message and the pydantic error type."""

    field: str
    message: str
    type: str


class ValidationErrorBody(BaseModel):
    """Every 422: ``error`` is ``ValidationError``, ``message`` lists the invalid fields,
    ``detail`` says what is wrong with each."""

    model_config = ConfigDict(extra="forbid")

    error: str = Field(examples=["ValidationError"])
    message: str = Field(examples=["invalid field(s): limit"])
    detail: list[FieldProblem]


def field_problems(errors: Sequence[Mapping[str, Any]], skip: int = 0) -> list[dict[str, str]]:
    """Each pydantic error as ``{"field", "message", "type"}``: ``field`` is its location
    dotted without list indexes, less the first ``skip`` parts (``body`` for the whole
    input), ``message`` the validator's (less pydantic's ``Value error, `` prefix)."""
    return [
        {
            "field": ".".join(str(p) for p in e.get("loc", ())[skip:] if not isinstance(p, int))
            or "body",
            "message": str(e.get("msg", "")).removeprefix("Value error, "),
            "type": e.get("type", ""),
        }
        for e in errors
    ]


def one_line(detail: list[dict[str, str]]) -> str:
    """The problems of :func:`field_problems` in one line for people: ``invalid field(s):
    limit (Input should be less than or equal to 100)``."""
    parts = [f"{d['field'] or 'body'} ({d['message']})" for d in detail]
    return "invalid field(s): " + "; ".join(parts)


def validation_error(detail: list[dict[str, str]]) -> dict[str, Any]:
    """The 422 body for these problems (each ``{"field", "message", "type"}``), as JSON data."""
    fields = ", ".join(d["field"] or "body" for d in detail)
    body = ValidationErrorBody(
        error="ValidationError",
        message=f"invalid field(s): {fields}",
        detail=[FieldProblem(**d) for d in detail],
    )
    return body.model_dump()


class EvidencePackBody(BaseModel):
    """``evidencePack``: the selected evidence, coverage and its size in tokens (the round
    report is ``retrievalReport``, beside it)."""

    model_config = ConfigDict(extra="forbid")

    evidence: list[Evidence]
    coverage: Coverage
    tokens: int


class SearchResponseBody(QueryExecutorOutput):
    """``POST /search`` 200: see the module docstring."""

    query: str
    domain: str
    intent: IntentState
    plan: QueryPlan
    evidence_pack: EvidencePackBody | None = None
    retrieval_report: RetrievalReport | None = None
    comparison: Comparison | None = None
    cache: CacheInfo | None = None
    extractor: ExtractorInfo | None = None
    planner: ExtractorInfo | None = None
    plan_cache: CacheInfo | None = None


class HealthBody(BaseModel):
    """``GET /health``: ``status`` (``ok``, or ``degraded`` when a domain's index cannot be
    read); with ``?deep=true``, ``domains``: domain -> ``ok``, ``empty`` or the one-line
    error."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["ok", "degraded"]
    domains: dict[str, str] | None = None


def validation_doc(description: str = "a field is invalid (detail names each)") -> dict[int, Any]:
    """The ``responses`` entry of a route's 422 (what the validation handler answers)."""
    return {
        422: {
            "description": description,
            "content": {"application/json": {"model": ValidationErrorBody}},
        }
    }


#: ``GET /health``'s documented answers.
HEALTH_RESPONSES: dict[int, Any] = {
    200: {
        "description": "ok, or degraded with each domain's state (deep=true)",
        "content": {"application/json": {"model": HealthBody}},
    },
    **validation_doc(),
}


__all__ = [
    "HEALTH_RESPONSES",
    "SECURITY",
    "FieldProblem",
    "HealthBody",
    "SearchResponseBody",
    "ValidationErrorBody",
    "field_problems",
    "one_line",
    "security_schemes",
    "validation_doc",
    "validation_error",
]
