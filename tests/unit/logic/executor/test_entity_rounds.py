"""Entity-aware rounds, pure: what is fetched by name, pinned, walked and placed; temporal
ranges; complexity; the answer-quality verdict; the comparison block; coverage of named
records."""

from __future__ import annotations

from datetime import date

import pytest
from support.builders import RAG_PARAGRAPH

from agentic_search.logic.comparison import compare
from agentic_search.logic.complexity import complexity, is_bridge
from agentic_search.logic.coverage import DeterministicGrader, EvidenceMatcher, coverage_targets
from agentic_search.logic.executor.entity_rounds import (
    bridges_from,
    entity_source_for,
    graph_source_for,
    seed_weights,
    with_entity_source,
    with_pins_and_bridges,
)
from agentic_search.logic.schema import load_schema
from agentic_search.logic.temporal import year_ranges
from agentic_search.logic.text import default_analyzer
from agentic_search.wire import (
    Bridge,
    EntityLink,
    Evidence,
    ExecutorCaps,
    ExecutorState,
    Fused,
    IntentState,
    QueryPlan,
    SparseSource,
    VectorSource,
)

TOOLS = load_schema("tools")
GRAPH = TOOLS.tuning.graph
AN = default_analyzer()
TODAY = date(2026, 11, 24)


def intent(query: str, goal: str = "find", links=(), **kw) -> IntentState:
    entities = [EntityLink(id=i, name=n, surface=n.lower(), score=s) for i, n, s in links]
    return IntentState(
        query=query,
        normalized_query=query.lower(),
        primary_goal=goal,  # type: ignore[arg-type]
        entities=entities,
        keywords=AN.terms(query),
        **kw,
    )


def plan(**kw) -> QueryPlan:
    return QueryPlan(
        domain="tools",
        strategy="multi-collection-hybrid",
        vector_sources=[
            VectorSource(aspect="identity", top_k=30, text="q"),
            VectorSource(aspect="functionality", top_k=30, text="q"),
        ],
        sparse_source=SparseSource(text="q", top_k=50),
        fusion="rrf",
        **kw,
    )


# ----- entity_state ------------------------------------------------------------------------------


def test_a_comparison_pins_its_named_records_and_asks_their_own_vectors():
    it = intent(
        "Cursor vs Windsurf", "compare", [("cursor", "Cursor", 1.0), ("windsurf", "Windsurf", 1.0)]
    )
    src = entity_source_for(it, GRAPH)
    assert src is not None and src.pin and src.ids == ["cursor", "windsurf"]
    out = with_entity_source(plan(), it, GRAPH)
    assert out.entity_source == src
    # the text vectors give way to the named records' own (their competitors follow them)
    assert [(v.aspect, v.query_vector_source, v.text) for v in out.vector_sources] == [
        ("identity", "reference_tool", "cursor"),
        ("functionality", "reference_tool", "cursor"),
        ("identity", "reference_tool", "windsurf"),
        ("functionality", "reference_tool", "windsurf"),
    ]
    assert out.fusion == "rrf"


def test_what_is_never_fetched_or_pinned():
    # "alternative to X" never returns X; "not Terraform" never fetches Terraform
    alt = intent(
        "free alternative to cursor",
        "alternative-to",
        [("cursor", "Cursor", 1.0)],
        reference_tool="cursor",
    )
    assert entity_source_for(alt, GRAPH) is None
    neg = intent(
        "iac tool that is not terraform",
        links=[("terraform", "Terraform", 1.0)],
        excluded_tools=["terraform"],
    )
    assert entity_source_for(neg, GRAPH) is None
    # a name mentioned in a larger search is not pinned; a lookup is
    find = intent("AI code completion for vs code", links=[("vs-code", "Visual Studio Code", 1.0)])
    assert entity_source_for(find, GRAPH) is None
    look = intent("ollama pricing", links=[("ollama", "Ollama", 1.0)], complexity="simple")
    assert entity_source_for(look, GRAPH).ids == ["ollama"]  # type: ignore[union-attr]
    # a weak link is reported, not fetched
    weak = intent(
        "Cursr vs Windsrf", "compare", [("cursor", "Cursor", 0.7), ("windsurf", "Windsurf", 0.7)]
    )
    assert entity_source_for(weak, GRAPH) is None


def test_placement_pins_first_and_bridges_after_their_anchor():
    ranking = [Fused(x, 1.0 - i / 10, 1.0 - i / 10, i + 1, {}) for i, x in enumerate("abcde")]
    out = with_pins_and_bridges(ranking, ["d", "z"], [Bridge(id="e", after="a", via="mention:a")])
    assert [f.id for f in out] == ["d", "z", "a", "e", "b", "c"]
    # pins carry the top score (they rank above records that scored more)
    assert out[0].score == out[1].score == 1.0
    # a bridge whose anchor is absent goes right after the pins
    assert [
        f.id
        for f in with_pins_and_bridges(ranking, [], [Bridge(id="c", after="q", via="mention:q")])
    ][:2] == [
        "c",
        "a",
    ]
    assert with_pins_and_bridges(ranking, [], []) == ranking


