"""``agentic-search serve``: the local HTTP server in front of the SearchApiFunction handler,
on a free loopback port, spoken to with urllib the way a person uses curl.

The server runs in a thread of this process with the local runner over the session engine
(``wired_runtime`` points the API at it): the same server ``serve`` starts, without a second
Qdrant client on the session's folder.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentic_search_cli.local_server import MAX_REQUEST_BYTES, serving

QUERY = {"query": "free code editor", "limit": 5}


@pytest.fixture()
def base_url(wired_runtime) -> Iterator[str]:
    with serving() as url:
        yield url


def request(
    url: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body; an HTTP error status is an answer, not an exception."""
    req = urllib.request.Request(url, data=body, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, dict(resp.headers.items()), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers.items()), err.read()


def search(base_url: str, payload: Any = QUERY) -> tuple[int, Any]:
    # Like curl -d '{...}': urllib too declares a body without a content type form-encoded.
    status, headers, raw = request(f"{base_url}/search", json.dumps(payload).encode())
    assert headers.get("Content-Type", "").startswith("application/json"), headers
    return status, json.loads(raw)


def ids(body: dict) -> list[str]:
    return [c["id"] for c in body["candidates"]]


def test_post_search_like_curl_d_answers_200_with_candidates(base_url):
    # GIVEN the server; WHEN a JSON body is POSTed without a content type (curl -d)
    status, body = search(base_url)
    # THEN the search answers with candidates that carry their provenance
    assert status == 200, body
    assert body["query"] == "free code editor"
    assert 1 <= len(body["candidates"]) <= 5
    assert all(c["provenance"]["hits"] for c in body["candidates"])
    assert body["errors"] == []


def test_an_invalid_body_is_a_422_naming_the_field(base_url):
    status, body = search(base_url, {"query": "free code editor", "limit": 0})
    assert status == 422
    assert [d["field"] for d in body["detail"]] == ["limit"]


def test_a_body_over_1_mb_is_refused_with_413(base_url):
    # GIVEN a body one byte over the server's limit
    raw = b" " * (MAX_REQUEST_BYTES + 1)
    # WHEN it is POSTed
    status, _, body = request(f"{base_url}/search", raw, {"Content-Type": "application/json"})
    # THEN 413, before the handler sees it
    assert status == 413
    assert json.loads(body)["error"] == "PayloadTooLarge"


def test_a_5_mb_upload_gets_the_413_not_a_reset_connection(base_url):
    # GIVEN a body well over the limit but under API Gateway's 10 MB (curl --data-binary @big)
    raw = b" " * (5 * 1024 * 1024)
    # WHEN it is POSTed
    try:
        status, _, _ = request(f"{base_url}/search", raw, {"Content-Type": "application/json"})
    except (urllib.error.URLError, ConnectionError) as exc:
        pytest.fail(f"the client got no answer, only {exc!r}")
    # THEN the client reads the 413 too
    assert status == 413


def test_an_invalid_utf8_body_is_a_client_error_not_a_server_error(base_url):
    # GIVEN a body that is not UTF-8 (API Gateway would pass it base64-encoded)
    raw = b'{"query": "caf\xe9 \xff\xfe"}'
    for headers in ({}, {"Content-Type": "application/json"}):
        # WHEN it is POSTed
        try:
            status, _, _ = request(f"{base_url}/search", raw, headers)
        except (urllib.error.URLError, ConnectionError) as exc:
            pytest.fail(f"headers {headers}: the server sent no answer: {exc!r}")
        # THEN the client is told its request is wrong
        assert 400 <= status < 500, (headers, status)


def test_get_openapi_json_is_the_document(base_url):
    status, headers, raw = request(f"{base_url}/openapi.json")
    assert status == 200, raw[:300]
    assert headers["Content-Type"] == "application/json"
    doc = json.loads(raw)
    assert doc["openapi"].startswith("3.") and "/search" in doc["paths"]


def test_get_health_and_an_unknown_route(base_url):
    assert request(f"{base_url}/health")[0] == 200
    assert request(f"{base_url}/nowhere")[0] == 404


def test_concurrent_searches_all_answer_the_same(base_url):
    # GIVEN ten clients asking the same thing at once (searches are serialized in local mode)
    with cf.ThreadPoolExecutor(max_workers=10) as pool:
        answers = list(pool.map(lambda _: search(base_url), range(10)))
    # THEN every one gets a 200 and the same candidates, in the same order
    assert [status for status, _ in answers] == [200] * 10
    first = ids(answers[0][1])
    assert first
    assert all(ids(body) == first for _, body in answers)


def test_serve_help_exits_0_and_shows_how_to_curl_it():
    exe = Path(sys.executable).with_name("agentic-search")
    assert exe.is_file(), f"{exe}: the console script is not installed"
    proc = subprocess.run(
        [str(exe), "serve", "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "curl" in proc.stdout
    assert "--port" in proc.stdout and "/search" in proc.stdout


#: Keys that differ between two runs of the same search: wall-clock timings only.
TIMING_KEYS = {"latencyMs", "stageMs", "sourceMs", "totalMs", "ms"}


def without_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


class _Unclosable:
    """The session engine as the CLI sees it (the CLI closes its engine when done)."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    def close(self) -> None:
        pass


def test_serve_answers_with_the_json_that_search_json_prints(
    base_url, tools_engine, capsys, monkeypatch
):
    # GIVEN the same engine behind `serve` and behind the CLI's `search --json`
    from agentic_search_cli import cmd_search
    from agentic_search_cli import main as cli

    query = "open source vector database I can self-host"
    monkeypatch.setattr(
        cmd_search, "open_service", lambda domain, settings=None: _Unclosable(tools_engine)
    )
    # WHEN the CLI prints the search as JSON
    assert cli.main(["search", query, "--json", "--limit", "5"]) == 0
    printed = json.loads(capsys.readouterr().out)
    # AND the same request goes through the HTTP server
    status, served = search(base_url, {"query": query, "limit": 5})
    # THEN both are the same document, apart from timings, notes on the paths included
    assert status == 200
    assert set(served) == set(printed)
    assert {"cache", "extractor", "planner"} <= set(printed)
    assert without_timings(served) == without_timings(printed)
