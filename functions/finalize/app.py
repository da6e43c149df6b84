"""Finalize state: final ranking, candidates with provenance, evidence pack."""

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from agentic_search.state import SearchState
from agentic_search_lambda.observability import logger, metrics, tracer
from agentic_search_lambda.runtime import steps


@logger.inject_lambda_context(correlation_id_path="correlationId")
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
@event_parser(model=SearchState)
def handler(event: SearchState, context: LambdaContext) -> dict:
    state = steps().finalize(event)
    partial = bool(state.response and state.response.get("errors"))
    metrics.add_metric(
        name="PartialResults" if partial else "Answers", unit=MetricUnit.Count, value=1
    )
    return state.wire()
