"""Retrieve (one Map item): run one sub-query's source; a failing source is in the result."""

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from agentic_search.state import RetrieveEvent
from agentic_search_lambda.observability import logger, metrics, tracer
from agentic_search_lambda.runtime import steps


@logger.inject_lambda_context(correlation_id_path="correlationId")
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
@event_parser(model=RetrieveEvent)
def handler(event: RetrieveEvent, context: LambdaContext) -> dict:
    result = steps().retrieve(event)
    failed = result.error is not None
    metrics.add_metric(
        name="SourceErrors" if failed else "SourceQueries", unit=MetricUnit.Count, value=1
    )
    return result.wire()
