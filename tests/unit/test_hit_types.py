"""One type per kind of ranked hit: what crosses the steps as JSON is the type the code uses.

A fused entry (:class:`~agentic_search.wire.Fused`) is what fusion makes, what the executor
state keeps as round 1's list and what finalize reranks: no wire twin to convert to and from.
A source's answer (:class:`~agentic_search.wire.RetrievedList` of hits) is made once from
what a store port returns and read as is by fusion, hydration and the state.
"""

from __future__ import annotations

import json

from agentic_search.wire import (
    ExecutorCaps,
    ExecutorState,
    Fused,
    IntentState,
    QueryPlan,
    RetrievedList,
    ScoredRecord,
)
from agentic_search.wire.records import VIA_KEY


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


def test_a_stores_answer_becomes_hits_once_and_keeps_the_edge_it_was_reached_by():
    # GIVEN what a store port returns: records with scores, a graph hit naming its edge
    records = [
        ScoredRecord("d1", 0.9, {}),
        ScoredRecord("d2", 0.7, {VIA_KEY: "mention:d1", "title": "payload is not carried"}),
        ScoredRecord("d3", 0.5, {"title": "t"}),
    ]
    # WHEN they become the source's answer
    res = RetrievedList(name="graph", system="qdrant")
    res.add_hits(records)
    # THEN each is a hit ranked from 1 with its raw score, the edge kept, payloads dropped
    assert [(h.id, h.score, h.rank, h.via) for h in res.hits] == [
        ("d1", 0.9, 1, None),
        ("d2", 0.7, 2, "mention:d1"),
        ("d3", 0.5, 3, None),
    ]
    assert res.total == 3
    # AND the answer crosses a step as JSON and comes back equal
    assert RetrievedList.model_validate_json(res.model_dump_json(by_alias=True)) == res


def test_pruning_keeps_ranks_and_total_and_leaves_the_source_list_whole():
    res = RetrievedList(name="sparse:bm25", system="qdrant", round=2, weight=0.5)
    res.add_hits([ScoredRecord(f"d{i}", 1.0 - i / 10, {}) for i in range(1, 6)])
    kept = res.pruned({"d2", "d5"})
    assert [(h.id, h.rank) for h in kept.hits] == [("d2", 2), ("d5", 5)]
    assert (kept.total, kept.round, kept.weight) == (5, 2, 0.5)
    assert len(res.hits) == 5
