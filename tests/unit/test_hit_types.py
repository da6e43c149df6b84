"""One type per kind of ranked hit: what crosses the steps as JSON is the type the code uses.

A fused entry (:class:`~agentic_search.state.Fused`) is what fusion makes, what the executor
state keeps as round 1's list and what finalize reranks: no wire twin to convert to and from.
"""

from __future__ import annotations

import json

from agentic_search.state import (
    ExecutorCaps,
    ExecutorState,
    Fused,
    IntentState,
    QueryPlan,
)


def executor_state() -> ExecutorState:
    plan = QueryPlan(domain="documents", strategy="identity-focused", fusion="rrf")
    intent = IntentState(query="q", normalized_query="q")
    return ExecutorState(plan=plan, intent=intent, caps=ExecutorCaps())


def test_round_one_fused_list_is_held_as_fused_entries_and_crosses_as_camel_case_json():
    # GIVEN round 1's fused entries put in the executor state as fusion made them
    fused = [Fused("d1", 0.03, 1.0, 1, {"dense:content": 0.016}), Fused("d2", 0.01, 0.3, 2)]
    state = executor_state()
    state.first_fused = fused
    # THEN the state holds those very entries (no copy, no conversion)
    assert all(a is b for a, b in zip(state.first_fused, fused, strict=True))
    # WHEN the state crosses a step as JSON
    wire = json.loads(state.model_dump_json(by_alias=True))
    # THEN the entries are in camelCase, like every wire model
    assert wire["firstFused"][0] == {
        "id": "d1",
        "fused": 0.03,
        "score": 1.0,
        "bestRank": 1,
        "contributions": {"dense:content": 0.016},
    }
    # AND they come back as the same type with the same values
    back = ExecutorState.model_validate(wire)
    assert back.first_fused == fused
    assert all(type(f) is Fused for f in back.first_fused)
