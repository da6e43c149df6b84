"""CacheStore state: keep the response in the result cache."""

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
    metrics.add_metric(name="CacheStores", unit=MetricUnit.Count, value=1)
    return steps().cache_store(event).wire()
