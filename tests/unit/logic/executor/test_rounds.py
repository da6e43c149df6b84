"""The round policy: the relaxation ladder, the stopping rule, the final weighted-RRF ranking and
the executor gate, worked out by hand."""

from __future__ import annotations

import pytest
from support.builders import (
    INTERFACE_CLI,
    LOCAL,
    PLATFORMS_LINUX,
    PRICE_20,
    intent_for,
    plan_with,
    state_with,
)

from agentic_search.logic.executor.rounds import (
    covering_records,
    executor_gate,
    final_placement,
    final_ranking,
    relax_step,
    should_continue,
)
from agentic_search.logic.plan_rules import PlanError
from agentic_search.logic.schema import DomainSchema
from agentic_search.wire import (
    Coverage,
    CoverageItem,
    CoverageTarget,
    ExecutorCaps,
    ExecutorState,
    Filter,
    QueryPlan,
    StructuredSource,
)

# ----- 4. relaxation ladder ----------------------------------------------------------------------


def test_relax_ladder_order(tools_schema: DomainSchema) -> None:
    """GIVEN platforms (rank 1), price (rank 2), deployment (rank 4)
    THEN relaxed platforms, then price, then deployment, then nothing is left."""
    plan = plan_with([PLATFORMS_LINUX, PRICE_20, LOCAL])
    dropped = []
    step = relax_step(plan, tools_schema)
    while step is not None:
        plan, flt = step
        dropped.append(flt.label())
        step = relax_step(plan, tools_schema)
    assert dropped == ["platforms in [Linux]", "price_monthly_usd<=20", "deployment in [Local]"]
    assert plan.filters == []


def test_relax_does_not_modify_the_input_plan(tools_schema: DomainSchema) -> None:
    """GIVEN a plan WHEN one step relaxes it THEN the original plan keeps its filters."""
    plan = plan_with([PLATFORMS_LINUX, LOCAL])
    step = relax_step(plan, tools_schema)
    assert step is not None
    assert step[0].filters == [LOCAL]
    assert plan.filters == [PLATFORMS_LINUX, LOCAL]


def test_relax_never_drops_must_filters(tools_schema: DomainSchema) -> None:
    """GIVEN platforms (rank 1) marked must and deployment (rank 4)
    THEN deployment goes first although it is harder, then nothing."""
    must_linux = PLATFORMS_LINUX.model_copy(update={"must": True})
    step = relax_step(plan_with([must_linux, LOCAL]), tools_schema)
    assert step is not None
    plan, flt = step
    assert flt == LOCAL
    assert plan.filters == [must_linux]
    assert relax_step(plan, tools_schema) is None


def test_relax_skips_fields_without_relax_rank(tools_schema: DomainSchema) -> None:
    """GIVEN only a category filter (no relax_rank in tools.yaml) THEN nothing to relax."""
    ide = Filter(field="category", operator="eq", value="IDE")
    assert relax_step(plan_with([ide]), tools_schema) is None
    assert relax_step(plan_with([]), tools_schema) is None


def test_relax_tie_drops_the_later_filter_first(tools_schema: DomainSchema) -> None:
    """GIVEN platforms and interface, both rank 1, in that order
    THEN interface (the later) goes first, then platforms."""
    step = relax_step(plan_with([PLATFORMS_LINUX, INTERFACE_CLI]), tools_schema)
    assert step is not None
    plan, flt = step
    assert flt == INTERFACE_CLI
    step = relax_step(plan, tools_schema)
    assert step is not None
    assert step[1] == PLATFORMS_LINUX


def test_relax_structured_sources_lose_the_same_filter(tools_schema: DomainSchema) -> None:
    """GIVEN a structured source carrying the plan's filters and a preference
    THEN after relaxing platforms it keeps deployment and the preference."""
    pref = Filter(field="functionality", operator="in", value=["Code Completion"])
    src = StructuredSource(filters=[PLATFORMS_LINUX, LOCAL], preferences=[pref], top_k=30)
    step = relax_step(plan_with([PLATFORMS_LINUX, LOCAL], structured=[src]), tools_schema)
    assert step is not None
    plan, _ = step
    assert plan.structured_sources[0].filters == [LOCAL]
    assert plan.structured_sources[0].preferences == [pref]


def test_relax_keeps_a_must_filter_with_the_same_label(tools_schema: DomainSchema) -> None:
    """GIVEN the same condition twice, once must and once not
    WHEN relaxed THEN the non-must copy goes and the must copy stays (never relaxed)."""
    must_linux = PLATFORMS_LINUX.model_copy(update={"must": True})
    step = relax_step(plan_with([must_linux, PLATFORMS_LINUX]), tools_schema)
    assert step is not None
    plan, flt = step
    assert flt == PLATFORMS_LINUX
    assert plan.filters == [must_linux]


