"""The search state machine's states by name: the one table from an ASL state to its step.

Every step is ``step(state, components) -> state`` over :class:`~agentic_search.state.SearchState`
(Retrieve: ``retrieve(event, components) -> RetrievedList``); the Lambda handlers, the local
runner and the tests call the same functions. A failed step is just an exception: the fields a
Catch adds (``intentError``, ``fuseError``, ...) are plain inputs the next step reads. The
contract, with the state's shape and each Catch, is ``docs/state-machine.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentic_search.components import Components
from agentic_search.pipeline.cache import cache_check, cache_store
from agentic_search.pipeline.extract_intent import extract_intent
from agentic_search.pipeline.finalize import finalize
from agentic_search.pipeline.fuse_rerank import fuse_rerank
from agentic_search.pipeline.grade_round import grade_round
from agentic_search.pipeline.plan_query import plan_query
from agentic_search.pipeline.prepare_round import prepare_round
from agentic_search.pipeline.retrieve import retrieve
from agentic_search.state import RetrieveEvent, SearchState

Step = Callable[[SearchState, Components], SearchState]

#: ASL state name -> step (the ``*Rules`` states run the same step with the Catch's error set).
STATES: dict[str, Step] = {
    "CacheCheck": cache_check,
    "ExtractIntent": extract_intent,
    "ExtractIntentRules": extract_intent,
    "PlanQuery": plan_query,
    "PlanQueryRules": plan_query,
    "PrepareRound": prepare_round,
    "FuseRerank": fuse_rerank,
    "GradeRound": grade_round,
    "Finalize": finalize,
    "CacheStore": cache_store,
}


def invoke(
    step: str, event: dict[str, Any], components: Callable[[str], Components]
) -> dict[str, Any]:
    """Run ASL state ``step`` on a JSON event and return the JSON result; ``components`` gives
    the domain's components.

    Raises:
        KeyError: for an unknown step.
        pydantic.ValidationError: for an event that does not parse.
    """
    if step == "Retrieve":
        item = RetrieveEvent.model_validate(event)
        return retrieve(item, components(item.domain)).wire()
    fn = STATES[step]
    state = SearchState.model_validate(event)
    return fn(state, components(state.request.domain)).wire()


__all__ = ["STATES", "Step", "invoke"]
