"""``/mcp``: the MCP server of :mod:`agentic_search_lambda.mcp_tools` over stateless streamable
HTTP, answering API Gateway HTTP API (payload v2) events: McpFunction's handler, and what
``agentic-search serve`` calls for a request to ``/mcp`` (the same event it builds for every
route).

Each event is one HTTP exchange (a JSON-RPC request in, its JSON response out; a notification
is a 202): the SDK's ``StreamableHTTPSessionManager`` in stateless JSON-response mode handles
it as an ASGI request. A Lambda invocation is one exchange, so each gets its own manager (the
SDK's manager runs once) around the one server. No session outlives an exchange: a client's
``initialize``, ``tools/list`` and ``tools/call`` may reach different containers.

Host and Origin checks (DNS rebinding protection): the hosts of ``MCP_ALLOWED_HOSTS`` (``serve``
on loopback sets its own); none set, none checked (API Gateway's authorizer guards the
deployed route, as for every other).
"""

from __future__ import annotations

import base64
import threading
from typing import Any

import anyio
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agentic_search_lambda.callers import caller_of
from agentic_search_lambda.http_guard import MAX_BODY_BYTES, refusal
from agentic_search_lambda.observability import count, logger, metrics
from agentic_search_lambda.runtime import runtime

#: The route's path (a named stage prefixes rawPath: /prod/mcp).
ROUTE = "/mcp"

_building = threading.Lock()


def _security(hosts: list[str]) -> Any:
    """The SDK's Host/Origin check for ``hosts`` (``host:port`` patterns, ``*`` any port);
    off for none (said explicitly: the SDK turns it on for a server it believes local)."""
    from mcp.server.transport_security import TransportSecuritySettings

    return TransportSecuritySettings(
        enable_dns_rebinding_protection=bool(hosts),
        allowed_hosts=hosts,
        allowed_origins=[f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")],
    )


def _manager() -> Any:
    """A fresh stateless, JSON-response session manager over the one server."""
    from agentic_search_lambda.mcp_tools import build_server

    server = build_server()
    with _building:  # the SDK keeps the last app's manager on the server
        server.streamable_http_app(
            json_response=True,
            stateless_http=True,
            max_request_body_size=MAX_BODY_BYTES,  # POST /search's bound (a 413)
            transport_security=_security(runtime().lambda_settings.mcp_allowed_hosts),
        )
        return server.session_manager


def asgi_scope(event: dict[str, Any]) -> dict[str, Any]:
    """The ASGI HTTP scope of an API Gateway v2 event (path :data:`ROUTE`, whatever stage
    prefixes it)."""
    http = (event.get("requestContext") or {}).get("http") or {}
    headers = [
        (str(k).lower().encode("latin-1"), str(v).encode("latin-1"))
        for k, v in (event.get("headers") or {}).items()
    ]
    cookies = event.get("cookies") or []
    if cookies:
        headers.append((b"cookie", "; ".join(cookies).encode("latin-1")))
    host = str((event.get("requestContext") or {}).get("domainName") or "localhost")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": str(http.get("method") or "POST").upper(),
        "scheme": "https",
        "path": ROUTE,
        "raw_path": ROUTE.encode(),
        "root_path": "",
        "query_string": str(event.get("rawQueryString") or "").encode("latin-1"),
        "headers": headers,
        "client": (str(http.get("sourceIp") or "127.0.0.1"), 0),
        "server": (host, 443),
    }


def _body(event: dict[str, Any]) -> bytes:
    body = event.get("body") or ""
    if event.get("isBase64Encoded"):
        return base64.b64decode(body)
    return body.encode("utf-8", "surrogatepass")


Headers = list[tuple[bytes, bytes]]


async def exchange(scope: dict[str, Any], body: bytes) -> tuple[int, Headers, bytes]:
    """One HTTP exchange with the MCP server: ``(status, headers, body)``."""
    manager = _manager()
    done = anyio.Event()
    sent = False
    start: dict[str, Any] = {}
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()  # the client hangs up once the answer is complete
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            start.update(message)
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                done.set()

    async with manager.run():
        await manager.handle_request(scope, receive, send)
    done.set()
    return int(start.get("status", 500)), list(start.get("headers") or []), b"".join(chunks)


def answer(event: dict[str, Any]) -> dict[str, Any]:
    """The API Gateway v2 response to an ``/mcp`` event: the exchange of a POST; for another
    method a 405 with ``Allow: POST`` (the spec's answer of a server that opens no SSE stream
    and keeps no session: a GET stream would hold the invocation open to its timeout)."""
    scope = asgi_scope(event)
    if scope["method"] != "POST":
        out = refusal(405, "MethodNotAllowed", f"{scope['method']} {ROUTE}: use POST")
        out["headers"]["Allow"] = "POST"
        return out
    status, headers, raw = anyio.run(exchange, scope, _body(event))
    out: dict[str, str] = {}
    for k, v in headers:
        name, value = k.decode("latin-1").lower(), v.decode("latin-1")
        if name != "content-length":
            out[name] = f"{out[name]}, {value}" if name in out else value
    try:
        text, encoded = raw.decode("utf-8"), False
    except UnicodeDecodeError:
        text, encoded = base64.b64encode(raw).decode("ascii"), True
    return {"statusCode": status, "headers": out, "body": text, "isBase64Encoded": encoded}


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """McpFunction's handler (``functions/mcp_api/app.py`` re-exports it; ``serve`` calls it
    for ``/mcp``)."""
    count("McpRequests")
    from agentic_search_lambda.mcp_tools import set_caller  # (loaded with the server)

    rt = runtime()
    set_caller(caller_of(event, rt.lambda_settings.access_claims, rt.iam_principals))
    return answer(event)


def is_mcp(event: dict[str, Any]) -> bool:
    """Whether an API Gateway v2 event is for :data:`ROUTE` (any stage prefix)."""
    return str(event.get("rawPath") or "").rstrip("/").endswith(ROUTE)


__all__ = ["ROUTE", "answer", "asgi_scope", "exchange", "handler", "is_mcp"]
