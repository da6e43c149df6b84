"""One error hierarchy for a search that gave no answer (issue 26, item 5).

GIVEN the three ways a search ends without an answer WHEN raised THEN each is a SearchError
carrying the HTTP status the API answers with, its error name and a one-line cause, so every
front door (API, CLI, local runner) catches one class.
"""

from __future__ import annotations

import pytest

from agentic_search.wire.errors import (
    SearchError,
    SearchFailed,
    SearchTimedOut,
    SourcesUnavailable,
)


@pytest.mark.parametrize(
    ("exc", "status", "error"),
    [
        (SearchFailed("TypeError", "the intent step broke"), 502, "TypeError"),
        (SearchTimedOut("ExecutionTimedOut", "ended TIMED_OUT"), 504, "ExecutionTimedOut"),
        (SourcesUnavailable(["dense", "bm25"], []), 503, "SourcesUnavailable"),
    ],
    ids=["failed", "timed-out", "sources"],
)
def test_each_way_a_search_gives_no_answer_is_a_search_error(
    exc: SearchError, status: int, error: str
) -> None:
    assert isinstance(exc, SearchError)
    assert (exc.status, exc.error) == (status, error)
    assert exc.cause and "\n" not in exc.cause
    assert str(exc) == f"{error}: {exc.cause}"


def test_sources_unavailable_names_the_failed_sources() -> None:
    exc = SourcesUnavailable(["dense", "bm25"], [{"source": "dense"}])
    assert exc.failed == ["dense", "bm25"] and exc.errors == [{"source": "dense"}]
    assert exc.cause == "no source answered: dense, bm25"
