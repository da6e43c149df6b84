"""The rule extractor compiles a vocabulary or name pattern only for a phrase the query holds.

Compiling the ~650 vocabulary phrases and the catalog's names up front cost every process that
searched tens of milliseconds (issue 26's uncached CLI search); the extractor now skips a
phrase the normalized query does not contain and compiles the others on first use. Skipping is
sound because a phrase's pattern matches the phrase literally (the property test below).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_search.logic import intent_rules
from agentic_search.logic.intent import CatalogLookup, normalize_query
from agentic_search.logic.intent_patterns import phrase_pattern
from agentic_search.logic.schema import DomainSchema


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The phrases the extractor compiles a pattern for, in order."""
    seen: list[str] = []

    def counting(phrase: str, plural: bool = False) -> Any:
        seen.append(phrase)
        return phrase_pattern(phrase, plural=plural)

    monkeypatch.setattr(intent_rules, "phrase_pattern", counting)
    return seen


def test_construction_compiles_no_pattern(
    compiled: list[str], tools_schema: DomainSchema, catalog_lookup: CatalogLookup
) -> None:
    extractor = intent_rules.RuleBasedIntentExtractor(tools_schema, catalog_lookup)
    assert extractor.vocab and extractor.names  # the phrases are there, not compiled
    assert compiled == []


@pytest.mark.parametrize(
    "query",
    ["free code editor", "open source alternative to Cursor for Linux", "self-hosted CRMs"],
)
def test_a_query_compiles_only_the_phrases_it_holds(
    compiled: list[str],
    tools_schema: DomainSchema,
    catalog_lookup: CatalogLookup,
    query: str,
) -> None:
    extractor = intent_rules.RuleBasedIntentExtractor(tools_schema, catalog_lookup)
    intent = extractor.extract(query)
    q = normalize_query(query)
    assert compiled, "a phrase of the query was matched"
    assert all(phrase in q for phrase in compiled)
    assert len(compiled) < len(extractor.vocab) // 10
    # a second extraction of the same query reuses the compiled patterns
    again = len(compiled)
    assert extractor.extract(query) == intent
    assert len(compiled) == again


@settings(max_examples=300, deadline=None)
@given(
    phrase=st.text(alphabet="ab -.+s", min_size=1, max_size=6),
    text=st.text(alphabet="ab -.+se", max_size=30),
    plural=st.booleans(),
)
def test_a_phrase_pattern_matches_only_where_the_phrase_is(
    phrase: str, text: str, plural: bool
) -> None:
    phrase = phrase.lower()
    if phrase_pattern(phrase, plural=plural).search(text) is not None:
        assert phrase in text
