"""FuseRerank's placement of a round's pins and bridges (pure: built states, no store)."""

from __future__ import annotations

from agentic_search.logic.text import default_analyzer
from agentic_search.logic.tuning import GraphTuning
from agentic_search.pipeline.fuse_rerank import pin_and_bridge
from agentic_search.wire import (
    ExecutorCaps,
    ExecutorState,
    Fused,
    GraphSource,
    Hit,
    IntentState,
    QueryPlan,
    RetrievedList,
    RoundReport,
    RoundWork,
    SparseSource,
    VectorSource,
)

AN = default_analyzer()


def intent(query: str, bridge: bool) -> IntentState:
    return IntentState(
        query=query, normalized_query=query.lower(), keywords=AN.terms(query), bridge=bridge
    )


def plan(**kw) -> QueryPlan:
    return QueryPlan(
        domain="tools",
        strategy="multi-collection-hybrid",
        vector_sources=[VectorSource(aspect="identity", top_k=30, text="q")],
        sparse_source=SparseSource(text="q", top_k=50),
        fusion="rrf",
        **kw,
    )


def test_only_a_bridge_question_places_a_bridge():
    """GIVEN a round whose plan walks the graph for a bridge and whose walk found a record
    reached from a seed THEN the record is placed for a bridge question and not for
    another (the walk's hits stay what they are: a list of the round)."""
    hits = [Hit(id="x", score=0.9, rank=1, via="mention:a")]
    walk = GraphSource(seeds=["a"], text="q", aspect="identity")
    for bridge in (True, False):
        it = intent("who founded the company that makes a?", bridge)
        state = ExecutorState(plan=plan(limit=10), intent=it, caps=ExecutorCaps())
        work = RoundWork(
            index=2,
            plan=plan(limit=10, graph_source=walk),
            report=RoundReport(round=2, queries=[]),
            started_at=0.0,
        )
        graph = RetrievedList(name="graph", hits=list(hits), query_vector_source="bridge")
        fused = [Fused(x, 1.0 - i / 10, 1.0 - i / 10, i + 1, {}) for i, x in enumerate("abc")]
        out = pin_and_bridge(state, work, [graph], fused, GraphTuning())
        placed = [b.id for b in state.bridges]
        assert placed == (["x"] if bridge else []), bridge
        assert [f.id for f in out] == (["a", "x", "b", "c"] if bridge else ["a", "b", "c"])
