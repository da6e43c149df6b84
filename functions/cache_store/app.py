"""CacheStore state: keep the response in the result cache."""

from agentic_search.dependencies import Dependencies
from agentic_search.pipeline.cache import cache_store
from agentic_search.wire import SearchState
from agentic_search_lambda.handlers import step_handler
from agentic_search_lambda.observability import count


@step_handler
def handler(state: SearchState, deps: Dependencies) -> SearchState:
    count("CacheStores")
    return cache_store(state, deps)
