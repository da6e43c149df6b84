"""``agentic-search serve``'s callers over real HTTP (in-process server, real Edge and MiniLM):
its token table gives each bearer token its principals, an unknown token is a 401, a request
without one reads only public records, the CLI's principals header counts only with serve's
own token, and two callers alternating one query are never served each other's cached answer."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from support.access import access_yaml, tools_records, with_access
from support.lambdas import use_runtime

from agentic_search.config import Settings
from agentic_search.pipeline.runner import LocalRunner
from agentic_search.service import SearchService
from agentic_search_cli.local_server import attach, serving
from agentic_search_cli.serve_access import ServeAccess
from agentic_search_cli.serve_link import PRINCIPALS_HEADER, TOKEN_HEADER
from agentic_search_lambda.orchestrators import LocalOrchestrator
from agentic_search_lambda.runtime import Runtime
from agentic_search_lambda.settings import LambdaSettings

ENG = "eng-token-0123456789"
BOB = "bob-token-0123456789"
LOCAL = "serve-info-token"


@pytest.fixture()
def served(tmp_path, embedder) -> Iterator[tuple[str, dict[str, set[str]]]]:
    """(the server's URL, the ids each caller may read)."""
    records = tools_records()[:8]
    ids = [r["id"] for r in records]
    acls = {ids[0]: ["eng"], ids[1]: ["eng"], ids[2]: ["u-bob"]}
    yaml = access_yaml(tmp_path / "acltools.yaml", "public")
    settings = Settings(
        agentic_search_home=tmp_path / "home", cache_backend="sqlite", domain_files=[yaml]
    )
    service = SearchService.create(settings, str(yaml), embedder=embedder)
    service.ingest_records(with_access(records, acls))
    runner = LocalRunner(lambda _: service.deps, 2)
    rt = Runtime(
        settings,
        LambdaSettings(),
        deps=lambda _: service.deps,
        orchestrator=LocalOrchestrator(runner),
    )
    public = set(ids[3:])
    readers = {"eng": public | set(ids[:2]), "bob": public | {ids[2]}, "anonymous": public}
    with use_runtime(rt), serving() as url:
        attach(None, None, ServeAccess({ENG: ["eng"], BOB: ["u-bob"]}, True, LOCAL))
        try:
            yield url, readers
        finally:
            attach()
            runner.close()
            service.close()


def _search(url: str, headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    body = json.dumps({"query": "code editor", "domain": "acltools", "limit": 5}).encode()
    req = urllib.request.Request(
        f"{url}/search", data=body, headers={"content-type": "application/json", **headers}
    )
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _ids(answer: dict[str, Any]) -> set[str]:
    return {c["id"] for c in answer["candidates"]}


def test_tokens_give_principals_and_nothing_else_does(served):
    url, readers = served
    status, eng = _search(url, {"authorization": f"Bearer {ENG}"})
    assert status == 200 and _ids(eng) <= readers["eng"] and _ids(eng) - readers["anonymous"]
    status, bad = _search(url, {"authorization": "Bearer not-a-token"})
    assert status == 401 and "token table" in bad["message"]
    status, anonymous = _search(url, {})
    assert status == 200 and _ids(anonymous) <= readers["anonymous"]
    # the CLI's header: only with serve's own token
    claimed = {PRINCIPALS_HEADER: json.dumps(["eng"])}
    assert _ids(_search(url, claimed)[1]) <= readers["anonymous"]
    local = _search(url, {**claimed, TOKEN_HEADER: LOCAL})[1]
    assert _ids(local) == _ids(eng)


def test_two_token_callers_alternating_are_never_served_each_other(served):
    url, readers = served
    tokens = {"eng": ENG, "bob": BOB}
    first: dict[str, set[str]] = {}
    for i in range(100):
        who = "eng" if i % 2 == 0 else "bob"
        status, answer = _search(url, {"authorization": f"Bearer {tokens[who]}"})
        assert status == 200
        assert _ids(answer) <= readers[who]
        assert first.setdefault(who, _ids(answer)) == _ids(answer)
    assert first["eng"] != first["bob"]


def test_mcp_record_tools_answer_an_unreadable_id_as_a_missing_one(served):
    from mcp.server.mcpserver.exceptions import ToolError

    from agentic_search.wire import Caller
    from agentic_search_lambda import mcp_tools

    _, readers = served
    mine, theirs = (
        sorted(readers["eng"] - readers["anonymous"])[0],
        sorted(readers["bob"] - readers["anonymous"])[0],
    )
    mcp_tools.set_caller(Caller.of(["eng"]))
    try:
        assert set(mcp_tools.records("acltools", [mine, theirs])) == {mine}
        missing = mcp_tools._missing("acltools", [theirs], {})
        unknown = mcp_tools._missing("acltools", ["no-such-record"], {})
        assert isinstance(missing, ToolError) and isinstance(unknown, ToolError)
        assert str(missing).replace(theirs, "X") == str(unknown).replace("no-such-record", "X")
        mcp_tools.set_caller(Caller())
        assert mcp_tools.records("acltools", [mine, theirs]) == {}
    finally:
        mcp_tools.set_caller(Caller())