# ----- 5. stopping policy ------------------------------------------------------------------------

CAPS = ExecutorCaps(
    max_rounds=3, confidence_threshold=0.9, max_no_new_rounds=1, round_budget_ms=2000.0
)


def _state(rnd: int, conf: float, caps: ExecutorCaps = CAPS) -> ExecutorState:
    cov = Coverage(
        items=[
            CoverageItem(kind="term", label="vim", covered=False),
            CoverageItem(kind="term", label="run", covered=True),
        ],
        confidence=conf,
    )
    return state_with(caps, round_index=rnd, coverage=cov)


def test_stop_no_candidates_in_round_one_wins_over_everything() -> None:
    """GIVEN round 1 found nothing (even with a high confidence) THEN stop: no candidates."""
    go, why = should_continue(_state(1, 0.95), [], 10.0, found_any=False)
    assert not go
    assert why.startswith("no candidates")


def test_nothing_found_in_a_later_round_is_not_the_no_candidates_stop() -> None:
    """GIVEN round 2 found nothing and added nothing THEN the stop is the no-new streak."""
    go, why = should_continue(_state(2, 0.5), [], 10.0, found_any=False)
    assert not go
    assert why == "no new evidence for 1 round(s)"


def test_stop_confidence_reached_wins_over_max_rounds() -> None:
    """GIVEN confidence 0.9 == threshold on the last round THEN stop on confidence."""
    go, why = should_continue(_state(3, 0.9), [], 10.0, found_any=True)
    assert not go
    assert why == "confidence 0.90 reached the threshold 0.90"


def test_stop_max_rounds_wins_over_no_new_streak() -> None:
    """GIVEN round 3 of 3, nothing new, confidence 0.5 THEN stop on max rounds."""
    go, why = should_continue(_state(3, 0.5), [], 10.0, found_any=True)
    assert not go
    assert why == "max rounds reached (3)"


def test_stop_no_new_streak_wins_over_latency() -> None:
    """GIVEN round 1 with no new evidence and a slow round THEN stop on the streak (1 >= 1)."""
    state = _state(1, 0.5)
    go, why = should_continue(state, [], 5000.0, found_any=True)
    assert not go
    assert why == "no new evidence for 1 round(s)"
    assert state.report.no_new_streak == 1


def test_stop_latency_budget() -> None:
    """GIVEN new evidence and a 2500 ms round (budget 2000) THEN stop on latency."""
    go, why = should_continue(_state(1, 0.5), ["e1"], 2500.0, found_any=True)
    assert not go
    assert why == "round latency budget exceeded (2500 ms > 2000 ms)"


def test_continue_lists_missing_items() -> None:
    """GIVEN new evidence, confidence 0.5 and a round exactly at the budget (not over)
    THEN continue, naming the missing target."""
    go, why = should_continue(_state(1, 0.5), ["e1"], 2000.0, found_any=True)
    assert go
    assert why == "continue: confidence 0.50 < 0.90; missing vim"


def test_no_new_streak_increments_and_resets() -> None:
    """GIVEN a streak limit of 3 and 5 rounds WHEN rounds add nothing, nothing, something,
    nothing THEN the streak goes 1, 2, 0, 1 and the search continues each time."""
    caps = ExecutorCaps(max_rounds=5, max_no_new_rounds=3, confidence_threshold=0.9)
    state = _state(0, 0.5, caps)
    streaks = []
    for rnd, new in enumerate([[], [], ["e1"], []], start=1):
        state.round_index = rnd
        go, _ = should_continue(state, new, 1.0, found_any=True)
        assert go
        streaks.append(state.report.no_new_streak)
    assert streaks == [1, 2, 0, 1]


# ----- 6. final ranking --------------------------------------------------------------------------


def test_final_ranking_weighted_rrf_by_hand() -> None:
    """GIVEN round 1 [a, b, c] (weight 1) and round 2 [c, d] (weight 0.2), k = 60
    THEN a = 1/61 = 0.016393, b = 1/62 = 0.016129,
    c = 1/63 + 0.2/61 = 0.015873 + 0.003279 = 0.019152, d = 0.2/62 = 0.003226
    -> c, a, b, d."""
    state = state_with(ExecutorCaps(), round_rankings=[["a", "b", "c"], ["c", "d"]])
    out = final_ranking(state)
    assert [f.id for f in out] == ["c", "a", "b", "d"]
    assert [f.fused for f in out] == pytest.approx(
        [1 / 63 + 0.2 / 61, 1 / 61, 1 / 62, 0.2 / 62], abs=1e-12
    )


