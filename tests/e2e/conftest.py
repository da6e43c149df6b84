"""The Lambda handlers over the session's service, and a live serve server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from support.homes import copy_home
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


@pytest.fixture(scope="module")
def live_url(tools_engine) -> Iterator[str]:
    """A live ``serve`` server on a loopback port over the session service (the same server
    the ``serve`` command starts, in a thread of this process, so no second Qdrant client
    opens the session's folder)."""
    from agentic_search_cli.local_server import serving

    runner = LocalRunner(lambda _: tools_engine.deps)
    rt = runtime_over(tools_engine, orchestrator=LocalOrchestrator(runner))
    with use_runtime(rt), serving() as url:
        yield url
    runner.close()


@pytest.fixture()
def indexed_home(tools_engine, tmp_path) -> Path:
    """A copy of the session's indexed folder (bundled catalog) for a CLI subprocess: the
    subprocess opens its own store, never the session's (which this process holds open)."""
    home = tmp_path / "home"
    return copy_home(Path(tools_engine.deps.settings.agentic_search_home), home)
