"""BM25 query vectors (logic/bm25.py): a term's weight is its count in the query, and a
query text built from parts does not repeat what it already says."""

from __future__ import annotations

from agentic_search.logic.bm25 import keyword_query, query_vector, term_index
from agentic_search.logic.text import default_analyzer


def test_query_vector_weighs_each_term_by_its_count() -> None:
    """GIVEN a query saying 'coral' three times and 'reef' once (one as 'corals', the same
    stem) THEN the vector holds coral 3 and reef 1, indices ascending (Lucene and bm25s add a
    term's score once per occurrence; weight 1 per distinct term lost the repeats)."""
    vec = query_vector(default_analyzer(), "coral reef, coral and the corals")
    weights = dict(zip(vec.indices, vec.values, strict=True))
    assert weights == {term_index("coral"): 3.0, term_index("reef"): 1.0}
    assert vec.indices == sorted(vec.indices)
    assert query_vector(default_analyzer(), "the and of").indices == []


def test_keyword_query_adds_only_what_the_text_does_not_say() -> None:
    """GIVEN a query with a quoted phrase and a corrected name THEN the phrase (whole words,
    any case) is not written again and the name is appended once."""
    query = 'a "Pair Programmer" for vim'
    assert keyword_query(query, "pair programmer", "GitHub Copilot", "vim") == (
        f"{query} GitHub Copilot"
    )
    assert keyword_query("pair programmers", "pair programmer") == (
        "pair programmers pair programmer"
    )
    assert keyword_query("", "x", " ", "x") == "x"
