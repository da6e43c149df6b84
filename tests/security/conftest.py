"""A live ``serve`` server on a loopback port over the session engine (the same server the
``serve`` command starts, in a thread of this process, so no second Qdrant client opens the
session's folder)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentic_search.pipeline.runner import LocalRunner
from agentic_search_cli.local_server import serving
from agentic_search_lambda import api


@pytest.fixture(scope="module")
def live_url(tools_engine) -> Iterator[str]:
    runner = LocalRunner.for_engine(tools_engine)
    api.set_orchestrator(api.LocalOrchestrator(runner))
    with serving() as url:
        yield url
    api.set_orchestrator(None)
    runner.close()
