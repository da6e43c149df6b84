"""FuseRerank state: fuse the Map's results, relax, rerank, select evidence."""

from agentic_search.dependencies import Dependencies
from agentic_search.pipeline.fuse_rerank import fuse_rerank
from agentic_search.wire import SearchState
from agentic_search_lambda.handlers import step_handler
from agentic_search_lambda.observability import count


@step_handler
def handler(state: SearchState, deps: Dependencies) -> SearchState:
    count("RoundsFused")
    return fuse_rerank(state, deps)
