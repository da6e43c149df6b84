"""PlanQuery (and PlanQueryRules after a Catch): the plan, then the executor's gate."""

from __future__ import annotations

import time

from agentic_search.dependencies import Dependencies
from agentic_search.logic.executor import executor_gate, hyde_status
from agentic_search.pipeline.access import as_caller
from agentic_search.pipeline.extract_intent import ask_llm
from agentic_search.ports import CacheError
from agentic_search.wire import (
    ExecutorCaps,
    ExecutorState,
    ExtractorInfo,
    IntentState,
    QueryPlan,
    SearchState,
    elapsed_ms,
)


@as_caller
def plan_query(state: SearchState, deps: Dependencies) -> SearchState:
    """PlanQuery (and PlanQueryRules): the plan, then the executor's gate.

    The plan comes from the plan cache (a hit in ExtractIntent), else the LLM planner when
    one is configured and budget remains, else the rule-based planner (also after a Catch,
    ``planError``, and after any LLM fallback, whose reason lands in ``state.planner``). An
    LLM-path plan is stored in the plan cache unless a transient failure (timeout,
    connection) shaped it.

    Raises:
        ValueError: when there is no intent in the state.
        PlanError: when the rule-based plan is invalid.
    """
    if state.intent is None:
        raise ValueError("PlanQuery needs an intent in the state")
    t = time.perf_counter()
    req = state.request
    llm = deps.llm if state.plan_error is None else None
    plan: QueryPlan | None = None
    if state.plan_error is not None:
        reason = f"fallback after {state.plan_error.Error}: {state.plan_error.Cause}"
        info = ExtractorInfo(path="rules", reason=reason[:300])
    elif state.plan is not None:
        plan = state.plan
        info = ExtractorInfo(path="cache", reason="plan cache hit")
    elif llm is None:
        info = ExtractorInfo(path="rules", reason="rule-based planner")
    elif not deps.settings.llm_plan_enabled:
        info = ExtractorInfo(
            path="rules", reason="rule-based planner over the LLM-read intent (LLM_PLAN off)"
        )
    else:
        intent = state.intent
        plan, info = ask_llm(
            state,
            deps,
            llm,
            lambda budget: llm.plan(intent, req.limit, budget),
            "plan within the rules",
        )
    if plan is None:
        plan = deps.planner.plan(state.intent, limit=req.limit)
    state.planner = info
    if llm is not None and info.path != "cache":
        _plan_cache_put(state, deps, plan)
    rounds = req.rounds or deps.settings.max_rounds
    # the domain's knobs (tuning.executor), and what is the request's and the calibration's
    caps = deps.schema.tuning.executor.caps(
        max_rounds=rounds,
        max_total_docs=min(req.limit, 100),
        round_budget_ms=deps.settings.round_budget_ms,
        later_dense_weight=deps.schema.later_dense_weight_for(deps.embedder_model()),
    )
    state.executor = start_executor(deps, plan, state.intent, caps)
    state.plan = None  # the executor state holds it now
    state.stage_ms["plan"] = round(elapsed_ms(t), 2)
    return state


def start_executor(
    deps: Dependencies, plan: QueryPlan, intent: IntentState, caps: ExecutorCaps | None = None
) -> ExecutorState:
    """The executor's gate: a validated plan and a fresh state (``started_at`` now).

    Raises:
        PlanError: when the plan is invalid.
    """
    reranker = deps.reranker
    state = executor_gate(
        plan,
        intent,
        deps.schema,
        caps,
        reranker=reranker.name if reranker else None,
        hyde=hyde_status(intent, deps.hyde),
        analyzer=deps.analyzer,
    )
    state.started_at = time.time()
    return state


def _plan_cache_put(state: SearchState, deps: Dependencies, plan: QueryPlan) -> None:
    info = state.plan_cache
    transient = any(
        step is not None and step.transient for step in (state.extractor, state.planner)
    )
    if info is None or not info.key or info.hit or transient or state.intent is None:
        return
    try:
        value = {
            "intent": state.intent.wire(),
            "plan": plan.wire(),
            "extractor": state.extractor.wire() if state.extractor else None,
            "planner": state.planner.wire() if state.planner else None,
        }
        deps.cache.put(info.key, value, deps.settings.plan_cache_ttl_s)
    except CacheError as exc:
        info.error = str(exc)


__all__ = ["plan_query", "start_executor"]
