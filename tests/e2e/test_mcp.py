"""The MCP server (issue 45) through the official Python SDK's own clients: in memory against
the server object, over stdio against ``agentic-search mcp`` (what a desktop client launches),
and over streamable HTTP against ``serve``'s ``/mcp``. What it answers is checked against the
HTTP API on the same index: the same candidates, the same one-line reasons for the same bad
arguments, the same domains; records and comparisons against the bundled catalog's own file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator
from mcp import Client, StdioServerParameters
from support.cli import serving_process

from agentic_search.logic.comparison import compare as compare_records
from agentic_search.logic.schema import load_schema
from agentic_search.wire import INTERNAL_KEYS
from agentic_search_cli.local_events import LocalContext, http_api_event
from agentic_search_lambda.mcp_tools import build_server

QUERY = "free code editor"


def in_memory(body: Callable[[Client], Awaitable[Any]], **kwargs: Any) -> Any:
    """Run ``body`` with the SDK's in-memory client connected to the server."""

    async def run() -> Any:
        async with Client(build_server(), **kwargs) as client:
            return await body(client)

    return anyio.run(run)


def http_api(handlers: dict, method: str, path: str, body: dict | None = None) -> dict:
    """SearchApiFunction's answer to one request (status, parsed JSON body)."""
    raw = json.dumps(body).encode() if body is not None else b""
    event = http_api_event(method, path, {"content-type": "application/json"}, raw)
    out = handlers["search_api"].handler(event, LocalContext(aws_request_id="compare"))
    return {"status": out["statusCode"], "body": json.loads(out["body"])}


