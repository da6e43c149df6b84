"""What each round asks: the HyDE switch, round 1's plan and later rounds' target and
feedback queries, by hand."""

from __future__ import annotations

from support.builders import LOCAL, QUERY, ev, intent_for, plan_with

from agentic_search.logic.executor.queries import hyde_status
from agentic_search.logic.executor.rounds import executor_gate, prepare_round_queries
from agentic_search.logic.schema import DomainSchema, load_schema
from agentic_search.wire import (
    Coverage,
    CoverageItem,
    ExecutorCaps,
    ExecutorState,
    Filter,
    IntentState,
)

# ----- 9. HyDE switch ----------------------------------------------------------------------------


class FakeHyde:
    name = "fake"

    def generate(self, query: str) -> str:
        return f"a passage about {query}"


def test_hyde_status() -> None:
    """GIVEN no generator THEN off; literal constraints THEN off; otherwise on (fake)."""
    plain = IntentState(query="q", normalized_query="q")
    assert hyde_status(plain, None) == "off (no LLM configured)"
    exact = plain.model_copy(update={"must_match_exactly": True})
    quoted = plain.model_copy(update={"must_preserve_terms": ["pair programmer"]})
    literal = "off (the query has literal constraints that must match exactly)"
    assert hyde_status(exact, FakeHyde()) == literal
    assert hyde_status(quoted, FakeHyde()) == literal
    assert hyde_status(plain, FakeHyde()) == "on (fake)"


# ----- round queries -----------------------------------------------------------------------------


def test_round1_appends_missing_must_terms_to_sparse_and_no_hyde(
    tools_schema: DomainSchema,
) -> None:
    """GIVEN a plan whose sparse text 'x' lacks the must-preserve term and a HyDE generator
    THEN round 1's sparse text is 'x pair programmer' and HyDE stays off (literal term)."""
    state = executor_gate(plan_with(), intent_for(), tools_schema)
    # the literal term keeps HyDE off, so the pipeline writes no passage
    assert hyde_status(state.intent, FakeHyde()).startswith("off")
    plan, queries = prepare_round_queries(state, tools_schema)
    assert plan is not None
    assert plan.sparse_source is not None
    assert plan.sparse_source.text == "x pair programmer"
    assert len(plan.vector_sources) == 1
    assert plan.round == 1
    assert [(q.text, q.purpose, q.modes) for q in queries] == [
        ("x", "plan", ["dense:identity"]),
        ("x pair programmer", "plan", ["sparse"]),
    ]


def test_round1_hyde_adds_a_dense_source_and_switches_to_rrf(tools_schema: DomainSchema) -> None:
    """GIVEN no literal terms and a HyDE generator
    THEN a third source (hyde passage on the identity aspect, top_k = max(20) = 20) and,
    with 2 + 1 = 3 sources, fusion rrf; 'x' is one query run by dense and sparse."""
    intent = IntentState(query="code helper", normalized_query="code helper")
    state = executor_gate(plan_with(), intent, tools_schema)
    assert hyde_status(intent, FakeHyde()).startswith("on")
    passage = FakeHyde().generate(intent.query)
    plan, queries = prepare_round_queries(state, tools_schema, hyde_passage=passage)
    assert plan is not None
    hyde_vs = plan.vector_sources[-1]
    assert (hyde_vs.aspect, hyde_vs.top_k, hyde_vs.query_vector_source, hyde_vs.text) == (
        "identity",
        20,
        "hyde",
        "a passage about code helper",
    )
    assert plan.fusion == "rrf"
    assert [(q.text, q.purpose, q.modes) for q in queries] == [
        ("x", "plan", ["dense:identity", "sparse"]),
        ("a passage about code helper", "hyde", ["dense:identity"]),
    ]


def test_round2_asks_for_missing_targets_by_weight(tools_schema: DomainSchema) -> None:
    """GIVEN targets constraint, preference, phrase, run, vim (from intent_for) with the
    constraint and vim covered, an empty pool (no RM3 feedback)
    THEN the missing ones by weight: phrase (3), preference (2), run (1):
    sparse = the query alone (the phrase and 'runs', the query's surface form of the stem run,
    are in it already: not written again, so no boost), one structured source (plan filters +
    the preference, top_k min(200, max(30, 10*2)) = 30) and one dense coverage query
    'query Code Completion'."""
    state = executor_gate(plan_with([LOCAL]), intent_for(), tools_schema)
    covered = {"deployment in [Local]", "vim"}
    state.coverage = Coverage(
        items=[
            CoverageItem(kind=t.kind, label=t.label, covered=t.label in covered)
            for t in state.targets
        ]
    )
    state.round_index = 1
    plan, queries = prepare_round_queries(state, tools_schema)
    assert plan is not None
    assert plan.round == 2 and plan.fusion == "rrf"
    assert plan.sparse_source is not None
    assert plan.sparse_source.text == QUERY
    assert plan.sparse_source.top_k == 50
    pref = Filter(field="functionality", operator="in", value=["Code Completion"])
    assert [(s.filters, s.preferences, s.top_k) for s in plan.structured_sources] == [
        ([LOCAL], [pref], 30)
    ]
    # the coverage query is the round's dense side: round 1's list is not run again
    assert [(v.aspect, v.top_k, v.query_vector_source, v.text) for v in plan.vector_sources] == [
        ("identity", 20, "coverage", f"{QUERY} Code Completion")
    ]
    assert plan.filters == [LOCAL]
    assert [(q.text, q.target, q.modes) for q in queries[1:]] == [
        ("pair programmer", '"pair programmer"', ["sparse"]),
        (f"{QUERY} Code Completion", "functionality ~ Code Completion", ["dense:identity"]),
        ("functionality in [Code Completion]", "functionality ~ Code Completion", ["structured"]),
        ("runs", "run", ["sparse"]),
    ]
    assert state.asked == ['"pair programmer"', "functionality ~ Code Completion", "run"]
    # asked once and still missing: the same queries are not asked again -> nothing new
    state.round_index = 2
    assert prepare_round_queries(state, tools_schema) == (None, [])


