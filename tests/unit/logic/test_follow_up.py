"""Follow-up queries read against the conversation by rules (agentic_search.logic.follow_up),
over the bundled catalog's schema and names, with no model (the rules extractor without its
capability matcher)."""

from __future__ import annotations

import pytest

from agentic_search.logic.follow_up import apply, fold, within_first
from agentic_search.logic.intent import CatalogLookup
from agentic_search.logic.intent_rules import RuleBasedIntentExtractor
from agentic_search.logic.schema import DomainSchema
from agentic_search.wire import IntentState, Turn

NEED = "AI code completion tools"
SHOWN = ["augment-code", "cursor", "refact-ai", "github-copilot", "continue", "codeium"]
FREE = ("pricing_model", "in", ["Free", "Freemium", "Open Source"])


@pytest.fixture(scope="module")
def read(tools_schema: DomainSchema, catalog_lookup: CatalogLookup, catalog_by_id):
    """``read(turns..., query)`` -> (the reading, the intent searched)."""
    extractor = RuleBasedIntentExtractor(tools_schema, catalog_lookup)

    def record(rid: str):
        return catalog_by_id.get(rid)

    def go(*turns: str | tuple[str, list[str]], query: str) -> tuple[object, IntentState]:
        history = [
            Turn(query=t, ids=SHOWN) if isinstance(t, str) else Turn(query=t[0], ids=t[1])
            for t in turns
        ]
        reading = fold(history, query, extractor.extract, record, tools_schema)
        intent = apply(extractor.extract(reading.context.text), reading.context, record,
                       tools_schema)  # fmt: skip
        return reading, intent

    return go


def triples(intent: IntentState) -> list[tuple]:
    return [(f.field, f.operator, f.value) for f in intent.constraints]


def test_a_filter_keeps_the_need_adds_the_constraint_and_searches_the_shown_first(read):
    reading, intent = read(NEED, query="only the free ones")
    up = reading.follow_up
    assert up.kind == "filter" and up.turn == 1
    assert up.read_as == f"{NEED} free"
    assert FREE in triples(intent)
    assert "need: AI code completion tools" in up.kept
    assert "pricing_model in [Free, Freemium, Open Source]" in up.added
    assert up.dropped == []
    assert up.within == SHOWN


def test_which_of_those_reads_the_platform_against_the_need(read):
    reading, intent = read(NEED, query="which of those run on Linux?")
    assert reading.follow_up.kind == "filter"
    assert ("platforms", "in", ["Linux"]) in triples(intent)
    assert intent.matches.get("functionality") == ["Code Completion"]


@pytest.mark.parametrize(
    ("query", "excluded"),
    [("not that one", "augment-code"), ("drop the second one", "cursor"),
     ("without Cursor", "cursor"), ("not #3", "refact-ai"),
     ("not that one either", "augment-code"), ("without Cursor too", "cursor"),
     ("no, not the second one either.", "cursor")],
)  # fmt: skip
def test_an_exclusion_names_a_shown_result_or_a_record(read, query, excluded):
    reading, intent = read(NEED, query=query)
    up = reading.follow_up
    assert up.kind == "exclude"
    assert intent.excluded_tools == [excluded]
    assert f"not {excluded}" in up.added
    assert excluded not in up.within and len(up.within) == len(SHOWN) - 1


@pytest.mark.parametrize(
    ("query", "ref"),
    [("more like the second one", "cursor"), ("something like #3", "refact-ai"),
     ("similar to the first result", "augment-code"), ("more like the last one", "codeium")],
)  # fmt: skip
def test_a_reference_to_a_shown_result_is_query_by_example(read, query, ref):
    reading, intent = read(NEED, query=query)
    assert reading.follow_up.kind == "reference"
    assert intent.reference_tool == ref and intent.primary_goal == "alternative-to"
    assert intent.reference_profile  # its category and functionality
    assert "need: AI code completion tools" in reading.follow_up.kept


def test_a_reference_past_the_shown_results_stands_alone(read):
    reading, _ = read((NEED, ["cursor"]), query="more like #7")
    assert reading.follow_up.kind == "standalone"