def untimed(value: Any) -> Any:
    """``value`` without its clock readings (keys ending in ``Ms``: they differ run to run)."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if not k.lower().endswith("ms")}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def schemas(tools: Any) -> dict[str, dict]:
    return {t.name: t.output_schema for t in tools.tools}


def test_the_tools_are_read_only_with_schemas_and_each_domain_has_two_resources(wired_runtime):
    async def body(client: Client) -> Any:
        return await client.list_tools(), await client.list_resources()

    tools, resources = in_memory(body, mode="legacy")  # JSON-RPC over in-memory streams
    assert [t.name for t in tools.tools] == [
        "search",
        "explain",
        "get_record",
        "compare",
        "list_domains",
    ]
    for tool in tools.tools:
        assert (
            tool.annotations.read_only_hint is True and tool.annotations.destructive_hint is False
        )
        assert tool.description and tool.output_schema, tool.name
        Draft202012Validator.check_schema(tool.input_schema)
        Draft202012Validator.check_schema(tool.output_schema)
    assert sorted(str(r.uri) for r in resources.resources) == [
        f"agentic-search://domains/{d}/{kind}"
        for d in ("documents", "tools")
        for kind in ("schema", "vocabularies")
    ]


def test_search_answers_the_http_apis_candidates_in_its_advertised_schema(wired_runtime, handlers):
    async def body(client: Client) -> Any:
        tools = await client.list_tools()
        return tools, await client.call_tool("search", {"query": QUERY, "limit": 5})

    tools, result = in_memory(body)
    assert result.is_error is False
    Draft202012Validator(schemas(tools)["search"]).validate(result.structured_content)
    api = http_api(handlers, "POST", "/search", {"query": QUERY, "limit": 5})
    assert api["status"] == 200
    got = result.structured_content["candidates"]
    assert [c["id"] for c in got] == [c["id"] for c in api["body"]["candidates"]]
    assert [c["provenance"] for c in got] == [c["provenance"] for c in api["body"]["candidates"]]


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"query": QUERY, "limit": 500}, "limit"),
        ({"query": ""}, "query"),
        ({"query": QUERY, "domain": "recipes"}, "domain"),
        ({"query": QUERY, "drop": ["sort:price"]}, "drop"),
        ({"query": QUERY, "rounds": 9}, "rounds"),
        (
            {"query": QUERY, "filters": [{"field": "colour", "operator": "eq", "value": 1}]},
            "filters",
        ),
        (
            {"query": QUERY, "filters": [{"field": "category", "operator": "eq", "value": "Nope"}]},
            "filters",
        ),
        (
            {"query": QUERY, "filters": [{"field": "released", "operator": "near", "value": 1}]},
            "filters.operator",
        ),
    ],
)
def test_a_bad_argument_is_a_tool_error_naming_the_field_as_the_http_api_does(
    wired_runtime, handlers, arguments, field
):
    result = in_memory(lambda client: client.call_tool("search", arguments))
    assert result.is_error is True and result.structured_content is None
    [text] = [c.text for c in result.content]
    api = http_api(handlers, "POST", "/search", arguments)
    assert api["status"] == 422
    [problem] = api["body"]["detail"]
    assert problem["field"] == field
    assert text == f"invalid field(s): {field} ({problem['message']})"
    assert "\n" not in text


def test_added_filters_constrain_the_search_as_they_do_post_search(
    wired_runtime, handlers, catalog_by_id
):
    open_source = [{"field": "open_source", "operator": "eq", "value": True}]
    arguments = {"query": QUERY, "limit": 8, "filters": open_source}

    async def body(client: Client) -> Any:
        plain = await client.call_tool("search", {"query": QUERY, "limit": 8})
        return plain, await client.call_tool("search", arguments)

    plain, filtered = in_memory(body)
    assert filtered.is_error is False
    ids = [c["id"] for c in filtered.structured_content["candidates"]]
    assert ids and all(catalog_by_id[i]["open_source"] is True for i in ids)
    # without the filter the same query finds closed tools too (the filter did the work)
    assert any(
        not catalog_by_id[c["id"]]["open_source"] for c in plain.structured_content["candidates"]
    )
    for c in filtered.structured_content["candidates"]:
        assert "open_source=True" in c["provenance"]["filtersApplied"], c["id"]
    api = http_api(handlers, "POST", "/search", arguments)
    assert api["status"] == 200
    assert ids == [c["id"] for c in api["body"]["candidates"]]


def test_history_reads_a_follow_up_as_post_search_does_and_explain_says_how(
    wired_runtime, handlers
):
    history = [{"query": "AI code completion tools", "ids": ["augment-code", "cursor", "tabby"]}]
    args = {"query": "more like the second one", "limit": 5, "history": history}

    async def body(client: Client) -> Any:
        tools = await client.list_tools()
        return (
            tools,
            await client.call_tool("search", args),
            await client.call_tool("explain", args),
            await client.call_tool("search", {**args, "history": history * 11}),
        )

    tools, found, explained, bad = in_memory(body)
    assert found.is_error is False and explained.is_error is False
    Draft202012Validator(schemas(tools)["search"]).validate(found.structured_content)
    Draft202012Validator(schemas(tools)["explain"]).validate(explained.structured_content)
    api = http_api(handlers, "POST", "/search", args)
    assert [c["id"] for c in found.structured_content["candidates"]] == [
        c["id"] for c in api["body"]["candidates"]
    ]
    assert found.structured_content["followUp"]["kind"] == "reference"
    up = explained.structured_content["intent"]["followUp"]
    assert up == api["body"]["intent"]["followUp"] and up["turn"] == 1
    assert explained.structured_content["intent"]["referenceTool"] == "cursor"
    assert bad.is_error is True
    assert bad.content[0].text.startswith("invalid field(s): history")


def test_get_record_gives_the_catalogs_fields_without_index_bookkeeping(
    wired_runtime, catalog_by_id
):
    result = in_memory(lambda client: client.call_tool("get_record", {"id": "cursor"}))
    assert result.is_error is False
    record = result.structured_content["record"]
    for key, value in catalog_by_id["cursor"].items():
        assert record[key] == value, key
    assert not set(record) & INTERNAL_KEYS
    missing = in_memory(lambda client: client.call_tool("get_record", {"id": "no-such-tool"}))
    assert missing.is_error is True
    assert missing.content[0].text == (
        "no record 'no-such-tool' in domain 'tools' (search for its id first)"
    )


def test_compare_sets_two_to_five_catalog_records_side_by_side(wired_runtime, catalog_by_id):
    ids = ["cursor", "windsurf", "github-copilot"]
    result = in_memory(lambda client: client.call_tool("compare", {"ids": ids}))
    assert result.is_error is False
    expected = compare_records(load_schema("tools"), ids, catalog_by_id)
    assert expected is not None
    assert result.structured_content == expected.wire()
    assert [r["id"] for r in result.structured_content["records"]] == ids
    one = in_memory(lambda client: client.call_tool("compare", {"ids": ["cursor"]}))
    assert one.is_error is True and one.content[0].text.startswith("invalid field(s): ids (")
    absent = in_memory(lambda client: client.call_tool("compare", {"ids": ["cursor", "nope"]}))
    assert absent.is_error is True and "no record 'nope'" in absent.content[0].text


def test_explain_says_how_a_comparison_was_read_and_why_each_result(wired_runtime, handlers):
    async def body(client: Client) -> Any:
        tools = await client.list_tools()
        return tools, await client.call_tool("explain", {"query": "Cursor vs Windsurf"})

    tools, result = in_memory(body)
    assert result.is_error is False
    explanation = result.structured_content
    Draft202012Validator(schemas(tools)["explain"]).validate(explanation)
    api = http_api(handlers, "POST", "/search", {"query": "Cursor vs Windsurf"})["body"]
    assert explanation["intent"] == api["intent"] and explanation["plan"] == api["plan"]
    assert explanation["intent"]["primaryGoal"] == "compare"
    assert untimed(explanation["retrievalReport"]) == untimed(api["retrievalReport"])
    assert [r["id"] for r in explanation["results"]] == [c["id"] for c in api["candidates"]]
    assert [r["rank"] for r in explanation["results"]] == list(range(1, len(api["candidates"]) + 1))


def test_list_domains_and_the_resources_say_what_get_domains_and_the_schema_say(
    wired_runtime, handlers
):
    async def body(client: Client) -> Any:
        domains = await client.call_tool("list_domains", {})
        vocab = await client.read_resource("agentic-search://domains/tools/vocabularies")
        schema = await client.read_resource("agentic-search://domains/tools/schema")
        return domains, vocab, schema

    domains, vocab, schema = in_memory(body)
    assert domains.structured_content == http_api(handlers, "GET", "/domains")["body"]
    tools = load_schema("tools")
    assert json.loads(vocab.contents[0].text) == tools.vocabularies
    document = json.loads(schema.contents[0].text)
    assert set(document["fields"]) == set(tools.fields)
    assert document["fields"]["price_monthly_usd"]["filter"] == list(
        tools.fields["price_monthly_usd"].filter
    )
    assert "vocabularies" not in document


# ----- stdio: `agentic-search mcp` --------------------------------------------------------------


def _mcp_command(home: Path) -> tuple[list[str], dict[str, str]]:
    env = {**os.environ, "AGENTIC_SEARCH_HOME": str(home), "OMP_WAIT_POLICY": "PASSIVE"}
    return [sys.executable, "-m", "agentic_search_cli.main", "mcp"], env


def _message(method: str, params: dict | None = None, id: int | None = None) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id is not None:
        message["id"] = id
    if params is not None:
        message["params"] = params
    return json.dumps(message) + "\n"


def test_stdio_writes_nothing_but_protocol_messages_to_stdout(indexed_home):
    """GIVEN ``agentic-search mcp`` over an indexed folder WHEN a client initializes, lists
    the tools and searches THEN every stdout line is a JSON-RPC response to it, in order, and
    what the server says for people goes to stderr."""
    argv, env = _mcp_command(indexed_home)
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    stderr: list[str] = []
    drain = threading.Thread(target=lambda: stderr.extend(proc.stderr), daemon=True)
    drain.start()
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    }
    lines = []
    try:
        proc.stdin.write(_message("initialize", init, id=1))
        proc.stdin.flush()
        lines.append(proc.stdout.readline())
        proc.stdin.write(_message("notifications/initialized"))
        proc.stdin.write(_message("tools/list", id=2))
        search = {"name": "search", "arguments": {"query": QUERY, "limit": 3}}
        proc.stdin.write(_message("tools/call", search, id=3))
        proc.stdin.flush()
        lines += [proc.stdout.readline(), proc.stdout.readline()]
        proc.stdin.close()  # the client leaves: the server ends
        rest = proc.stdout.read()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    drain.join(timeout=10)
    messages = [json.loads(line) for line in lines]
    assert [m["id"] for m in messages] == [1, 2, 3] and rest == ""
    assert all(m["jsonrpc"] == "2.0" and "result" in m for m in messages), messages
    assert messages[0]["result"]["serverInfo"]["name"] == "agentic-search"
    assert len(messages[1]["result"]["tools"]) == 5
    found = messages[2]["result"]["structuredContent"]["candidates"]
    assert 1 <= len(found) <= 3
    assert any("MCP server on stdio" in line for line in stderr), stderr


def test_the_sdks_stdio_client_launches_it_as_a_desktop_client_does(indexed_home):
    argv, env = _mcp_command(indexed_home)
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)

    async def run() -> Any:
        async with Client(params, mode="legacy") as client:  # the initialize handshake
            tools = await client.list_tools()
            result = await client.call_tool("search", {"query": QUERY, "limit": 3})
            return client.server_info, tools, result

    info, tools, result = anyio.run(run)
    assert info.name == "agentic-search"
    assert result.is_error is False
    Draft202012Validator(schemas(tools)["search"]).validate(result.structured_content)


# ----- streamable HTTP: serve's /mcp ------------------------------------------------------------


def test_serve_answers_mcp_over_http_and_refuses_a_foreign_host(indexed_home):
    """GIVEN ``agentic-search serve`` on loopback WHEN the SDK's streamable HTTP client
    lists the tools and searches (handshake, then the stateless protocol) THEN both work
    through the workers; a request naming another Host (DNS rebinding) is refused."""
    with serving_process(indexed_home, "--workers", "1") as (_proc, base):

        async def run(mode: str) -> Any:
            async with Client(f"{base}/mcp", mode=mode) as client:
                tools = await client.list_tools()
                return tools, await client.call_tool("search", {"query": QUERY, "limit": 3})

        for mode in ("legacy", "auto"):
            tools, result = anyio.run(run, mode)
            assert len(tools.tools) == 5, mode
            assert result.is_error is False, mode
            Draft202012Validator(schemas(tools)["search"]).validate(result.structured_content)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
        request = urllib.request.Request(
            f"{base}/mcp",
            data=body,
            headers={
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
                "host": "attacker.example",
            },
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 421


def test_a_get_of_mcp_is_a_405_not_a_stream_held_open(wired_runtime):
    # the TypeScript SDK opens a GET stream after initialize; held open it would keep a Lambda
    # invocation (or serve's one in-process search slot) until its timeout
    from agentic_search_lambda.mcp_http import handler

    event = http_api_event("GET", "/mcp", {"accept": "text/event-stream"}, b"")
    out = handler(event, LocalContext(aws_request_id="get"))
    assert out["statusCode"] == 405 and out["headers"]["Allow"] == "POST"
    assert json.loads(out["body"]) == {"error": "MethodNotAllowed", "message": "GET /mcp: use POST"}