def test_a_bridge_shows_the_score_of_the_record_it_follows_and_scores_never_rise():
    """GIVEN a ranking scored 1.0, 0.9, ... and a bridge reached from the third record
    (issue 47 item 7: a bridge showed the list's best score at #4, after #3 at 0.561)
    THEN it is placed right after that record at that record's score, and the scores shown
    never rise down the list, with pins or without."""
    ranking = [Fused(x, 1.0 - i / 10, 1.0 - i / 10, i + 1, {}) for i, x in enumerate("abcdefg")]
    bridge = Bridge(id="f", after="c", via="mention:c")
    for pins in ([], ["d"], ["z"]):
        out = with_pins_and_bridges(ranking, pins, [bridge])
        ids = [f.id for f in out]
        at = ids.index("f")
        assert ids[at - 1] == "c"
        assert (out[at].score, out[at].fused) == (out[at - 1].score, out[at - 1].fused)
        scores = [f.score for f in out]
        assert scores == sorted(scores, reverse=True), (pins, ids, scores)
    # a bridge new to the ranking, whose anchor is absent: after the pins, at their score
    out = with_pins_and_bridges(ranking, ["b"], [Bridge(id="q", after="zz", via="mention:zz")])
    assert [f.id for f in out][:3] == ["b", "q", "a"]
    assert out[1].score == out[0].score
    scores = [f.score for f in out]
    assert scores == sorted(scores, reverse=True)


def test_a_pasted_paragraph_is_never_a_bridge_question():
    """GIVEN a pasted paragraph with wh-words and a final "?" (issue 47 item 7: it walked
    the graph from its first results and placed an off-topic record at #4)
    THEN it is not a bridge question; a HotpotQA-style question still is."""
    para = intent(RAG_PARAGRAPH)
    assert len(para.keywords) > 24 and para.query.endswith("?")
    assert not is_bridge(para, AN) and not is_bridge(para)
    hop = intent("What government position was held by the woman who portrayed Corliss Archer?")
    assert is_bridge(hop, AN)


def test_the_bridge_round_walks_from_round_ones_best_and_places_one_reached_from_it():
    it = intent("What government position was held by the woman who portrayed Corliss Archer?")
    state = ExecutorState(plan=plan(limit=10), intent=it, caps=ExecutorCaps())
    state.round_rankings = [[f"d{i}" for i in range(30)]]
    gs = graph_source_for(state, "identity", "government position woman Corliss Archer", GRAPH)
    assert gs is not None and gs.seeds == ["d0", "d1", "d2"]
    assert gs.exclude == [f"d{i}" for i in range(10)]
    hits = [
        ("x", 0.9, None),
        ("y", 0.8, "mention:zz"),
        ("z", 0.7, "mention:d0"),
        ("w", 0.6, "mention:d0"),
    ]
    assert bridges_from(hits, gs.seeds, GRAPH) == [
        Bridge(id="z", after="d0", via="mention:d0", score=0.7)
    ]
    state.round_rankings = [[]]
    assert graph_source_for(state, "identity", "q", GRAPH) is None


def test_the_walk_restarts_on_round_ones_top_k_by_score_and_skips_hubs():
    """GIVEN round 1's fused scores 1.0, 0.9, 0.2 for d0..d2
    THEN the bridge walk is seeded from the first three (not only the first), weighted by
    those scores, and refuses hubs: a walked record mentioned by more than 3 records."""
    it = intent("Who directed the film that Shirley Temple starred in?")
    state = ExecutorState(plan=plan(limit=10), intent=it, caps=ExecutorCaps())
    state.round_rankings = [[f"d{i}" for i in range(5)]]
    state.first_fused = [
        Fused(id=f"d{i}", fused=s, score=s, best_rank=i + 1)
        for i, s in enumerate([1.0, 0.9, 0.2, 0.1, 0.05])
    ]
    gs = graph_source_for(state, "identity", "q", GRAPH)
    assert gs is not None
    assert (gs.seeds, gs.weights) == (["d0", "d1", "d2"], [1.0, 0.9, 0.2])
    assert gs.max_mentions == GRAPH.bridge_max_mentions == 3
    # a seed without a fused score weighs 1/rank of the best
    assert seed_weights([0.8, None, 0.0]) == [0.8, 0.4, round(0.8 / 3, 6)]


