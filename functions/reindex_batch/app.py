"""ReindexBatch: one batch of records of the reindex Distributed Map -> the index."""

from aws_lambda_powertools.utilities.typing import LambdaContext

from agentic_search_lambda.observability import logger, metrics, tracer
from agentic_search_lambda.reindex import reindex_batch


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict, context: LambdaContext) -> dict:
    return reindex_batch(event, context)
