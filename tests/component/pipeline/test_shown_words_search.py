"""Searches of the bundled catalog show the user's words as written (issue 47, item 10): each
candidate's ``matchedKeywords`` (what the CLI's table and the page show) are words of the
query, never a stem, a stopword, "vs" or a trailing dot; the "no good match" banner names a
missing word as typed. The stems stay where matching uses them (``matchedTerms``)."""

from __future__ import annotations

import re

import pytest

from agentic_search_cli.render import why


@pytest.mark.parametrize(
    "query", ["Cursor vs Windsurf", "tool to convert a pdf file", "export product. json."]
)
def test_matched_keywords_are_words_of_the_query(tools_engine, query):
    resp = tools_engine.search(query, limit=10)
    typed = set(re.findall(r"\w+", query))
    shown = [w for c in resp.output.candidates for w in c.provenance.matched_keywords]
    assert shown, "some candidate holds a query word"
    assert set(shown) <= typed - {"vs", "to", "a"}, shown
    for c in resp.output.candidates:  # the table's "why" says the same words
        line = why(c, query)
        if c.provenance.matched_keywords:
            assert "your words " + ", ".join(c.provenance.matched_keywords[:5]) in line
        assert not re.search(r"your words [^;]*\b(vs|to)\b", line), line
        assert "." not in line.split("your words ", 1)[-1].split("; ")[0], line


def test_the_banner_names_a_missing_word_as_typed(tools_engine):
    resp = tools_engine.search("AI tools for bakeries", limit=10)
    reason = resp.output.answer_quality.reason
    assert "in no record: bakeries" in reason, reason
