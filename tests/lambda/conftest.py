"""Fixtures for the Lambda handler tests (helpers in lambda_support.py)."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest
from lambda_support import FUNCTION_IDS, load_function, use_steps

from agentic_search.engine import SearchEngine
from agentic_search.pipeline.runner import EngineRegistry, LocalRunner
from agentic_search.pipeline.steps import SearchSteps


@pytest.fixture(scope="session")
def handlers() -> dict[str, ModuleType]:
    """Every function's handler module, by code directory."""
    return {d: load_function(d) for d in FUNCTION_IDS}


@pytest.fixture()
def wired_steps(
    tools_engine: SearchEngine,
    handlers: dict[str, ModuleType],
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[SearchSteps]:
    """The handlers' step functions over the session engine (its cache: CACHE_BACKEND=none);
    the API searches through a local runner over the same steps."""
    from agentic_search_lambda import api

    monkeypatch.setenv("AGENTIC_SEARCH_HOME", str(tools_engine.settings.agentic_search_home))
    registry = EngineRegistry(tools_engine.settings)
    registry.add(tools_engine)
    steps = SearchSteps(registry)
    use_steps(steps, handlers, monkeypatch)
    runner = LocalRunner(steps, 4)
    api.set_orchestrator(api.LocalOrchestrator(runner))
    yield steps
    api.set_orchestrator(None)
    runner.close()
