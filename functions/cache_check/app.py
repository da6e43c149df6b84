"""CacheCheck state: look the request up in the result cache (a hit skips to Finalize)."""

from agentic_search.dependencies import Dependencies
from agentic_search.pipeline.cache import cache_check
from agentic_search.wire import SearchState
from agentic_search_lambda.handlers import step_handler
from agentic_search_lambda.observability import count


@step_handler
def handler(state: SearchState, deps: Dependencies) -> SearchState:
    state = cache_check(state, deps)
    count("CacheHits" if state.cache is not None and state.cache.hit else "CacheMisses")
    return state
