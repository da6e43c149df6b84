"""A pasted paragraph is a query: the CLI, ``serve`` and the API handler answer a 2,000-character
one with results, and refuse one past the documented bound (``QUERY_MAX_CHARS`` characters or
``QUERY_MAX_TOKENS`` word tokens) with one line naming the field: exit 2 from the CLI, a 422
with ``detail[].field == "query"`` from ``serve`` and the handler. One validation
(``agentic_search.wire.search.query_problem``) serves all three.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from support.cli import run_cli
from support.lambdas import load_event

from agentic_search.wire import QUERY_MAX_CHARS, QUERY_MAX_TOKENS
from agentic_search_cli.local_events import LocalContext
from agentic_search_cli.local_server import serving
from agentic_search_cli.main import main

#: A job description pasted as the query: some 2,000 characters, well over the old 1,000 cap.
PARAGRAPH = (
    "We are a small team of backend developers working mostly in Python and TypeScript, and "
    "we are looking for an AI coding assistant that can help us write, review and refactor "
    "code inside the editors we already use, which are Visual Studio Code and the JetBrains "
    "IDEs. Most of our code is private and some of it is covered by customer contracts, so "
    "the tool has to keep our source code private: ideally it can run locally on our own "
    "machines or be self-hosted on our servers, and it must not train on our code. Code "
    "completion is the most important feature for us, followed by a chat panel that can "
    "explain unfamiliar code, generate unit tests and suggest fixes for failing builds. We "
    "would also like it to understand the whole repository rather than one file at a time, "
    "so that suggestions follow our own conventions and internal libraries. A free tier or "
    "an open source edition would be great because we want to try it for a few weeks before "
    "we ask for budget; if it is paid, a price under twenty dollars per developer per month "
    "is what we can afford. Support for Linux and macOS is required since half of the team "
    "works on Linux laptops. We do not need image generation, voice features or anything "
    "for designers, and we would rather avoid tools that only work in the browser. Good "
    "documentation, an active community and regular releases matter to us, as does the "
    "ability to plug in different language models later on. Please suggest the assistants "
    "and code completion tools that best match this description, and explain which of our "
    "requirements each one meets, especially local or self-hosted deployment, privacy of our "
    "code, editor integrations and the pricing for a team of eight developers. If a tool "
    "also offers a command line interface or an agent that can run our test suite and open "
    "pull requests on its own, tell us, since that could save the team time on routine "
    "maintenance work such as dependency upgrades and small bug fixes."
)


def test_the_paragraph_is_long_and_within_the_bounds() -> None:
    assert 1900 <= len(PARAGRAPH) <= 2200 < QUERY_MAX_CHARS


#: Past each bound: characters (4,000 + 5) and word tokens (1,001 two-letter words, 3,003
#: characters: under the character bound).
OVER_CHARS = "free " * (QUERY_MAX_CHARS // 5 + 1)
OVER_TOKENS = "ab " * (QUERY_MAX_TOKENS + 1)


# ----- CLI ---------------------------------------------------------------------------------------


def test_cli_answers_a_2000_character_paragraph_with_results(indexed_home) -> None:
    proc = run_cli(indexed_home, "search", PARAGRAPH, "--json", "--limit", "5")
    assert proc.returncode == 0, proc.stderr[-2000:]
    body = json.loads(proc.stdout)
    assert body["query"] == PARAGRAPH
    assert 1 <= len(body["candidates"]) <= 5 and body["errors"] == []


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        (OVER_CHARS, f"query is 4,005 characters; the maximum is {QUERY_MAX_CHARS:,}"),
        (OVER_TOKENS, f"query is 1,001 word tokens; the maximum is {QUERY_MAX_TOKENS:,}"),
    ],
    ids=["characters", "tokens"],
)
def test_cli_refuses_a_query_past_the_bound_with_exit_2_and_one_line(
    query, reason, capsys, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("AGENTIC_SEARCH_HOME", str(tmp_path))
    with pytest.raises(SystemExit) as exc:
        main(["search", query])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert reason in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "edge").exists(), "refused before opening the store"


# ----- serve (the same server `agentic-search serve` starts) --------------------------------------


def _post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(
        f"{url}/search",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_serve_answers_a_2000_character_paragraph_and_refuses_past_the_bound(
    wired_runtime,
) -> None:
    with serving() as url:
        status, body = _post(url, {"query": PARAGRAPH, "limit": 5})
        assert status == 200, body
        assert 1 <= len(body["candidates"]) <= 5 and body["errors"] == []
        for query in (OVER_CHARS, OVER_TOKENS):
            status, body = _post(url, {"query": query})
            assert status == 422, body
            assert [d["field"] for d in body["detail"]] == ["query"]
            assert "\n" not in body["message"] and "query" in body["message"]


# ----- the deployed API handler (SearchApiFunction) -----------------------------------------------


def _invoke(handlers, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    event = load_event("search_api/post_search.json")
    event["body"] = json.dumps(body)
    event["isBase64Encoded"] = False
    out = handlers["search_api"].handler(event, LocalContext(aws_request_id="long-query"))
    return out["statusCode"], json.loads(out["body"])


def test_api_handler_answers_a_2000_character_paragraph_and_refuses_past_the_bound(
    wired_runtime, handlers
) -> None:
    status, body = _invoke(handlers, {"query": PARAGRAPH, "limit": 5})
    assert status == 200, body
    assert body["query"] == PARAGRAPH and 1 <= len(body["candidates"]) <= 5
    for query in (OVER_CHARS, OVER_TOKENS):
        status, body = _invoke(handlers, {"query": query})
        assert status == 422, body
        assert [d["field"] for d in body["detail"]] == ["query"]
        assert any("maximum" in d["message"] for d in body["detail"])
