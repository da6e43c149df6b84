"""ExtractIntent (and ExtractIntentRules after a Catch): the query's intent in the schema's
vocabularies, by the LLM when one is configured (through the plan cache first), else by rules.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from agentic_search.dependencies import Dependencies
from agentic_search.logic.access import AccessPolicy
from agentic_search.logic.cache_keys import added_filters, history_material, plan_cache_key
from agentic_search.logic.complexity import with_complexity
from agentic_search.logic.follow_up import Reading, apply, fold
from agentic_search.logic.intent import with_addons
from agentic_search.logic.intent_merge import merge_intents
from agentic_search.logic.intent_overrides import with_filters, without
from agentic_search.logic.llm_budget import Budget, LLMFallback
from agentic_search.logic.plan_rules import validate_plan
from agentic_search.pipeline.access import as_caller
from agentic_search.pipeline.catalog import catalog_lookup, extract_by_rules
from agentic_search.pipeline.graph import plugged_into
from agentic_search.ports import CacheError, IntentPlanner
from agentic_search.wire import (
    CacheInfo,
    ExtractorInfo,
    IntentState,
    QueryPlan,
    SearchState,
    elapsed_ms,
)


@as_caller
def extract_intent(state: SearchState, deps: Dependencies) -> SearchState:
    """ExtractIntent (and ExtractIntentRules after a failure).

    With an LLM configured, the plan cache is looked up first (a hit brings the intent and
    the plan, and no LLM call is made), then the LLM extractor runs; any
    :class:`~agentic_search.logic.llm_budget.LLMFallback` runs the rule-based extractor
    instead, with the
    reason recorded in ``state.extractor``. Without an LLM, or after a Catch
    (``intentError``), the rules run. The parts of the intent named in ``request.drop`` are
    then left out (:func:`~agentic_search.logic.intent_overrides.without`) and those of
    ``request.filters`` added (:func:`~agentic_search.logic.intent_overrides.with_filters`).

    With ``request.history`` the query is first read against the conversation by the rules
    (:func:`follow_up_reading`): the extractors read the text it makes (the previous need
    with the follow-up's words, or the query when it stands alone), its exclusions, filters
    and reference are applied, and ``intent.followUp`` says how it was read.

    Raises:
        ValueError: for an empty or over-long query.
    """
    t = time.perf_counter()
    req = state.request
    reading = follow_up_reading(deps, state) if req.history else None
    text = reading.context.text if reading is not None else req.query
    llm = deps.llm if state.intent_error is None else None
    if state.intent_error is not None:
        reason = f"fallback after {state.intent_error.Error}: {state.intent_error.Cause}"
        info = ExtractorInfo(path="rules", reason=reason[:300])
    elif llm is None:
        why = "LLM off" if deps.settings.llm == "off" else "no LLM configured"
        info = ExtractorInfo(
            path="rules", reason=f"{why}: rule-based extractor over the schema vocabularies"
        )
    else:
        info = _intent_by_llm(state, deps, llm, text)
    if info.path == "rules":
        state.intent = extract_by_rules(deps, text)
    if state.intent is not None and reading is not None:  # the conversation's overrides
        record = catalog_lookup(deps).record
        state.intent = apply(state.intent, reading.context, record, deps.schema)
        state.intent.follow_up = reading.follow_up
    if state.intent is not None and req.drop:  # the parts the client asked to leave out
        state.intent = without(state.intent, req.drop)
    if state.intent is not None and req.filters:  # the filters the client asked to add
        state.intent = with_filters(state.intent, req.filters)
    if state.intent is not None:  # complexity, the bridge cue and the reference's add-ons
        state.intent = with_complexity(state.intent, deps.analyzer)
        state.intent = reference_addons(deps, state.intent)
    state.extractor = info
    state.stage_ms["intent"] = round(elapsed_ms(t), 2)
    return state


def reference_addons(deps: Dependencies, intent: IntentState) -> IntentState:
    """``intent`` with its reference's add-ons (:func:`~agentic_search.logic.intent.
    with_addons`: named after it, or naming it as what they plug into) when it reads
    "alternative to X"; as it is otherwise."""
    limit = deps.schema.tuning.graph.max_addons
    ref = intent.reference_tool
    if intent.primary_goal != "alternative-to" or not ref:
        return with_addons(intent, catalog_lookup(deps), limit)
    mentioning = plugged_into(deps, ref, intent.reference_tool_name or "", top_k=limit)
    return with_addons(intent, catalog_lookup(deps), limit, mentioning)


def follow_up_reading(deps: Dependencies, state: SearchState) -> Reading:
    """The rules' reading of a request with history
    (:func:`agentic_search.logic.follow_up.fold` over the rule-based extractor and the
    catalog's records)."""
    req = state.request
    assert req.history  # only asked with history
    record = catalog_lookup(deps).record
    return fold(req.history, req.query, lambda q: extract_by_rules(deps, q), record, deps.schema)


def _intent_by_llm(
    state: SearchState, deps: Dependencies, llm: IntentPlanner, text: str
) -> ExtractorInfo:
    """Plan cache lookup, then the LLM extractor over ``text`` (the query, or a follow-up's
    reading); sets ``state.intent`` (and ``state.plan`` on a hit) and returns how the intent
    was made."""
    cached = plan_cache_get(state, deps, llm)
    if cached is not None:
        state.intent, state.plan = cached
        key = state.plan_cache.key[:17] if state.plan_cache else ""
        return ExtractorInfo(path="cache", reason=f"plan cache hit ({key}...)")
    intent, info = ask_llm(
        state, deps, llm, lambda budget: llm.extract(text, budget), "answer within the schema"
    )
    if intent is not None:
        # The LLM adds what the rules cannot read; a hard constraint the rules found stays.
        merged, fields, overruled = merge_intents(extract_by_rules(deps, text), intent)
        state.intent = merged
        info.reason = f"{info.reason}, merged with the rules"
        info.fields = fields
        info.overruled = overruled or None
    return info


def ask_llm(
    state: SearchState,
    deps: Dependencies,
    llm: IntentPlanner,
    call: Callable[[Budget], Any],
    success: str,
) -> tuple[Any, ExtractorInfo]:
    """Run one LLM step on what is left of the request's budget (``state.llm_ms`` carries it
    from step to step): its result and the path info, or None and the fallback's info."""
    budget = Budget(llm.budget_s, (state.llm_ms or 0.0) / 1000.0)
    result = None
    try:
        result = call(budget)
        info = ExtractorInfo(path="llm", reason=f"{llm.name}: {success}")
    except LLMFallback as exc:
        info = ExtractorInfo(
            path="rules",
            reason=f"LLM fallback ({exc.kind}): {exc.reason}"[:300],
            fallback=exc.kind,
            transient=exc.transient,
        )
    info.llm_ms = round((budget.spent_s * 1000.0) - (state.llm_ms or 0.0), 2)
    state.llm_ms = round(budget.spent_s * 1000.0, 2)
    return result, info


def plan_cache_get(
    state: SearchState, deps: Dependencies, llm: IntentPlanner
) -> tuple[IntentState, QueryPlan] | None:
    """The cached intent and plan of this request on the LLM path (None on a miss, a cache
    failure or an entry that no longer parses); the lookup is noted in ``state.plan_cache``."""
    req = state.request
    info = CacheInfo()
    try:
        cache = deps.cache
        info.backend = cache.name
        info.key = plan_cache_key(
            req.query,
            domain=req.domain,
            limit=req.limit,
            schema_fingerprint=deps.schema.fingerprint,
            catalog_version=cache.catalog_version(req.domain),
            planner=llm.name,
            drop=req.drop,
            filters=added_filters(req.filters),
            history=history_material(req.history),
            access=AccessPolicy.of(deps.schema, state.caller).cache_part,
        )
        hit = cache.get(info.key)
        found = None
        if hit is not None:
            found = (
                IntentState.model_validate(hit["intent"]),
                QueryPlan.model_validate(hit["plan"]),
            )
            validate_plan(found[1], deps.schema)
    except CacheError as exc:
        info.error = str(exc)
        found = None
    except (ValueError, KeyError, TypeError) as exc:  # an entry that no longer parses
        info.error = f"unusable plan cache entry: {str(exc)[:200]}"
        found = None
    info.hit = found is not None
    state.plan_cache = info
    return found


__all__ = ["ask_llm", "extract_intent", "plan_cache_get"]
