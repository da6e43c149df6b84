"""The search state machine's functions by name, and its definition: what the ASL's Tasks call.

``statemachine/search.asl.json`` (in this package) is the one description of the search graph.
Each Task invokes a function (the template's ``DefinitionSubstitutions`` map ``${XFunctionArn}``
to ``XFunction``); :data:`FUNCTIONS` maps that function to its step, ``step(state, deps)
-> state`` over :class:`~agentic_search.wire.SearchState` (RetrieveFunction: ``retrieve(event,
deps) -> RetrievedList``). The Lambda handlers, the local runner (which interprets the ASL) and
the tests call the same functions. A failed step is just an exception: the fields a Catch adds
(``intentError``, ``fuseError``, ...) are plain inputs the next step reads. The contract, with
the state's shape and each Catch, is ``docs/state-machine.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from agentic_search.dependencies import Dependencies
from agentic_search.pipeline import asl
from agentic_search.pipeline.cache import cache_check, cache_store
from agentic_search.pipeline.extract_intent import extract_intent
from agentic_search.pipeline.finalize import finalize
from agentic_search.pipeline.fuse_rerank import fuse_rerank
from agentic_search.pipeline.grade_round import grade_round
from agentic_search.pipeline.plan_query import plan_query
from agentic_search.pipeline.prepare_round import prepare_round
from agentic_search.pipeline.retrieve import retrieve
from agentic_search.wire import RetrieveEvent, SearchState

Step = Callable[[SearchState, Dependencies], SearchState]

#: The search state machine's definition (Step Functions deploys this file: template.yaml).
SEARCH_ASL = Path(__file__).resolve().parent.parent / "statemachine" / "search.asl.json"

#: Function (template logical id) -> its step. RetrieveFunction runs one Map item.
FUNCTIONS: dict[str, Callable[[Any, Dependencies], Any]] = {
    "CacheCheckFunction": cache_check,
    "ExtractIntentFunction": extract_intent,
    "PlanQueryFunction": plan_query,
    "PrepareRoundFunction": prepare_round,
    "RetrieveFunction": retrieve,
    "FuseRerankFunction": fuse_rerank,
    "GradeRoundFunction": grade_round,
    "FinalizeFunction": finalize,
    "CacheStoreFunction": cache_store,
}


@cache
def search_definition() -> dict[str, Any]:
    """The search ASL, loaded and checked once (:func:`agentic_search.pipeline.asl.load`).

    Raises:
        ASLError: for a definition outside the subset the local interpreter runs.
    """
    return asl.load(SEARCH_ASL)


def task_states() -> dict[str, str]:
    """Every Task state of the search ASL (the Map's included) -> the function it invokes."""
    out: dict[str, str] = {}

    def collect(machine: dict[str, Any]) -> None:
        for name, state in machine["States"].items():
            fn = asl.function_of(state)
            if fn is not None:
                out[name] = fn
            processor = state.get("ItemProcessor") or state.get("Iterator")
            if processor is not None:
                collect(processor)

    collect(search_definition())
    return out


def state_step(name: str) -> Step:
    """The step ASL Task state ``name`` runs (``ExtractIntentRules`` runs ExtractIntent's).

    Raises:
        KeyError: for a state that is not a Task of the search ASL.
    """
    return FUNCTIONS[task_states()[name]]


def invoke(step: str, event: dict[str, Any], deps: Callable[[str], Dependencies]) -> dict[str, Any]:
    """Run ASL Task state ``step`` on a JSON event and return the JSON result, as its Lambda
    function would; ``deps`` gives the domain's dependencies.

    Raises:
        KeyError: for an unknown state.
        pydantic.ValidationError: for an event that does not parse.
    """
    return call_function(task_states()[step], event, deps)


def call_function(
    function: str, event: dict[str, Any], deps: Callable[[str], Dependencies]
) -> dict[str, Any]:
    """Run ``function`` (template logical id) on a JSON event; the JSON result.

    Raises:
        KeyError: for an unknown function.
        pydantic.ValidationError: for an event that does not parse.
    """
    fn = FUNCTIONS[function]
    if function == "RetrieveFunction":
        item = RetrieveEvent.model_validate(event)
        return fn(item, deps(item.domain)).wire()
    state = SearchState.model_validate(event)
    return fn(state, deps(state.request.domain)).wire()


__all__ = [
    "FUNCTIONS",
    "SEARCH_ASL",
    "Step",
    "call_function",
    "invoke",
    "search_definition",
    "state_step",
    "task_states",
]
