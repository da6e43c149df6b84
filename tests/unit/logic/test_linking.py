"""Query linking over the bundled catalog: exact names and aliases, naming context, ordinary
words, typos of names and of vocabulary phrases (pure: the catalog's records, no index)."""

from __future__ import annotations

from datetime import date

import pytest

from agentic_search.logic.complexity import with_complexity
from agentic_search.logic.entities import EntityIndex
from agentic_search.logic.intent import CatalogLookup
from agentic_search.logic.intent_rules import RuleBasedIntentExtractor
from agentic_search.logic.linking import QueryLinker, apply_corrections
from agentic_search.logic.text import default_analyzer


def links(lookup: CatalogLookup, query: str) -> list[tuple[str, str, str]]:
    assert lookup.linker is not None
    return [(lk.id, lk.surface, lk.method) for lk in lookup.linker.link(query).links]


@pytest.mark.parametrize(
    ("query", "want"),
    [
        ("Cursor vs Windsurf", [("cursor", "Cursor", "exact"), ("windsurf", "Windsurf", "exact")]),
        ("cursor vs windsurf", [("cursor", "cursor", "exact"), ("windsurf", "windsurf", "exact")]),
        (
            "is Tabnine better than Copilot",
            [("tabnine", "Tabnine", "exact"), ("github-copilot", "Copilot", "exact")],
        ),
        ("vs code extensions", [("vs-code", "vs code", "exact")]),  # an alias
        ("ollama pricing", [("ollama", "ollama", "exact")]),
        ("copilt", [("github-copilot", "copilt", "fuzzy")]),  # a typo of an alias
        ("curser vs windsurf", [("cursor", "curser", "fuzzy"), ("windsurf", "windsurf", "exact")]),
        ("I need a code editor I can continue using offline", []),  # a verb, not the tool
        ("i want to make a video", []),
        ("make a logo for my bakery", []),  # an imperative opening the query, not the tool
        ("make alternatives", [("make", "make", "exact")]),  # a naming context
        ("continue vs cursor", [("continue", "continue", "exact"), ("cursor", "cursor", "exact")]),
        # a swapped pair of letters is one edit (OSA), not two: two typos, two edits
        ("stabel difusion web ui", [("stable-diffusion", "stabel difusion", "fuzzy")]),
        ("langchian agents", [("langchain", "langchian", "fuzzy")]),
    ],
)
def test_query_links(catalog_lookup: CatalogLookup, query: str, want: list) -> None:
    assert [lk for lk in links(catalog_lookup, query) if lk[2] != "vocabulary"] == want


def test_a_misspelled_vocabulary_phrase_is_read_as_the_phrase(
    catalog_lookup: CatalogLookup, tools_schema
):
    assert catalog_lookup.linker is not None
    got = catalog_lookup.linker.link("vectr databse")
    assert got.corrections == {"vectr databse": "vector database"}
    assert [(lk.kind, lk.id) for lk in got.links] == [("vocabulary", "Vector Database")]
    assert apply_corrections("open source vectr databse", got.corrections) == (
        "open source vector database"
    )
    intent = RuleBasedIntentExtractor(tools_schema, catalog_lookup).extract("vectr databse")
    assert intent.matches == {"categories": ["Vector Database"]}


def test_fuzzy_only_for_words_the_corpus_does_not_know():
    index = EntityIndex({"bonn": ["bonn"], "tabby": ["tabby"]})
    known = {"born", "tabbi"}  # analysed terms the keyword index holds
    linker = QueryLinker(
        index,
        {"bonn": "Bonn", "tabby": "Tabby"},
        {},
        lambda ts: {t for t in ts if t in known},
        default_analyzer(),
    )
    # "bonnn" is unknown to the corpus and one edit from a name
    assert [lk.id for lk in linker.link("who was born in bonnn").links] == ["bonn"]
    # a known word is never bent into a name, however close
    assert linker.link("who was born there").links == []
    # no keyword index to ask: no fuzzy linking at all
    blind = QueryLinker(index, {}, {}, None, default_analyzer())
    assert blind.link("bonnn").links == []


def test_intent_of_a_comparison_and_of_a_lookup(catalog_lookup: CatalogLookup, tools_schema):
    x = RuleBasedIntentExtractor(tools_schema, catalog_lookup, today=lambda: date(2026, 11, 24))
    an = default_analyzer()
    cmp = with_complexity(x.extract("is Tabnine better than Copilot"), an)
    assert cmp.primary_goal == "compare" and cmp.complexity == "complex" and not cmp.bridge
    assert [e.id for e in cmp.linked] == ["tabnine", "github-copilot"]
    look = with_complexity(x.extract("windsurf ide"), an)
    assert look.primary_goal == "find" and look.complexity == "simple"
    typo = with_complexity(x.extract("copilt"), an)
    assert typo.must_preserve_terms == ["GitHub Copilot"]  # the typo is asked by its name


def test_the_fuzzy_candidates_are_every_choice_near_in_length_in_order(
    catalog_lookup: CatalogLookup,
):
    """GIVEN the catalog's linker WHEN asked for the names and phrases within k characters of
    a length THEN it gives exactly those of the full list, in the list's order (so a tie
    between equally distant choices still goes to the same one)."""
    linker = catalog_lookup.linker
    assert linker is not None
    choices = linker._choices
    for length in (1, 4, 9, 15, 30):
        for k in (1, 2):
            want = [c for c in choices if abs(len(c) - length) <= k]
            assert linker._within_length(length, k) == want
    assert len(linker._within_length(9, 2)) > 10
