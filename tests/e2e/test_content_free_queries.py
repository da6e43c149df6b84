"""Queries without content (finding 9): only punctuation, emoji or control characters are
refused (422 naming ``query`` at the API, exit 2 at the CLI); a query of stopwords only is
searched and answered honestly: "no good match", confidence 0."""

from __future__ import annotations

import pytest
from support.http import post_search_error

from agentic_search.wire.search import query_problem
from agentic_search_cli.main import main

CONTENT_FREE = ["?!", "\U0001f680\U0001f525", "\u0000", "free\u0007tools", "...  ---", "\x1b[31m"]


@pytest.mark.parametrize("query", CONTENT_FREE)
def test_the_api_refuses_a_content_free_query_naming_the_field(live_url, query):
    code, body = post_search_error(live_url, {"query": query})
    assert code == 422
    assert [d["field"] for d in body["detail"]] == ["query"]
    assert query_problem(query) in body["detail"][0]["message"]


@pytest.mark.parametrize("query", CONTENT_FREE)
def test_the_cli_refuses_a_content_free_query_with_exit_2(capsys, query):
    with pytest.raises(SystemExit) as exit_:
        main(["search", query])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("agentic-search: error: query")


@pytest.mark.parametrize("query", ["the", "to be or not to be", "it is"])
def test_a_stopwords_only_query_is_answered_no_good_match(tools_engine, query):
    out = tools_engine.search(query, limit=5).output
    assert out.confidence == 0.0
    assert out.answer_quality.verdict == "none"
    assert "no searchable words" in out.answer_quality.reason
    assert out.candidates == []


@pytest.mark.parametrize(
    "query", ["R", "C++ IDE", "Cursor", "vector db \U0001f680", "tabs\tand\nnewlines ok"]
)
def test_queries_with_a_word_are_searchable(query):
    assert query_problem(query) is None
