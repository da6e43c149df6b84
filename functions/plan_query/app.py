"""PlanQuery and PlanQueryRules state: the query plan and the executor's gate."""

from agentic_search.dependencies import Dependencies
from agentic_search.pipeline.plan_query import plan_query
from agentic_search.wire import SearchState
from agentic_search_lambda.handlers import step_handler
from agentic_search_lambda.observability import count


@step_handler
def handler(state: SearchState, deps: Dependencies) -> SearchState:
    count("PlanFallbacks" if state.plan_error else "Plans")
    state = plan_query(state, deps)
    if state.planner is not None and state.planner.fallback:
        count("LlmPlanFallbacks")
    return state
