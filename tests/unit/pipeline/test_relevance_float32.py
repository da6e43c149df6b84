"""The float32 conversion of a stored vector the relevance reads: numpy's, bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_search.pipeline.relevance import float32


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), max_size=400))
def test_a_list_becomes_the_float32_vector_numpy_makes(values: list[float]) -> None:
    """GIVEN any list of floats (tiny, huge beyond float32, inf, NaN, -0.0) WHEN converted
    THEN the float32 bits are numpy's (``np.asarray(values, dtype=np.float32)``), so a cosine
    computed from it is the same to the last bit."""
    with np.errstate(over="ignore"):
        want = np.asarray(values, dtype=np.float32)
    got = float32(values)
    assert got.dtype == np.float32 and got.shape == want.shape
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


def test_what_array_refuses_and_arrays_go_through_numpy() -> None:
    """GIVEN a list holding None (array refuses it) or a numpy vector THEN numpy converts it
    as before: None becomes NaN, an array keeps its values."""
    assert np.isnan(float32([0.5, None])[1])
    vec = np.asarray([0.25, -1.5], dtype=np.float64)
    assert float32(vec).tolist() == [0.25, -1.5]
