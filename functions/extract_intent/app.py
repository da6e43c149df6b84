"""ExtractIntent and ExtractIntentRules state: the query's intent in the schema's vocabularies."""

from agentic_search.dependencies import Dependencies
from agentic_search.pipeline.extract_intent import extract_intent
from agentic_search.wire import SearchState
from agentic_search_lambda.handlers import step_handler
from agentic_search_lambda.observability import count


@step_handler
def handler(state: SearchState, deps: Dependencies) -> SearchState:
    count("IntentFallbacks" if state.intent_error else "Intents")
    state = extract_intent(state, deps)
    if state.plan_cache is not None:
        count("PlanCacheHits" if state.plan_cache.hit else "PlanCacheMisses")
    if state.extractor is not None and state.extractor.fallback:
        count("LlmIntentFallbacks")
    return state
