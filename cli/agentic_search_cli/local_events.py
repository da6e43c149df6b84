"""The API Gateway HTTP API (payload v2) event and Lambda context that ``serve`` hands the real
SearchApiFunction handler for each local HTTP request (also what scripts/record_events.py
records into events/)."""

from __future__ import annotations

import base64
import time
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


@dataclass
class LocalContext:
    """The attributes of a Lambda context that Powertools reads."""

    function_name: str = "SearchApiFunction"
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 1024
    invoked_function_arn: str = "arn:aws:lambda:local:000000000000:function:SearchApiFunction"
    aws_request_id: str = ""
    log_group_name: str = "/aws/lambda/SearchApiFunction"
    log_stream_name: str = "local"

    def get_remaining_time_in_millis(self) -> int:
        """Lambda's API: time left (a fixed 30 s locally)."""
        return 30_000


def http_api_event(
    method: str, target: str, headers: dict[str, str], body: bytes, source_ip: str = "127.0.0.1"
) -> dict[str, Any]:
    """The API Gateway HTTP API payload-v2 event for one request (what Lambda receives).

    Non-UTF-8 bodies are passed base64-encoded with ``isBase64Encoded`` true, as API Gateway
    does for binary payloads.
    """
    parts = urlsplit(target)
    lower = {k.lower(): v for k, v in headers.items()}
    try:
        text, encoded = body.decode("utf-8"), False
    except UnicodeDecodeError:
        text, encoded = base64.b64encode(body).decode("ascii"), True
    now = time.time()
    request_id = str(uuid.uuid4())
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": f"{method} {parts.path}",
        "rawPath": parts.path,
        "rawQueryString": parts.query,
        "headers": lower,
        "requestContext": {
            "accountId": "000000000000",
            "apiId": "local",
            "domainName": lower.get("host", "localhost"),
            "http": {
                "method": method,
                "path": parts.path,
                "protocol": "HTTP/1.1",
                "sourceIp": source_ip,
                "userAgent": lower.get("user-agent", ""),
            },
            "requestId": request_id,
            "routeKey": f"{method} {parts.path}",
            "stage": "$default",
            "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
            "timeEpoch": int(now * 1000),
        },
        "isBase64Encoded": encoded,
    }
    if parts.query:
        event["queryStringParameters"] = dict(
            p.split("=", 1) if "=" in p else (p, "") for p in parts.query.split("&")
        )
    if body:
        event["body"] = text
    return event


def answer_event(event: dict[str, Any], request_id: str) -> dict[str, Any]:
    """The deployed handler's answer to ``event``: McpFunction's for ``/mcp``
    (:mod:`agentic_search_lambda.mcp_http`), SearchApiFunction's for every other route."""
    if event.get("rawPath") == "/mcp":
        from agentic_search_lambda.mcp_http import handler
    else:
        from agentic_search_lambda.api import handler
    return handler(event, LocalContext(aws_request_id=request_id))


__all__ = ["LocalContext", "answer_event", "http_api_event"]
