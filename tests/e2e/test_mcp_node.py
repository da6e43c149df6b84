"""The MCP server against a client nobody here wrote: the official TypeScript SDK
(``@modelcontextprotocol/sdk``, pinned in ``tests/e2e/mcp_node/package-lock.json``), whose
``client.mjs`` lists the tools, calls ``search``, validates the structured result against the
advertised output schema with Ajv and asks for an unknown domain; over stdio (launching
``agentic-search mcp`` as a desktop client does) and over serve's streamable HTTP ``/mcp``.

Needs node and ``npm ci --prefix tests/e2e/mcp_node`` (``.ci/run`` does it): without them the
tests skip with that hint, and fail under ``CI=true``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CLIENT = Path(__file__).parent / "mcp_node"
QUERY = "free code editor"


@pytest.fixture(scope="module")
def node() -> str:
    """The node binary, with the client's pinned modules installed."""
    found = shutil.which("node")
    installed = (CLIENT / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir()
    if found and installed:
        return found
    hint = (
        "no node on PATH"
        if not found
        else "the TypeScript MCP client is not installed: npm ci --prefix tests/e2e/mcp_node"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(hint)
    pytest.skip(hint)


def run_client(node: str, *target: str, home: Path | None = None) -> dict:
    env = {**os.environ, "MCP_QUERY": QUERY, "OMP_WAIT_POLICY": "PASSIVE"}
    if home is not None:
        env["AGENTIC_SEARCH_HOME"] = str(home)
    done = subprocess.run(
        [node, str(CLIENT / "client.mjs"), *target],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def check(seen: dict, expected_ids: list[str]) -> None:
    assert seen["server"]["name"] == "agentic-search"
    assert [t["name"] for t in seen["tools"]] == [
        "search",
        "explain",
        "get_record",
        "compare",
        "list_domains",
    ]
    assert all(t["readOnly"] for t in seen["tools"])
    assert seen["valid"] is True  # Ajv: structuredContent matches the advertised outputSchema
    assert seen["ids"] == expected_ids
    assert seen["unknownDomain"] == {
        "isError": True,
        "text": "invalid field(s): domain (unknown domain 'nope' (known: documents, tools))",
    }


def test_the_typescript_sdk_launches_agentic_search_mcp_over_stdio(
    node, indexed_home, tools_engine
):
    seen = run_client(
        node, sys.executable, "-m", "agentic_search_cli.main", "mcp", home=indexed_home
    )
    check(seen, [c.id for c in tools_engine.search(QUERY, limit=3).output.candidates])


def test_the_typescript_sdk_talks_to_serves_mcp_over_streamable_http(node, live_url, tools_engine):
    seen = run_client(node, f"{live_url}/mcp")
    check(seen, [c.id for c in tools_engine.search(QUERY, limit=3).output.candidates])
