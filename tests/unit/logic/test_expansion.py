"""RM3 expansion terms and the Rocchio vector, worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support.builders import unit

from agentic_search.logic.expansion import rm3_terms
from agentic_search.logic.rocchio import rocchio_vector
from agentic_search.logic.text import default_analyzer

# ----- 3. RM3 expansion terms --------------------------------------------------------------------

FEEDBACK = [
    ("the vector database vector", 3.0),
    ("search engine databases databases", 1.0),
]


def test_rm3_stems_used_below() -> None:
    """Snowball English: database(s) -> databas, engine -> engin; 'the' is a stopword."""
    assert default_analyzer().terms("the vector database databases search engine zebra") == [
        "vector",
        "databas",
        "databas",
        "search",
        "engin",
        "zebra",
    ]


def test_rm3_terms_by_hand() -> None:
    """GIVEN d1 'the vector database vector' (weight 3) and d2 'search engine databases
    databases' (weight 1)
    THEN P(d1) = 3/4, P(d2) = 1/4; |d1| = 3 stems (the stopword 'the' gives none), |d2| = 4:
      vector  = 2/3*3/4             = 0.5
      databas = 1/3*3/4 + 2/4*1/4   = 0.25 + 0.125 = 0.375
      search  = 1/4*1/4             = 0.0625
      engin   = 1/4*1/4             = 0.0625 (tie with search: search appears first)
    with the query stem 'vector' excluded and databas's most frequent surface form
    'databases' (2 vs 1)."""
    a = default_analyzer()
    assert rm3_terms(["vector"], FEEDBACK, 3, a) == ["databases", "search", "engine"]
    assert rm3_terms(["vector"], FEEDBACK, 2, a) == ["databases", "search"]
    assert rm3_terms([], FEEDBACK, 2, a) == ["vector", "databases"]


def test_rm3_ignores_non_positive_weights() -> None:
    """GIVEN extra texts 'yak yak' (weight -2) and 'zebra zebra' (weight 0) first
    THEN they change nothing: had either counted, its stem would be scored (-2/4 or 0) and
    listed among 10 terms; the weight sum stays 3 + 1 = 4, so the list is the same as above."""
    a = default_analyzer()
    assert a.terms("yak zebra") == ["yak", "zebra"]
    fb = [("yak yak", -2.0), ("zebra zebra", 0.0), *FEEDBACK]
    assert rm3_terms(["vector"], fb, 10, a) == ["databases", "search", "engine"]


def test_rm3_empty_cases() -> None:
    """GIVEN n_terms 0 or no feedback THEN no terms."""
    a = default_analyzer()
    assert rm3_terms([], FEEDBACK, 0, a) == []
    assert rm3_terms([], [], 5, a) == []


def test_rm3_returns_each_word_once() -> None:
    """GIVEN the feedback text 'self-hosted vector database' (one word per regex match, the
    analyzer splits 'self-hosted' into self + host)
    THEN every expansion word appears once."""
    a = default_analyzer()
    assert a.terms("self-hosted") == ["self", "host"]
    out = rm3_terms([], [("self-hosted vector database", 1.0)], 5, a)
    assert len(out) == len(set(out))
    assert set(out) == {"self-hosted", "vector", "database"}


def test_rocchio_moves_the_unit_query_toward_the_unit_centroid() -> None:
    """GIVEN q = (2, 0) and feedback (0, 3), (0, 1) (both unit (0, 1) once normalized)
    WHEN alpha 0.8 THEN 0.8 * (1, 0) + 0.2 * (0, 1) = (0.8, 0.2), normalized; alpha 1 gives
    the unit query, alpha 0 the unit centroid, no feedback the unit query."""
    out = rocchio_vector([2.0, 0.0], [[0.0, 3.0], [0.0, 1.0]], 0.8)
    expected = np.array([0.8, 0.2]) / math.hypot(0.8, 0.2)
    assert out.dtype == np.float32
    assert np.allclose(out, expected, atol=1e-6)
    assert np.allclose(rocchio_vector([2.0, 0.0], [[0.0, 3.0]], 1.0), [1.0, 0.0])
    half = 0.5**0.5
    assert np.allclose(rocchio_vector([2.0, 0.0], [[0.0, 3.0], [3.0, 0.0]], 0.0), unit(half, half))
    assert np.allclose(rocchio_vector([0.0, 5.0], [], 0.5), [0.0, 1.0])


def test_rocchio_rejects_bad_alpha_and_mismatched_dimensions() -> None:
    with pytest.raises(ValueError, match="alpha"):
        rocchio_vector([1.0, 0.0], [[0.0, 1.0]], 1.5)
    with pytest.raises(ValueError, match="dimension 3, query 2"):
        rocchio_vector([1.0, 0.0], [[0.0, 1.0, 0.0]], 0.5)