def _feedback_round_state(
    tools_schema: DomainSchema, how: str, dense_weight: float = 0.0
) -> ExecutorState:
    """Round 1 done, every target covered, a pool of four evidence (relevance 0.9, 0.2, 0.7,
    0.5) whose texts give RM3 terms."""
    caps = ExecutorCaps(feedback_vector=how, later_dense_weight=dense_weight)
    state = executor_gate(plan_with(), intent_for(), tools_schema, caps)
    state.coverage = Coverage(
        items=[CoverageItem(kind=t.kind, label=t.label, covered=True) for t in state.targets]
    )
    state.pool = [
        ev("a", rel=0.9, text="neovim plugin for offline completion"),
        ev("b", rel=0.2, text="cloud chat assistant"),
        ev("c", rel=0.7, text="offline model runs on a laptop"),
        ev("d", rel=0.5, text="editor plugin with offline models"),
    ]
    state.round_index = 1
    return state


def test_round2_dense_feedback_is_rocchio_on_the_feedback_documents(
    tools_schema: DomainSchema,
) -> None:
    """GIVEN feedback_vector rocchio (and the default feedback_docs 3, rocchio_alpha 0.8)
    THEN the round's dense query is round 1's dense text ('x', whose vector is cached) moved
    toward the three most relevant evidence (a, c, d: not b), with no new text to embed, and
    the RM3 words go to the sparse query only."""
    state = _feedback_round_state(tools_schema, "rocchio")
    plan, queries = prepare_round_queries(state, tools_schema)
    assert plan is not None and plan.sparse_source is not None
    assert "offline" in plan.sparse_source.text
    assert [
        (v.query_vector_source, v.text, v.feedback_ids, v.feedback_alpha)
        for v in plan.vector_sources
    ] == [("feedback", "x", ["a", "c", "d"], 0.8)]
    assert [q.target for q in queries if q.modes == ["dense:identity"]] == ["Rocchio"]


def test_round2_dense_feedback_embed_and_none(tools_schema: DomainSchema) -> None:
    """GIVEN feedback_vector 'embed' THEN the dense feedback query is the query plus the RM3
    words as text (a new embedding), without feedback ids; GIVEN 'none' (the default) THEN
    no dense query, and the sparse query is the same in both."""
    assert ExecutorCaps().feedback_vector == "none"
    embed = _feedback_round_state(tools_schema, "embed")
    plan, _ = prepare_round_queries(embed, tools_schema)
    assert plan is not None and plan.sparse_source is not None
    [vs] = plan.vector_sources
    words = plan.sparse_source.text.removeprefix(f"{QUERY} ")
    assert vs.text == f"{QUERY} {words}" and vs.feedback_ids == []
    none = _feedback_round_state(tools_schema, "none")
    plan_none, _ = prepare_round_queries(none, tools_schema)
    assert plan_none is not None
    assert plan_none.sparse_source == plan.sparse_source


def test_later_rounds_keep_the_dense_side_when_asked(tools_schema: DomainSchema) -> None:
    """GIVEN an RM3-only round 2 (feedback_vector none, every target covered)
    THEN by default (``later_dense_weight`` 0: on SciFact's train split round 1's dense list
    in such a round cost 0.0034 nDCG@10) the round is the BM25 query with the feedback words;
    with a weight, round 1's dense query 'x' on its aspect (its vector cached) at that weight
    beside it, fused by RRF."""
    assert ExecutorCaps().later_dense_weight == 0.0
    # chosen per domain on its tuning split: tools on (tools_queries tuning), documents off
    assert (
        load_schema("tools").later_dense_weight,
        load_schema("documents").later_dense_weight,
    ) == (
        1.0,
        0.0,
    )
    off, _ = prepare_round_queries(_feedback_round_state(tools_schema, "none"), tools_schema)
    assert off is not None and off.vector_sources == []
    state = _feedback_round_state(tools_schema, "none", dense_weight=0.5)
    plan, queries = prepare_round_queries(state, tools_schema)
    assert plan is not None and plan.sparse_source is not None
    assert [
        (v.aspect, v.query_vector_source, v.text, v.top_k, v.weight) for v in plan.vector_sources
    ] == [("identity", "query_text", "x", 20, 0.5)]
    assert plan.fusion == "rrf"
    assert ("x", "plan", ["dense:identity"]) in [(q.text, q.purpose, q.modes) for q in queries]
    assert "offline" in plan.sparse_source.text
