"""GradeRound state: coverage grading and the stopping decision."""

from agentic_search.dependencies import Dependencies
from agentic_search.pipeline.grade_round import grade_round
from agentic_search.wire import SearchState
from agentic_search_lambda.handlers import step_handler
from agentic_search_lambda.observability import count


@step_handler
def handler(state: SearchState, deps: Dependencies) -> SearchState:
    count("RoundsGraded")
    return grade_round(state, deps)
