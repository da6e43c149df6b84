"""The Lambda side of the tests: handler modules loaded from ``functions/<dir>/app.py`` (what
the Lambda runtime imports), the events of ``events/``, and the container runtime pointed at
a test's deps (:func:`use_runtime`, through the runtime's one injection point)."""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import json
import os
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

from support.paths import EVENTS, FUNCTIONS

# Before any handler module (and so Powertools' Tracer and Metrics) is imported.
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "1")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "AgenticSearchTest")

#: The search state machine's functions: code directory -> the template's logical id.
STATE_FUNCTIONS = {
    "cache_check": "CacheCheckFunction",
    "extract_intent": "ExtractIntentFunction",
    "plan_query": "PlanQueryFunction",
    "prepare_round": "PrepareRoundFunction",
    "retrieve": "RetrieveFunction",
    "fuse_rerank": "FuseRerankFunction",
    "grade_round": "GradeRoundFunction",
    "finalize": "FinalizeFunction",
    "cache_store": "CacheStoreFunction",
}
#: Every function with events to replay: the state functions, the HTTP API and /mcp.
FUNCTION_IDS = {"search_api": "SearchApiFunction", "mcp_api": "McpFunction", **STATE_FUNCTIONS}

_MODULES: dict[str, ModuleType] = {}


def load_function(directory: str) -> ModuleType:
    """``functions/<directory>/app.py`` as its own module (loaded once per session)."""
    if directory not in _MODULES:
        path = FUNCTIONS / directory / "app.py"
        spec = importlib.util.spec_from_file_location(f"fn_{directory}", path)
        assert spec is not None and spec.loader is not None, path
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _MODULES[directory] = module
    return _MODULES[directory]


def handler(directory: str) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """The handler function of ``functions/<directory>/app.py``."""
    return load_function(directory).handler


def load_event(rel: str) -> dict[str, Any]:
    """A fresh copy of ``events/<rel>``."""
    return copy.deepcopy(json.loads((EVENTS / rel).read_text(encoding="utf-8")))


@contextlib.contextmanager
def use_runtime(rt: Any) -> Iterator[Any]:
    """Make ``rt`` (an :class:`agentic_search_lambda.runtime.Runtime`) the container's runtime
    for the block; the next caller builds its own from the environment again."""
    from agentic_search_lambda import runtime

    runtime.use(rt)
    try:
        yield rt
    finally:
        runtime.use(None)


def runtime_over(service: Any, **kwargs: Any) -> Any:
    """A runtime whose every domain is ``service``'s deps (one Qdrant local client per
    folder: the handlers must share the session's), plus any ``Runtime`` keyword."""
    from agentic_search_lambda.runtime import Runtime

    return Runtime(service.settings, deps=lambda _: service.deps, **kwargs)
