"""The Lambda side of the tests: handler modules loaded from ``functions/<dir>/app.py`` (what
the Lambda runtime imports), the events of ``events/``, and the container runtime pointed at
a test's deps (:func:`use_runtime`, through the runtime's one injection point)."""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import json
import os
import threading
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

#: One handler invocation at a time in this process. Lambda gives each concurrent invocation
#: its own execution environment, so a function's module globals (Powertools' one Metrics
#: set, the runtime) never see two requests at once; moto runs a Map's items in threads of
#: the test process instead, and two handlers flushing the shared metric set together raced
#: (one flushed both sets, the other found none: ``SchemaValidationError``). The Map's items
#: still run concurrently around their invocations, in any order.
_ONE_ENVIRONMENT = threading.Lock()


def invoke_serialized(
    fn: Callable[[dict[str, Any], Any], dict[str, Any]], event: Any, context: Any
) -> dict[str, Any]:
    """``fn(event, context)`` as one Lambda execution environment runs it: never alongside
    another invocation in this process (see ``_ONE_ENVIRONMENT``). Raises what ``fn`` raises."""
    with _ONE_ENVIRONMENT:
        return fn(event, context)


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
