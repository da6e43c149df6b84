"""What the search state carries between steps: pruned hits and a bounded round-1 list.

The state crosses every step as JSON (in Step Functions and, as a snapshot, in the local
runner), so what it holds beyond what can still be returned is paid for at every step.
"""

from __future__ import annotations

from agentic_search.pipeline.catalog import extract_by_rules
from agentic_search.pipeline.fuse_rerank import fuse_round
from agentic_search.pipeline.plan_query import start_executor
from agentic_search.pipeline.prepare_round import next_round
from agentic_search.pipeline.retrieve import retrieve
from agentic_search.wire import RetrievedList, RetrieveEvent, ScoredRecord


def test_retrieved_list_keeps_only_wanted_hits_with_their_original_ranks():
    # GIVEN a source's five hits
    res = RetrievedList(name="dense:content", system="qdrant", round=2, query="q", weight=0.5)
    res.add_hits([ScoredRecord(f"d{i}", 1.0 - i / 10, {}) for i in range(1, 6)])
    # WHEN it is pruned to two of them
    wire = res.pruned({"d2", "d5"})
    # THEN only those travel, ranked as the source ranked them, and the total is the source's
    assert [(h.id, h.rank) for h in wire.hits] == [("d2", 2), ("d5", 5)]
    assert wire.total == 5 and wire.round == 2 and wire.weight == 0.5
    # AND the source's own list keeps every hit
    assert [h.rank for h in res.hits] == [1, 2, 3, 4, 5]


def test_round_one_list_holds_only_what_can_still_be_returned(tools_engine):
    # GIVEN a search for 5 results (selection pool and rerank top-N 30 by default)
    intent = extract_by_rules(tools_engine.deps, "open source vector database")
    plan = tools_engine.deps.planner.plan(intent, limit=5)
    c = tools_engine.deps
    state = start_executor(c, plan, intent)
    work = next_round(c, state)
    assert work is not None
    # (the Map: one Retrieve per sub-query)
    work.results = [
        retrieve(RetrieveEvent(domain="tools", sub_query=s), c) for s in work.sub_queries
    ]
    made = {(r.name, h.id): h for r in work.results for h in r.hits}
    # WHEN round 1 is fused
    fuse_round(c, state, work)
    # THEN the state keeps max(limit, pool, rerank top-N) fused entries, not the whole list
    keep_n = max(5, state.caps.selection_pool, state.caps.rerank_top_n)
    assert state.candidates_after > keep_n
    assert len(state.first_fused) == keep_n
    assert [f.id for f in state.first_fused] == state.round_rankings[0][:keep_n]
    # AND every kept hit belongs to a kept candidate
    kept = {f.id for f in state.first_fused} | set(state.relaxed_ids)
    assert all(h.id in kept for r in state.retrieved for h in r.hits)
    # AND those are the hits the sources made, not copies converted to and from another type
    assert state.retrieved and all(
        made[(r.name, h.id)] is h for r in state.retrieved for h in r.hits
    )
