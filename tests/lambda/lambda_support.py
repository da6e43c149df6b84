"""Helpers of the Lambda handler tests: the handler modules loaded from functions/<dir>/app.py
(what the Lambda runtime imports), the events of events/, and the wiring to the session engine.

The handlers call ``agentic_search_lambda.runtime.steps()``, which in a container builds its own
engine registry from the environment. Here they share the session engine instead (Qdrant local
mode allows one client per folder, and ingesting again would cost ~15 s): ``wired_steps``
patches the name ``steps`` in each loaded handler module and in ``runtime`` to return
:class:`SearchSteps` over that engine, and points the API at a local runner over the same steps.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from agentic_search.pipeline.steps import SearchSteps

# Before any handler module (and so Powertools' Tracer and Metrics) is imported.
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "1")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "AgenticSearchTest")

REPO = Path(__file__).resolve().parents[2]
EVENTS = REPO / "events"
FUNCTIONS = REPO / "functions"

#: events/<dir> -> the template's logical id of the function that receives them.
FUNCTION_IDS = {
    "search_api": "SearchApiFunction",
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

_MODULES: dict[str, ModuleType] = {}


def load_function(directory: str) -> ModuleType:
    """``functions/<directory>/app.py`` as its own module (loaded once per session)."""
    if directory not in _MODULES:
        path = FUNCTIONS / directory / "app.py"
        spec = importlib.util.spec_from_file_location(f"lambda_replay_fn_{directory}", path)
        assert spec is not None and spec.loader is not None, path
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _MODULES[directory] = module
    return _MODULES[directory]


def load_event(rel: str) -> dict[str, Any]:
    """A fresh copy of ``events/<rel>``."""
    return copy.deepcopy(json.loads((EVENTS / rel).read_text(encoding="utf-8")))


def use_steps(
    steps: SearchSteps, handlers: dict[str, ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Make every handler (and ``runtime.steps``) use ``steps``."""
    from agentic_search_lambda import runtime

    monkeypatch.setattr(runtime, "steps", lambda: steps)
    for module in handlers.values():
        if hasattr(module, "steps"):
            monkeypatch.setattr(module, "steps", lambda: steps)
