"""The search page (``GET /``, its script and style under ``/ui/``) and ``GET /domains``: a
router included by :mod:`agentic_search_lambda.api`, served by ``agentic-search serve`` and by
the deployed HTTP API (behind the same authorizer as ``/search``).

The page is three static files shipped as package data (``agentic_search_lambda/ui``): no
build step, no CDN, no outside font. Every answer carries a Content-Security-Policy that
allows scripts, styles and requests from the page's own origin only (no inline script, no
``eval``, no other origin), so catalog text the script mistakenly handled as markup still
could not run; the script itself writes catalog text with ``textContent`` only.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from pydantic import BaseModel, ConfigDict, Field

from agentic_search.logic.schema import available_domains, load_schema

router = APIGatewayHttpRouter()

#: The policy of every page answer: same-origin script, style, images and requests; nothing
#: inline, no plugins, no framing, forms only to this origin.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
#: The page's files by URL path: (package file, content type).
ASSETS: dict[str, tuple[str, str]] = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/ui/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/ui/app.css": ("app.css", "text/css; charset=utf-8"),
}
#: Headers of every page answer.
PAGE_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


@lru_cache(maxsize=len(ASSETS))
def asset(path: str) -> tuple[str, str]:
    """The text and content type of the page file served at ``path``.

    Raises:
        KeyError: for a path that is not one of :data:`ASSETS`.
    """
    name, content_type = ASSETS[path]
    text = resources.files("agentic_search_lambda").joinpath("ui", name).read_text("utf-8")
    return text, content_type


def _file_doc(description: str, content_type: str) -> dict[int, Any]:
    return {
        200: {"description": description, "content": {content_type: {"schema": {"type": "string"}}}}
    }


def _page(path: str) -> Response[str]:
    text, content_type = asset(path)
    return Response(
        status_code=200, content_type=content_type, body=text, headers=dict(PAGE_HEADERS)
    )


@router.get("/", responses=_file_doc("the search page", "text/html"))
def index() -> Response[str]:
    """The search page."""
    return _page("/")


@router.get("/ui/app.js", responses=_file_doc("the page's script", "text/javascript"))
def script() -> Response[str]:
    """The search page's script."""
    return _page("/ui/app.js")


@router.get("/ui/app.css", responses=_file_doc("the page's style sheet", "text/css"))
def style() -> Response[str]:
    """The search page's style sheet."""
    return _page("/ui/app.css")


class DomainInfo(BaseModel):
    """One domain the server searches: its name, schema version, the field of its temporal
    ranges (None when it has none) and its intent's vocabularies (the soft preferences)."""

    model_config = ConfigDict(populate_by_name=True)

    name: str
    version: str
    temporal_field: str | None = Field(default=None, alias="temporalField")
    vocabularies: list[str] = []


class DomainsBody(BaseModel):
    """``GET /domains``: the domains ``POST /search`` takes, the default first."""

    domains: list[DomainInfo]


@lru_cache(maxsize=1)
def domain_infos() -> DomainsBody:
    """The bundled domains, the default (tools) first (``GET /domains``, MCP's
    ``list_domains``)."""
    infos = []
    for name in available_domains():
        schema = load_schema(name)
        infos.append(
            DomainInfo(
                name=name,
                version=schema.version,
                temporal_field=schema.temporal.field if schema.temporal else None,
                vocabularies=sorted(schema.vocabularies),
            )
        )
    infos.sort(key=lambda d: d.name != "tools")
    return DomainsBody(domains=infos)


@lru_cache(maxsize=1)
def _domains_json() -> str:
    return json.dumps(domain_infos().model_dump(by_alias=True))


DOMAINS_RESPONSES: dict[int, Any] = {
    200: {
        "description": "the domains the server searches",
        "content": {"application/json": {"model": DomainsBody}},
    }
}


@router.get("/domains", responses=DOMAINS_RESPONSES)
def domains() -> Response[str]:
    """The domains ``POST /search`` takes (``domain``), the default (tools) first, each with
    its schema version and the field its temporal ranges filter on."""
    return Response(status_code=200, content_type="application/json", body=_domains_json())


__all__ = [
    "ASSETS",
    "CONTENT_SECURITY_POLICY",
    "DomainInfo",
    "DomainsBody",
    "asset",
    "domain_infos",
    "router",
]
