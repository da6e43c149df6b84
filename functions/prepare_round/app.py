"""PrepareRound state: the next round's sub-queries (one per source); the Map's Retrieve
results are added to its output next (``before_map``: room is kept for them)."""

from agentic_search.dependencies import Dependencies
from agentic_search.pipeline.prepare_round import prepare_round
from agentic_search.wire import SearchState
from agentic_search_lambda.handlers import step_handler
from agentic_search_lambda.observability import count


@step_handler(before_map=True)
def handler(state: SearchState, deps: Dependencies) -> SearchState:
    count("RoundsPrepared")
    return prepare_round(state, deps)