def test_cheaper_bounds_the_price_under_the_median_of_the_shown(read, catalog_by_id):
    reading, intent = read(NEED, query="cheaper")
    prices = sorted(p for r in SHOWN if (p := catalog_by_id[r].get("price_monthly_usd")) and p > 0)
    median = (prices[len(prices) // 2] + prices[(len(prices) - 1) // 2]) / 2
    assert reading.follow_up.kind == "cheaper"
    assert ("price_monthly_usd", "lt", median) in triples(intent)


def test_what_about_a_preference_keeps_the_need(read):
    reading, intent = read(NEED, query="what about for students?")
    assert reading.follow_up.kind == "preference"
    assert intent.matches.get("user_types") == ["Students"]
    assert intent.matches.get("functionality") == ["Code Completion"]


def test_what_about_a_new_need_keeps_the_hard_constraints(read):
    reading, intent = read("free code completion tools", query="what about image generation?")
    up = reading.follow_up
    assert up.kind == "need" and up.read_as == "image generation"
    assert FREE in triples(intent)
    assert "Code Completion" not in intent.matches.get("functionality", [])
    assert "need: free code completion tools" in up.dropped


def test_a_later_platform_replaces_the_earlier_one(read):
    reading, intent = read(NEED, "only for Windows", query="what about for Linux?")
    platforms = [f.value for f in intent.constraints if f.field == "platforms"]
    assert platforms == [["Linux"]]
    assert reading.follow_up.turn == 2


def test_three_turns_fold_every_constraint(read):
    reading, intent = read(NEED, "only the free ones", query="which of those work offline?")
    assert reading.follow_up.turn == 2
    assert FREE in triples(intent)
    assert ("deployment", "in", ["Local"]) in triples(intent)
    assert "pricing_model in [Free, Freemium, Open Source]" in reading.follow_up.kept


@pytest.mark.parametrize(
    "query",
    ["open source vector database", "Cursor vs Windsurf", "which IDE has the best Python "
     "debugger", "just looking for a vector database for RAG", "any good AI code review tools?",
     "tools that run LLMs on my laptop", "CI/CD pipeline tools", "alternatives to Midjourney"],
)  # fmt: skip
def test_a_query_that_stands_alone_replaces_the_context(read, query):
    reading, intent = read(NEED, query=query)
    up = reading.follow_up
    assert up.kind == "standalone" and up.turn == 0 and up.read_as == query
    assert "need: AI code completion tools" in up.dropped
    assert "Code Completion" not in intent.matches.get("functionality", [])


def test_within_first_is_a_stable_partition():
    ranked = ["a", "b", "c", "d", "e"]
    assert within_first(ranked, ["d", "b", "z"], str) == ["b", "d", "a", "c", "e"]
    assert within_first(ranked, [], str) == ranked


def test_the_cache_keys_carry_the_normalized_history():
    from agentic_search.logic.cache_keys import cache_key, history_material, plan_cache_key

    base = {"limit": 5, "domain": "tools", "schema_fingerprint": "1", "catalog_version": 3}
    plain = cache_key("only the free ones", rounds=None, **base)
    assert cache_key("only the free ones", rounds=None, history=None, **base) == plain
    one = history_material([Turn(query="AI  Code completion", ids=["a", "b"])])
    same = history_material([Turn(query="ai code COMPLETION", ids=["a", "b"])])
    other = history_material([Turn(query="ai code completion", ids=["b", "a"])])
    keyed = cache_key("only the free ones", rounds=None, history=one, **base)
    assert keyed != plain  # a follow-up is never served the query alone's answer
    assert cache_key("only the free ones", rounds=None, history=same, **base) == keyed
    assert cache_key("only the free ones", rounds=None, history=other, **base) != keyed
    plan = {**base, "planner": "llm:x"}
    assert plan_cache_key("q", **plan) != plan_cache_key("q", history=one, **plan)


def test_a_request_without_history_is_the_request_it_was():
    from pydantic import ValidationError

    from agentic_search.wire import SearchRequest

    assert SearchRequest(query="q", history=[]).history is None
    assert "history" not in SearchRequest(query="q").wire()
    with pytest.raises(ValidationError, match="history"):
        SearchRequest(query="q", history=[{"query": "a", "ids": ["x"] * 51}])
    with pytest.raises(ValidationError, match="history"):
        SearchRequest(query="q", history=[{"query": "a"}] * 11)
