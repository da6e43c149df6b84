"""The ``/sync/*`` routes of the HTTP API (a Router included by :mod:`agentic_search_lambda.api`).

``GET /sync/status`` (counts per status), ``GET /sync/failed`` and ``GET /sync/pending`` (the
entries, ``?limit=`` 1..1000, default 100), ``GET /sync/tool/{id}`` (one record's entry, 404 when
unknown), ``POST /sync/retry/{id}`` and ``POST /sync/retry-all`` (re-queue parked failures: they
become pending and due now; the next SyncRedrive run, every minute, applies them; 202). Every
route takes ``?domain=`` (default tools).
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from pydantic import BaseModel

from agentic_search.state.sync import SyncEntry
from agentic_search.sync.redrive import retry_failed, status_summary
from agentic_search_lambda.runtime import runtime

router = APIGatewayHttpRouter()

Domain = Annotated[str, Query(pattern=r"^[a-z][a-z0-9_-]{0,63}$")]
Limit = Annotated[int, Query(ge=1, le=1000)]


class SyncErrorBody(BaseModel):
    """A 4xx answer of a /sync route."""

    error: str
    message: str


class QueuedBody(BaseModel):
    """``POST /sync/retry*``: the record ids re-queued for the next redrive run."""

    queued: list[str]


def _doc(description: str, model: type[BaseModel]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"model": model}}}


# Every status a route answers is in the OpenAPI document (422: Powertools' validation).
NOT_FOUND = {404: _doc("no such sync entry / nothing to retry", SyncErrorBody)}
QUEUED = {202: _doc("re-queued; the next SyncRedrive run applies them", QueuedBody)}


@router.get("/sync/status")
def get_status(domain: Domain = "tools") -> dict[str, Any]:
    """Sync health: entries per status (synced, pending, failed)."""
    return status_summary(runtime().sync_status, domain)


@router.get("/sync/failed")
def get_failed(domain: Domain = "tools", limit: Limit = 100) -> dict[str, Any]:
    """Records parked as failed, with the last error and retry count."""
    entries = runtime().sync_status.list(domain, "failed", limit=limit)
    return {"domain": domain, "entries": [e.wire() for e in entries]}


@router.get("/sync/pending")
def get_pending(domain: Domain = "tools", limit: Limit = 100) -> dict[str, Any]:
    """Records waiting for a retry, with the next attempt time."""
    entries = runtime().sync_status.list(domain, "pending", limit=limit)
    return {"domain": domain, "entries": [e.wire() for e in entries]}


@router.get(
    "/sync/tool/<record_id>",
    responses={200: _doc("the record's sync entry", SyncEntry), **NOT_FOUND},
)
def get_tool(record_id: str, domain: Domain = "tools") -> Response[str]:
    """One record's sync entry (per aspect: status, content hash, last synced at)."""
    entry = runtime().sync_status.get(domain, [record_id]).get(record_id)
    if entry is None:
        return _json(404, {"error": "NotFound", "message": f"no sync entry for {record_id!r}"})
    return _json(200, entry.wire())


@router.post("/sync/retry/<record_id>", responses={**QUEUED, **NOT_FOUND})
def post_retry(record_id: str, domain: Domain = "tools") -> Response[str]:
    """Re-queue one record's failed change (404 when there is none to retry)."""
    queued = retry_failed(runtime().sync_status, domain, [record_id])
    if not queued:
        return _json(
            404, {"error": "NotFound", "message": f"no failed change to retry for {record_id!r}"}
        )
    return _json(202, {"queued": queued})


@router.post("/sync/retry-all", responses=QUEUED)
def post_retry_all(domain: Domain = "tools") -> Response[str]:
    """Re-queue every parked failure of the domain."""
    return _json(202, {"queued": retry_failed(runtime().sync_status, domain)})


def _json(status: int, body: dict[str, Any]) -> Response[str]:
    return Response(status_code=status, content_type="application/json", body=json.dumps(body))


__all__ = ["router"]
