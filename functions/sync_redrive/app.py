"""SyncRedrive: drain the sync dead-letter queues and re-apply due changes with backoff."""

from aws_lambda_powertools.utilities.typing import LambdaContext

from agentic_search_lambda.observability import logger, metrics, tracer
from agentic_search_lambda.redrive import sync_redrive


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict, context: LambdaContext) -> dict:
    return sync_redrive(event, context)