def test_final_ranking_single_round_and_empty() -> None:
    """GIVEN one round THEN its order with 1/61, 1/62; no (or only empty) rounds THEN []."""
    out = final_ranking(state_with(ExecutorCaps(), round_rankings=[["a", "b"]]))
    assert [f.id for f in out] == ["a", "b"]
    assert [f.fused for f in out] == pytest.approx([1 / 61, 1 / 62])
    assert final_ranking(state_with(ExecutorCaps())) == []
    assert final_ranking(state_with(ExecutorCaps(), round_rankings=[[], []])) == []


def test_final_ranking_reranked_ids_move_ahead_within_top_n() -> None:
    """GIVEN the fused order c, a, b, d (above), rerank scores b 0.9, a 0.1, d 0.5, top_n 3
    THEN the head [c, a, b] becomes reranked ones first by score (b, a), then c; d stays
    after the head although it has a rerank score: b, a, c, d."""
    state = state_with(
        ExecutorCaps(rerank_top_n=3),
        round_rankings=[["a", "b", "c"], ["c", "d"]],
        rerank_scores={"b": 0.9, "a": 0.1, "d": 0.5},
    )
    assert [f.id for f in final_ranking(state)] == ["b", "a", "c", "d"]


def _covered(state, ids, rankings, limit=3):
    """``state`` with a preference and a term target, both covered by ``ids``."""
    pref = CoverageTarget(
        kind="preference", label="industries ~ Healthcare", field="industries", values=["H"]
    )
    term = CoverageTarget(kind="term", label="chatbot", text="chatbot")
    state.targets = [pref, term]
    state.coverage = Coverage(
        items=[
            CoverageItem(kind="preference", label=pref.label, covered=True, evidence=ids),
            CoverageItem(kind="term", label="chatbot", covered=True, evidence=["z9"]),
        ]
    )
    state.round_rankings = rankings
    state.plan = state.plan.model_copy(update={"limit": limit})
    return state


def test_a_preference_only_a_later_round_covered_is_placed_in_the_head() -> None:
    """GIVEN round 1 [a, b, c, d] and round 2 [x, b] (weight 0.2), a head of 3, and the
    pool's evidence for "industries ~ Healthcare" being x alone (issue 47 item 8: round 2
    reported it covered, no returned record held it)
    THEN x takes the head's last place at its own score, the head's scores never rise, and
    the placement is reported with the target; a term covered outside the head is not."""
    state = _covered(state_with(ExecutorCaps()), ["x"], [["a", "b", "c", "d"], ["x", "b"]])
    ranking, placed = final_placement(state, chunked=False)
    assert [f.id for f in ranking][:3] == ["b", "a", "x"]
    assert placed == [("x", "industries ~ Healthcare")]
    head = [f.score for f in ranking[:3]]
    assert head == sorted(head, reverse=True)
    # nothing moves when the head holds the covering evidence already
    state = _covered(state_with(ExecutorCaps()), ["a", "x"], [["a", "b", "c", "d"], ["x", "b"]])
    assert covering_records(state, final_ranking(state)) == []
    assert [f.id for f in final_placement(state, chunked=False)[0]] == [
        f.id for f in final_ranking(state)
    ]


# ----- 10. executor gate -------------------------------------------------------------------------


def test_gate_plan_without_sources_stops(tools_schema: DomainSchema) -> None:
    """GIVEN a plan with no sources THEN continue_search False, a stop reason, no targets."""
    plan = QueryPlan(domain="tools", strategy="capability-focused", vector_sources=[])
    state = executor_gate(plan, intent_for(), tools_schema)
    assert state.continue_search is False
    assert state.report.stop_reason == "plan has no retrieval sources (non-retrieval strategy)"
    assert state.targets == []


def test_gate_invalid_plan_raises(tools_schema: DomainSchema) -> None:
    """GIVEN a plan with an unknown aspect THEN PlanError naming it."""
    with pytest.raises(PlanError, match="unknown aspect 'nope'"):
        executor_gate(plan_with(aspect="nope"), intent_for(), tools_schema)


def test_gate_valid_plan_starts_state(tools_schema: DomainSchema) -> None:
    """GIVEN a valid plan, caps and names THEN the state carries them and the targets."""
    caps = ExecutorCaps(max_rounds=2)
    state = executor_gate(
        plan_with([LOCAL]), intent_for(), tools_schema, caps, reranker="list", hyde="on (fake)"
    )
    assert state.continue_search is True
    assert state.report.caps == caps
    assert (state.report.reranker, state.report.hyde) == ("list", "on (fake)")
    assert [t.kind for t in state.targets] == ["constraint", "preference", "phrase", "term", "term"]
    default = executor_gate(plan_with(), intent_for(), tools_schema)
    assert default.report.reranker == "none (not configured)"
    assert default.report.hyde == "off (no LLM configured)"
