"""The executor driven in one process without the state machine: all rounds in a loop
(:func:`run_rounds`, what warm-up and the evaluation's executor systems use) and a single
round without evidence or grading (:func:`execute_once`)."""

from __future__ import annotations

import time

from agentic_search.components import Components
from agentic_search.pipeline.finalize import finish
from agentic_search.pipeline.fuse_rerank import fuse_round
from agentic_search.pipeline.grade_round import grade
from agentic_search.pipeline.hydrate import execution_stats, hydrate, one_round_confidence
from agentic_search.pipeline.plan_query import start_executor
from agentic_search.pipeline.prepare_round import next_round
from agentic_search.pipeline.retrieve import retrieve_all
from agentic_search.pipeline.sources import merge, run_sources
from agentic_search.state import (
    EvidencePack,
    ExecutorCaps,
    IntentState,
    QueryExecutorOutput,
    QueryPlan,
    elapsed_ms,
)


def run_rounds(
    c: Components, plan: QueryPlan, intent: IntentState, caps: ExecutorCaps | None = None
) -> tuple[QueryExecutorOutput, EvidencePack]:
    """Run rounds in-process until the stopping rule says stop: the same steps as the state
    machine (gate, then per round prepare -> retrieve -> fuse -> grade, then finish); never
    raises for a failing source.

    Raises:
        PlanError: when the plan is invalid.
    """
    state = start_executor(c, plan, intent, caps)
    while (work := next_round(c, state)) is not None:
        retrieve_all(c, work)
        fuse_round(c, state, work)
        grade(c, state, work)
    return finish(c, state)


def execute_once(
    c: Components, plan: QueryPlan, intent: IntentState | None = None
) -> QueryExecutorOutput:
    """Execute ``plan`` in one round (sources, fusion, hydration; no evidence or grading);
    never raises for a failing source (see ``errors``)."""
    t0 = time.perf_counter()
    results, stage = run_sources(c, plan)
    t = time.perf_counter()
    fused, method = merge(results, plan.fusion, plan.rrf_k)
    stage["fusion"] = elapsed_ms(t)
    t = time.perf_counter()
    ok = [r for r in results if r.error is None]
    candidates = hydrate(c, plan, intent, ok, fused[: plan.limit])
    stage["hydrate"] = elapsed_ms(t)
    stage["total"] = elapsed_ms(t0)
    return QueryExecutorOutput(
        candidates=candidates,
        execution_stats=execution_stats(results, fused, method, stage, intent, plan),
        confidence=one_round_confidence(candidates, intent),
        errors=[r.error for r in results if r.error is not None],
    )


__all__ = ["execute_once", "run_rounds"]