# ----- complexity and temporal ranges ------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "goal", "links", "extra", "want", "bridge"),
    [
        ("ollama", "find", 1, {}, "simple", False),
        ("windsurf ide", "find", 1, {"matches": {"categories": ["IDE"]}}, "simple", False),
        ("vector database", "find", 0, {}, "simple", False),
        (
            "open source vector database I can self-host",
            "find",
            0,
            {"matches": {"categories": ["Vector Database"]}},
            "moderate",
            False,
        ),
        ("Cursor vs Windsurf", "compare", 2, {}, "complex", False),
        ("Who directed the film that Shirley Temple starred in?", "find", 1, {}, "complex", True),
        ("what is an alternative to cursor?", "alternative-to", 1, {}, "moderate", False),
        # "what is X" names X and asks nothing else: a lookup of X, never a walk
        ("what is e0?", "explain", 1, {}, "simple", False),
        ("What is E0 pricing", "explain", 1, {}, "simple", False),
        # ... but a question about what X relates to is still a bridge question
        ("what is the river that flows through e0?", "explain", 1, {}, "complex", True),
    ],
)
def test_complexity(query, goal, links, extra, want, bridge):
    it = intent(query, goal, [(f"e{i}", f"E{i}", 1.0) for i in range(links)], **extra)
    assert complexity(it, AN) == want
    assert is_bridge(it, AN) is bridge


def test_temporal_ranges_in_whole_years():
    def ranges(q):
        return [(r.start, r.end) for r in year_ranges(q, TODAY)]

    assert ranges("vector database released since 2023") == [(2023, None)]
    assert ranges("tools released in 2024") == [(2024, 2025)]
    assert ranges("video tools from the last 6 months") == [(2026, None)]
    assert ranges("in the last 18 months") == [(2025, None)]
    assert ranges("IDE before 2020") == [(None, 2020)]
    assert ranges("launched after 2022") == [(2023, None)]
    assert ranges("databases between 2015 and 2010") == [(2010, 2016)]
    assert ranges("runs in 512 MB") == []
    # a possessive dates the noun after it, not the record
    assert ranges("summarize last year's sales calls") == []
    assert ranges("notes from this year\u2019s conference") == []
    assert ranges("tools from last year") == [(2025, None)]


# ----- comparison and coverage -------------------------------------------------------------------


def test_comparison_side_by_side_with_common_and_distinct_values():
    payloads = {
        "cursor": {
            "name": "Cursor",
            "pricing_model": "Freemium",
            "price_monthly_usd": 20.0,
            "functionality": ["Chat", "Code Completion", "Debugging"],
            "deployment": ["Cloud"],
        },
        "windsurf": {
            "name": "Windsurf",
            "pricing_model": "Freemium",
            "price_monthly_usd": 15.0,
            "functionality": ["code completion", "Chat"],
            "deployment": ["Cloud"],
        },
    }
    cmp = compare(TOOLS, ["windsurf", "cursor", "gone"], payloads)
    assert cmp is not None
    assert [r.name for r in cmp.records] == ["Windsurf", "Cursor"]  # in the order named
    assert cmp.records[1].values["price_monthly_usd"] == 20.0
    assert cmp.common["functionality"] == ["code completion", "Chat"]
    assert cmp.distinct["functionality"] == {"windsurf": [], "cursor": ["Debugging"]}
    assert compare(TOOLS, ["cursor"], payloads) is None


def ev(rid: str, text: str) -> Evidence:
    return Evidence(
        id=rid, doc_id=rid, title=rid, text=text, tokens=5, fused_score=1.0, relevance=1.0, round=1
    )


def test_a_named_record_is_covered_only_by_its_own_evidence():
    it = intent(
        "Cursor vs Windsurf", "compare", [("cursor", "Cursor", 1.0), ("windsurf", "Windsurf", 1.0)]
    )
    targets = coverage_targets(it, TOOLS, AN)
    assert [(t.kind, t.label) for t in targets] == [("entity", "Cursor"), ("entity", "Windsurf")]
    grader = DeterministicGrader(TOOLS, EvidenceMatcher(TOOLS, AN))
    # Supermaven's and Void's texts mention Cursor and Windsurf: they cover neither
    mentions = [
        ev("supermaven", "From the makers of Cursor and Windsurf."),
        ev("void", "An open Cursor alternative"),
    ]
    cov = grader.grade(targets, mentions)
    assert cov.missing == ["Cursor", "Windsurf"] and cov.confidence < 0.85
    cov = grader.grade(
        targets, [*mentions, ev("cursor", "AI code editor"), ev("windsurf", "agentic IDE")]
    )
    assert cov.missing == [] and cov.confidence >= 0.85


def test_question_and_function_words_are_never_targets():
    it = intent("Which magazine was started first, Arthur's Magazine or First for Women?")
    labels = [t.label for t in coverage_targets(it, load_schema("documents"), AN)]
    assert not {"which", "was", "first"} & set(labels)
    assert "magazin" in labels and "women" in labels
