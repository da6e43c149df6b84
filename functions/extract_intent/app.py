"""ExtractIntent and ExtractIntentRules state: the query's intent in the schema's vocabularies."""

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
    metrics.add_metric(
        name="IntentFallbacks" if event.intent_error else "Intents", unit=MetricUnit.Count, value=1
    )
    state = steps().extract_intent(event)
    if state.plan_cache is not None:
        hit = "PlanCacheHits" if state.plan_cache.hit else "PlanCacheMisses"
        metrics.add_metric(name=hit, unit=MetricUnit.Count, value=1)
    if state.extractor is not None and state.extractor.fallback:
        metrics.add_metric(name="LlmIntentFallbacks", unit=MetricUnit.Count, value=1)
    return state.wire()
