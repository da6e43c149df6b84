"""API fuzzing: schemathesis against the OpenAPI document ``serve`` publishes
(``GET /openapi.json``, the same routes template.yaml deploys), plus hand-written hostile
requests schemathesis does not produce (oversized and deeply nested bodies, invalid UTF-8,
lone surrogates, wrong content types).

Every request must get a 2xx, or a 4xx whose JSON body names what was wrong (``detail[].field``
for a validation error, ``error`` + ``message`` otherwise): never a 5xx, never a stack trace.
With ``FUZZ_OUT=path`` the counts are written as JSON (benchmarks/fuzz/).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from agentic_search_cli.local_server import MAX_REQUEST_BYTES
from agentic_search_lambda import api

# Powertools warns when a 4xx answer published no metric: expected here, hundreds of times.
pytestmark = pytest.mark.filterwarnings("ignore:No application metrics to publish")

STATUSES: Counter[str] = Counter()
FAILURES: list[str] = []
MAX_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "60"))


# The document GET /openapi.json serves (asserted equal below), loaded at import so that
# schemathesis can parametrize the test.
schema = schemathesis.openapi.from_dict(json.loads(api.openapi_document()))


def test_the_fuzzed_document_is_the_one_serve_publishes(live_url):
    status, raw = send(f"{live_url}/openapi.json", None, {}, "GET")
    assert status == 200
    served = json.loads(raw)
    assert served == schema.raw_schema
    body = served["components"]["schemas"]["SearchBody"]
    assert {"query", "limit", "rounds", "domain"} <= set(body["properties"])
    assert body.get("additionalProperties") is False


@pytest.fixture(scope="module", autouse=True)
def write_counts() -> Iterator[None]:
    yield
    out = os.environ.get("FUZZ_OUT")
    if out:
        by_class = Counter(f"{s[0]}xx" for s in STATUSES.elements())
        Path(out).write_text(
            json.dumps(
                {
                    "cases": sum(STATUSES.values()),
                    "by_status": dict(sorted(STATUSES.items())),
                    "by_class": dict(sorted(by_class.items())),
                    "5xx": by_class.get("5xx", 0),
                    "failures": FAILURES[:20],
                },
                indent=2,
            )
            + "\n"
        )


def check_answer(label: str, status: int, raw: bytes) -> None:
    """2xx, or a 4xx JSON error naming the problem; never 5xx, never a traceback."""
    STATUSES[str(status)] += 1
    text = raw.decode("utf-8", "replace")
    problem = None
    if status >= 500:
        problem = f"{status}"
    elif "Traceback" in text or 'File "' in text:
        problem = "stack trace in the body"
    elif 400 <= status < 500:
        try:
            body = json.loads(text)
        except ValueError:
            problem = f"{status} without a JSON body"
        else:
            if not (isinstance(body, dict) and body.get("error") and body.get("message")):
                problem = f"{status} without error/message"
            elif status == 422 and not all(d.get("field") for d in body.get("detail", [])):
                problem = "422 without the field"
    if problem:
        FAILURES.append(f"{label}: {problem}: {text[:200]}")
    assert problem is None, f"{label}: {problem}: {text[:300]}"


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_every_generated_request_is_answered_2xx_or_a_named_4xx(case, live_url):
    response = case.call(base_url=live_url, timeout=60)
    label = f"{case.method} {case.path} {case.body!r:.120}"
    check_answer(label, response.status_code, response.content)
    # AND a documented operation answers only with the statuses its document lists
    ops = schema.raw_schema["paths"].get(case.path, {})
    documented = ops.get(case.method.lower(), {}).get("responses")
    if documented is not None:
        assert str(response.status_code) in documented, (label, response.status_code)


# ----- hostile requests schemathesis does not generate ------------------------------------------


def send(url: str, body: bytes | None, headers: dict[str, str], method: str = "POST"):
    req = urllib.request.Request(url, data=body, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


JSON = {"content-type": "application/json"}
HOSTILE: list[tuple[str, bytes, dict[str, str], set[int]]] = [
    ("over-1MB", b'{"query": "' + b"a" * (MAX_REQUEST_BYTES + 10) + b'"}', JSON, {413}),
    ("padded-valid-70KB", b'{"query": "free editor"' + b" " * 70_000 + b"}", JSON, {413}),
    ("deep-array-30k", b"[" * 30_000 + b"]" * 30_000, JSON, {400, 422}),
    ("deep-array-2k", b"[" * 2_000 + b"]" * 2_000, JSON, {400, 422}),
    ("deep-object-5k", b'{"a":' * 5_000 + b"1" + b"}" * 5_000, JSON, {400, 422}),
    ("deep-in-query", b'{"query": ' + b"[" * 25_000 + b"]" * 25_000 + b"}", JSON, {400, 422}),
    ("invalid-utf8", b'{"query": "caf\xe9 \xff\xfe"}', JSON, {400, 422}),
    ("lone-surrogate", b'{"query": "free \\ud800 editor"}', JSON, {200, 400, 422}),
    ("nul-bytes", b'{"query": "free\\u0000editor"}', JSON, {200, 400, 422}),
    ("truncated-json", b'{"query": "free', JSON, {400, 422}),
    ("not-json", b"query=free+editor", JSON, {400, 422}),
    ("text-plain", b'{"query": "free editor"}', {"content-type": "text/plain"}, {200, 415, 422}),
    ("xml", b"<query>free</query>", {"content-type": "application/xml"}, {400, 415, 422}),
    (
        "multipart",
        b"--x\r\n\r\nfree\r\n--x--",
        {"content-type": "multipart/form-data; boundary=x"},
        {400, 415, 422},
    ),
    (
        "form-urlencoded-form",
        b"query=free",
        {"content-type": "application/x-www-form-urlencoded"},
        {400, 415, 422},
    ),
    ("empty-body", b"", JSON, {400, 422}),
    ("json-null", b"null", JSON, {400, 422}),
    ("json-array", b'[{"query": "free"}]', JSON, {400, 422}),
    ("huge-number", b'{"query": "free", "limit": 1' + b"0" * 5000 + b"}", JSON, {400, 422}),
    ("float-limit", b'{"query": "free", "limit": 5.0}', JSON, {422}),
    ("nan-limit", b'{"query": "free", "limit": NaN}', JSON, {400, 422}),
    ("bool-limit", b'{"query": "free", "limit": true}', JSON, {422}),
    ("dollar-field", b'{"query": "free", "$where": "sleep(1000)"}', JSON, {422}),
    ("dotted-field", b'{"query": "free", "filters.price": 1}', JSON, {422}),
    ("query-object", b'{"query": {"$regex": ".*"}}', JSON, {422}),
    ("domain-traversal", b'{"query": "free", "domain": "../../etc/passwd"}', JSON, {422}),
    ("domain-unknown", b'{"query": "free", "domain": "nosuchdomain"}', JSON, {400, 404, 422}),
    ("duplicate-keys", b'{"query": "free", "query": "paid", "limit": 3}', JSON, {200}),
]


@pytest.mark.parametrize(
    ("name", "body", "headers", "expected"), HOSTILE, ids=[h[0] for h in HOSTILE]
)
def test_hostile_request_bodies_get_a_named_client_error(live_url, name, body, headers, expected):
    status, raw = send(f"{live_url}/search", body, headers)
    check_answer(name, status, raw)
    assert status in expected, (name, status, raw[:300])


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("POST", "/sync/status", "GET"),
        ("GET", "/sync/retry-all", "POST"),
        ("DELETE", "/sync/tool/cursor", "GET"),
        ("PUT", "/health", "GET"),
        ("HEAD", "/sync/retry/cursor", "POST"),  # no do_HEAD: http.server's own 501 path
        ("PROPFIND", "/search", "POST"),
    ],
)
def test_serve_answers_a_known_route_with_another_method_405_and_allow(
    live_url, method, path, allow
):
    # issue 25 finding 10: every route, not only /search and /health
    req = urllib.request.Request(f"{live_url}{path}", method=method)
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(req, timeout=60)
    assert caught.value.code == 405
    assert caught.value.headers["Allow"] == allow
    if method != "HEAD":
        check_answer(f"{method} {path}", 405, caught.value.read())


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH"])
def test_other_methods_on_search_are_refused_with_json(live_url, method):
    status, raw = send(f"{live_url}/search", b"{}" if method != "GET" else None, JSON, method)
    check_answer(f"{method} /search", status, raw)
    assert status in (404, 405)
