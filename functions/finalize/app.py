"""Finalize state: final ranking, candidates with provenance, evidence pack."""

from agentic_search.dependencies import Dependencies
from agentic_search.pipeline.finalize import finalize
from agentic_search.wire import SearchState
from agentic_search_lambda.handlers import step_handler
from agentic_search_lambda.observability import count


@step_handler
def handler(state: SearchState, deps: Dependencies) -> SearchState:
    state = finalize(state, deps)
    count("PartialResults" if state.response and state.response.get("errors") else "Answers")
    return state
