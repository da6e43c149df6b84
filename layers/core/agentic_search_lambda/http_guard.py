"""What ``POST /search`` refuses before validation, as finished API Gateway v2 responses:
bodies over :data:`MAX_BODY_BYTES` (413), non-JSON content types (415), bodies that are not
UTF-8, not JSON or nested too deeply (400), JSON that is not an object (422 naming ``body``).
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

#: Largest request body accepted (bytes); API Gateway's own limit is 10 MB.
MAX_BODY_BYTES = 64 * 1024


#: How deep a request body may nest (a SearchBody is flat; the parser's own limit is ~1,000
#: levels and exceeding it raises RecursionError, which must not become a 500).
MAX_JSON_DEPTH = 32


def precheck(event: dict[str, Any]) -> dict[str, Any] | None:
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
        return refusal(
            415, "UnsupportedMediaType", f"content-type {ctype!r}: send application/json"
        )
    body = event.get("body") or ""
    try:
        raw = base64.b64decode(body, validate=True) if event.get("isBase64Encoded") else None
    except (binascii.Error, ValueError):
        return refusal(400, "InvalidBody", "the body is not valid base64")
    size = len(raw) if raw is not None else len(body.encode("utf-8", "surrogatepass"))
    if size > MAX_BODY_BYTES:
        return refusal(413, "PayloadTooLarge", f"body over {MAX_BODY_BYTES} bytes")
    if raw is not None:
        try:
            body = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return refusal(
                400, "InvalidBody", f"the body is not UTF-8 ({exc.reason} at byte {exc.start})"
            )
    if not body.strip():
        return None  # Powertools answers 422 naming the missing body
    brackets = body.count("[") + body.count("{")
    if brackets > MAX_JSON_DEPTH and _depth(body) > MAX_JSON_DEPTH:
        return refusal(400, "InvalidJSON", f"the body nests deeper than {MAX_JSON_DEPTH} levels")
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError) as exc:
        return refusal(400, "InvalidJSON", f"the body is not valid JSON: {str(exc)[:200]}")
    if not isinstance(parsed, dict):
        detail = [{"field": "body", "message": "must be a JSON object", "type": "dict_type"}]
        return refusal(422, "ValidationError", "invalid field(s): body", detail=detail)
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


def refusal(status: int, error: str, message: str, **extra: Any) -> dict[str, Any]:
    """A finished API Gateway v2 response with the JSON error body."""
    return {
        "statusCode": status,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps({"error": error, "message": message, **extra}),
        "isBase64Encoded": False,
    }


def json_body_as_declared(event: dict[str, Any]) -> dict[str, Any]:
    """``event`` with ``application/x-www-form-urlencoded`` (what ``curl -d`` declares by
    default; API Gateway may base64-encode such a body) declared as ``application/json``: the
    body is read as JSON whatever it holds, so a body that is not JSON gets the same 400 and
    one that is not an object the same 422 as under ``application/json``."""
    headers = event.get("headers") or {}
    ctype = str(headers.get("content-type", "")).lower()
    if ctype.startswith("application/x-www-form-urlencoded"):
        event = {**event, "headers": {**headers, "content-type": "application/json"}}
    return event


__all__ = ["MAX_BODY_BYTES", "MAX_JSON_DEPTH", "json_body_as_declared", "precheck", "refusal"]
