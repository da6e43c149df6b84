"""PrepareRound: the next round's plan, split into one sub-query per source (the Map's items),
or ``continueSearch`` false when the search is over or nothing new can be asked."""

from __future__ import annotations

import time

from agentic_search.dependencies import Dependencies
from agentic_search.logic.executor import (
    WRITTEN_PREFIX,
    hyde_status,
    prepare_round_queries,
    split_plan,
    with_written_queries,
    writer_inputs,
)
from agentic_search.logic.llm_budget import LLMFallback
from agentic_search.pipeline.access import as_caller
from agentic_search.ports import HydeError
from agentic_search.wire import ExecutorState, RoundReport, RoundWork, SearchState, SourceError


@as_caller
def prepare_round(state: SearchState, deps: Dependencies) -> SearchState:
    """PrepareRound: ``state.round`` becomes the next round (or None, with the executor's
    ``continueSearch`` false).

    Raises:
        ValueError: when the state has no executor state (PlanQuery did not run).
    """
    state.round = next_round(deps, state.need_executor())
    return state


def next_round(deps: Dependencies, state: ExecutorState) -> RoundWork | None:
    """The next round's plan and sub-queries; ``None`` (and ``continue_search`` False) when
    the search is over or there is nothing new to ask. Round 1 asks the HyDE writer for a
    passage when :func:`hyde_status` says on; rounds 2+ ask the round writer
    (``LLM_ROUNDS=on``) for queries written from the evidence so far. A writer's failure is
    the round's error, not the search's."""
    if not state.continue_search:
        return None
    started = time.time()
    setup_before = deps.caches.setup_ms  # a cold process builds the stores' adapters here
    rnd = state.round_index + 1
    passage: str | None = None
    errors: list[SourceError] = []
    hyde = deps.hyde
    if rnd == 1 and hyde is not None and hyde_status(state.intent, hyde).startswith("on"):
        try:
            passage = hyde.generate(state.intent.query)
        except HydeError as exc:
            errors.append(SourceError(source="hyde", error="HydeError", message=str(exc)))
    round_plan, queries = prepare_round_queries(
        state, deps.schema, hyde_passage=passage, analyzer=deps.analyzer
    )
    writer = deps.round_writer
    if rnd >= 2 and round_plan is not None and writer is not None:
        found, missing, asked = writer_inputs(state)
        try:
            texts = writer.write(state.intent.query, found, missing, asked)
        except LLMFallback as exc:
            errors.append(SourceError(source="llm-round", error="LLMFallback", message=str(exc)))
        else:
            round_plan, queries = with_written_queries(round_plan, queries, texts, deps.schema)
            state.asked.extend(WRITTEN_PREFIX + t for t in texts)
    if round_plan is None:
        state.continue_search = False
        state.report.stop_reason = "nothing new to ask: no missing targets or feedback terms"
        return None
    subs = split_plan(round_plan, deps.keyword.name, deps.structured.system)
    return RoundWork(
        index=rnd,
        plan=round_plan,
        sub_queries=subs,
        report=RoundReport(round=rnd, queries=queries, errors=errors),
        started_at=started,
        setup_ms=max(0.0, deps.caches.setup_ms - setup_before),
    )


__all__ = ["next_round", "prepare_round"]
