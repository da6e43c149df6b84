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
from agentic_search.logic.tuning import LinkingTuning


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
        # a swapped pair of letters is one edit (OSA), not two: two typos, two edits; the
        # longest name within the budget wins (issue 47 item 6: was Stable Diffusion, 0.88)
        (
            "stabel difusion web ui",
            [("automatic1111-stable-diffusion-webui", "stabel difusion web ui", "fuzzy")],
        ),
        ("stabel difusion", [("stable-diffusion", "stabel difusion", "fuzzy")]),
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


@pytest.mark.parametrize(
    ("query", "typo", "cue"),
    [
        ("midjourny alternatve that runs localy", "alternatve", "alternative"),
        ("something liek Otter", "liek", "like"),
        ("cheapr than Cursor", "cheapr", "cheaper"),
        ("note taking app witout a subscription", "witout", "without"),
        ("Notion altrnatives", "altrnatives", "alternatives"),
    ],
)
def test_a_misspelled_cue_word_is_read_as_the_word(
    catalog_lookup: CatalogLookup, query: str, typo: str, cue: str
) -> None:
    """GIVEN a cue word of the reading misspelt within the names' edit budget (issue 47 item
    5: "alternatve" stayed as written, so no alternative-to search ran)
    THEN it is a correction to the word, listed as a cue link."""
    assert catalog_lookup.linker is not None
    got = catalog_lookup.linker.link(query)
    assert got.corrections.get(typo) == cue, got.corrections
    assert ("cue", cue, typo) in [(lk.kind, lk.id, lk.surface) for lk in got.links]


def test_a_corrected_cue_word_shapes_the_reading(catalog_lookup: CatalogLookup, tools_schema):
    """GIVEN "midjourny alternatve that runs localy" THEN it reads as an alternative to
    Midjourney that runs locally, as the same query spelt right does."""
    x = RuleBasedIntentExtractor(tools_schema, catalog_lookup, today=lambda: date(2026, 11, 24))
    typo = x.extract("midjourny alternatve that runs localy")
    right = x.extract("midjourney alternative that runs locally")
    assert (typo.primary_goal, typo.reference_tool) == ("alternative-to", "midjourney")
    assert (right.primary_goal, right.reference_tool) == ("alternative-to", "midjourney")
    assert [f.label() for f in typo.constraints] == [f.label() for f in right.constraints]


def test_a_correctly_spelt_or_known_word_is_never_bent_into_a_cue(catalog_lookup: CatalogLookup):
    """GIVEN words one edit from a cue word that are words of their own ("lime", "then",
    "without" itself) THEN no correction is made."""
    assert catalog_lookup.linker is not None
    for query in ("lime green theme for the editor", "then export to pdf", "without a bot"):
        got = catalog_lookup.linker.link(query)
        assert not [lk for lk in got.links if lk.kind == "cue"], (query, got.links)


def test_fuzzy_only_for_words_the_corpus_does_not_know():
    index = EntityIndex({"bonn": ["bonn"], "tabby": ["tabby"]})
    known = {"born", "tabbi"}  # analysed terms the keyword index holds
    linker = QueryLinker(
        index,
        {"bonn": "Bonn", "tabby": "Tabby"},
        {},
        lambda ts: {t for t in ts if t in known},
        default_analyzer(),
        tuning=LinkingTuning(),
    )
    # "bonnn" is unknown to the corpus and one edit from a name
    assert [lk.id for lk in linker.link("who was born in bonnn").links] == ["bonn"]
    # a known word is never bent into a name, however close
    assert linker.link("who was born there").links == []
    # no keyword index to ask: no fuzzy linking at all
    blind = QueryLinker(index, {}, {}, None, default_analyzer(), tuning=LinkingTuning())
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
