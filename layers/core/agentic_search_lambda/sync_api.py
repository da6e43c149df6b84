"""The ``/sync/*`` routes of the HTTP API (a Router included by :mod:`agentic_search_lambda.api`).

``GET /sync/status`` (counts per status), ``GET /sync/failed`` and ``GET /sync/pending`` (the
entries, ``?limit=`` 1..1000, default 100), ``GET /sync/tool/{id}`` (one record's entry, 404 when
unknown), ``POST /sync/retry/{id}`` and ``POST /sync/retry-all`` (re-queue parked failures: they
become pending and due now; the next SyncRedrive run, every minute, applies them; 202; 409 when
the entry has no change to re-apply, with the reason). Every route takes ``?domain=`` (default
tools; an unknown domain is a 422 naming the field, as at ``/search``). Record ids in the path
are percent-decoded (``Sync%20H`` is the record ``Sync H``).
"""

from __future__ import annotations

import json
from typing import Annotated, Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from pydantic import BaseModel

from agentic_search.sync.redrive import retry_report, status_summary
from agentic_search.wire.sync import SyncEntry
from agentic_search_lambda.openapi_doc import validation_doc, validation_error
from agentic_search_lambda.runtime import runtime

router = APIGatewayHttpRouter()

Domain = Annotated[str, Query(pattern=r"^[a-z][a-z0-9_-]{0,63}$")]
Limit = Annotated[int, Query(ge=1, le=1000)]


class SyncErrorBody(BaseModel):
    """A 4xx answer of a /sync route."""

    error: str
    message: str


class QueuedBody(BaseModel):
    """``POST /sync/retry*``: the record ids re-queued for the next redrive run (and, for
    retry-all, those skipped: id -> why)."""

    queued: list[str]
    skipped: dict[str, str] = {}


def _doc(description: str, model: type[BaseModel]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"model": model}}}


class StatusBody(BaseModel):
    """``GET /sync/status``: entries per status, and whether nothing is pending or failed."""

    domain: str
    counts: dict[str, int]
    healthy: bool


class EntriesBody(BaseModel):
    """``GET /sync/failed`` and ``GET /sync/pending``: the entries, oldest update first."""

    domain: str
    entries: list[SyncEntry]


# Every status a route answers is in the OpenAPI document (422: the API's validation handler,
# and _unknown_domain, both answer openapi_doc.ValidationErrorBody).
INVALID = validation_doc()
NOT_FOUND = {404: _doc("no such sync entry / nothing to retry", SyncErrorBody)}
QUEUED = {202: _doc("re-queued; the next SyncRedrive run applies them", QueuedBody)}
CONFLICT = {409: _doc("the entry has no change to re-apply (the reason)", SyncErrorBody)}


@router.get("/sync/status", responses={200: _doc("counts per status", StatusBody), **INVALID})
def get_status(domain: Domain = "tools") -> Response[str]:
    """Sync health: entries per status (synced, pending, failed)."""
    return _unknown_domain(domain) or _json(200, status_summary(runtime().sync_status, domain))


@router.get("/sync/failed", responses={200: _doc("failed entries", EntriesBody), **INVALID})
def get_failed(domain: Domain = "tools", limit: Limit = 100) -> Response[str]:
    """Records parked as failed, with the last error and retry count."""
    return _unknown_domain(domain) or _entries(domain, "failed", limit)


@router.get("/sync/pending", responses={200: _doc("pending entries", EntriesBody), **INVALID})
def get_pending(domain: Domain = "tools", limit: Limit = 100) -> Response[str]:
    """Records waiting for a retry, with the next attempt time."""
    return _unknown_domain(domain) or _entries(domain, "pending", limit)


@router.get(
    "/sync/tool/<id>",  # the template's path parameter name
    responses={200: _doc("the record's sync entry", SyncEntry), **NOT_FOUND, **INVALID},
)
def get_tool(id: str, domain: Domain = "tools") -> Response[str]:
    """One record's sync entry (per aspect: status, content hash, last synced at)."""
    if bad := _unknown_domain(domain):
        return bad
    rid = unquote(id)
    entry = runtime().sync_status.get(domain, [rid]).get(rid)
    if entry is None:
        return _json(404, {"error": "NotFound", "message": f"no sync entry for {rid!r}"})
    return _json(200, entry.wire())


@router.post("/sync/retry/<id>", responses={**QUEUED, **NOT_FOUND, **CONFLICT, **INVALID})
def post_retry(id: str, domain: Domain = "tools") -> Response[str]:
    """Re-queue one record's failed change (404 when the record has no sync entry, 409 when
    its entry has no change to re-apply, with the reason)."""
    if bad := _unknown_domain(domain):
        return bad
    rid = unquote(id)
    report = retry_report(runtime().sync_status, domain, [rid])
    if report.missing:
        return _json(404, {"error": "NotFound", "message": f"no sync entry for {rid!r}"})
    if not report.queued:
        return _json(409, {"error": "NothingToRetry", "message": report.skipped[rid]})
    return _json(202, {"queued": report.queued})


@router.post("/sync/retry-all", responses={**QUEUED, **INVALID})
def post_retry_all(domain: Domain = "tools") -> Response[str]:
    """Re-queue every parked failure of the domain; ``skipped`` says why the others stay."""
    if bad := _unknown_domain(domain):
        return bad
    report = retry_report(runtime().sync_status, domain)
    return _json(202, {"queued": report.queued, "skipped": report.skipped})


def _entries(domain: str, status: str, limit: int) -> Response[str]:
    entries = runtime().sync_status.list(domain, status, limit=limit)
    return _json(200, {"domain": domain, "entries": [e.wire() for e in entries]})


def _unknown_domain(domain: str) -> Response[str] | None:
    """The 422 of ``/search`` for a domain with no schema (None for a known one)."""
    known = runtime().domains()
    if domain in known:
        return None
    message = f"unknown domain {domain!r} (known: {', '.join(known)})"
    detail = [{"field": "domain", "message": message, "type": "value_error"}]
    return _json(422, validation_error(detail))


def _json(status: int, body: dict[str, Any]) -> Response[str]:
    return Response(status_code=status, content_type="application/json", body=json.dumps(body))


__all__ = ["router"]
