"""Retrieve (one Map item): run one sub-query's source; a failing source is in the result."""

from agentic_search.dependencies import Dependencies
from agentic_search.pipeline.retrieve import retrieve
from agentic_search.wire import RetrievedList, RetrieveEvent
from agentic_search_lambda.handlers import step_handler
from agentic_search_lambda.observability import count


@step_handler(model=RetrieveEvent)
def handler(event: RetrieveEvent, deps: Dependencies) -> RetrievedList:
    result = retrieve(event, deps)
    count("SourceErrors" if result.error is not None else "SourceQueries")
    return result
