"""A live ``serve`` server on a loopback port over the session engine (the same server the
``serve`` command starts, in a thread of this process, so no second Qdrant client opens the
session's folder)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from agentic_search.runner import LocalRunner
from agentic_search_lambda import api
from agentic_search_lambda.local_server import make_server


@pytest.fixture(scope="module")
def live_url(tools_engine) -> Iterator[str]:
    runner = LocalRunner.for_engine(tools_engine)
    api.set_orchestrator(api.LocalOrchestrator(runner))
    server = make_server("127.0.0.1", 0)
    host, port = server.server_address[:2]
    thread = threading.Thread(target=server.serve_forever, name="serve", daemon=True)
    thread.start()
    yield f"http://{host}:{port}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)
    api.set_orchestrator(None)
    runner.close()
