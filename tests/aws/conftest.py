"""The Lambda handlers of the search state machine over the session's service."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest
from support.lambdas import FUNCTION_IDS, load_function, runtime_over, use_runtime

from agentic_search.pipeline.runner import LocalRunner
from agentic_search_lambda.orchestrators import LocalOrchestrator


@pytest.fixture(scope="session")
def handlers() -> dict[str, ModuleType]:
    """Every function's handler module, by code directory."""
    return {d: load_function(d) for d in FUNCTION_IDS}


@pytest.fixture()
def wired_runtime(tools_engine, handlers: dict[str, ModuleType]) -> Iterator:
    """The container runtime over the session service (its cache: CACHE_BACKEND=none); the
    API searches through a local runner over the same deps."""
    runner = LocalRunner(lambda _: tools_engine.deps, 4)
    rt = runtime_over(tools_engine, orchestrator=LocalOrchestrator(runner))
    with use_runtime(rt):
        yield rt
    runner.close()
