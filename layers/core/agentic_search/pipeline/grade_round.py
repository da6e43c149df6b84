"""GradeRound: grade the evidence pool's coverage, decide whether to go on (the stopping rule
of :func:`agentic_search.logic.executor.rounds.should_continue`) and close the round's report."""

from __future__ import annotations

import time

from agentic_search.dependencies import Dependencies
from agentic_search.logic.executor import should_continue
from agentic_search.pipeline.access import as_caller
from agentic_search.wire import ExecutorState, RoundWork, SearchState, elapsed_ms


@as_caller
def grade_round(state: SearchState, deps: Dependencies) -> SearchState:
    """GradeRound: coverage, the stopping decision, the round's report; the round is done.

    Raises:
        ValueError: when the state has no executor state or no round.
    """
    grade(deps, state.need_executor(), state.need_round())
    state.round = None
    return state


def grade(deps: Dependencies, state: ExecutorState, work: RoundWork) -> ExecutorState:
    """Grade the pool's coverage, decide whether to go on and close the round's report."""
    rep = work.report
    t = time.perf_counter()
    before_cov = set(state.coverage.covered)
    state.coverage = deps.grader.grade(state.targets, state.pool)
    rep.stage_ms["grade"] = elapsed_ms(t)
    state.round_index = work.index
    wall_ms = (time.time() - work.started_at) * 1000.0
    # the budget judges the search: start-up work (a cold model or store) is left out
    round_ms = max(0.0, wall_ms - work.setup_ms)
    if work.setup_ms >= 0.01:
        rep.stage_ms["setup"] = work.setup_ms
    rep.stage_ms["round_total"] = round_ms
    go, reason = should_continue(state, work.new_ids, round_ms, work.found_any)
    rep.new_evidence = list(work.new_ids)
    rep.newly_covered = [c for c in state.coverage.covered if c not in before_cov]
    rep.missing = state.coverage.missing
    rep.confidence = state.coverage.confidence
    rep.stage_ms = {k: round(v, 2) for k, v in rep.stage_ms.items()}
    rep.decision = reason
    state.report.rounds.append(rep)
    for k, v in rep.stage_ms.items():
        state.stage_totals[k] = round(state.stage_totals.get(k, 0.0) + v, 2)
    state.continue_search = go
    if not go:
        state.report.stop_reason = reason
    return state


__all__ = ["grade", "grade_round"]
