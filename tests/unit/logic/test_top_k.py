"""How deep a source reads is one rule (`plan_rules.top_k`, over the schema's `tuning.depth`), used
by every planner."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentic_search.logic.plan_rules import top_k
from agentic_search.logic.tuning import DepthTuning
from agentic_search.wire import TOP_K_MAX, TOP_K_MIN
from agentic_search.wire.search import LIMIT_MAX, LIMIT_MIN

LOGIC = Path(__file__).resolve().parents[3] / "layers" / "core" / "agentic_search" / "logic"
#: The defaults (a domain without a tuning: block).
DEPTH = DepthTuning()


@pytest.mark.parametrize(
    ("limit", "source", "floor", "expected"),
    [
        (10, "dense", None, 30),  # the floor wins for a small page
        (40, "dense", None, 80),  # twice the page
        (10, "sparse", None, 50),
        (40, "sparse", None, 120),  # three times the page
        (100, "sparse", None, TOP_K_MAX),  # capped
        (10, "dense", 60, 60),  # an aspect's default_top_k is the floor
        (5, "dense", 1, 10),
        (10, "structured", None, 30),
    ],
)
def test_top_k_is_the_page_times_the_factor_within_the_floor_and_the_cap(
    limit: int, source: str, floor: int | None, expected: int
) -> None:
    assert top_k(DEPTH, limit, source, floor) == expected  # type: ignore[arg-type]


@given(
    limit=st.integers(LIMIT_MIN, LIMIT_MAX),
    source=st.sampled_from(["dense", "sparse", "structured"]),
    floor=st.none() | st.integers(1, 400),
)
def test_every_depth_is_a_valid_top_k(limit: int, source: str, floor: int | None) -> None:
    k = top_k(DEPTH, limit, source, floor)  # type: ignore[arg-type]
    assert TOP_K_MIN <= k <= TOP_K_MAX
    assert k >= min(TOP_K_MAX, limit)  # never fewer hits than the page asks for


def test_no_planner_writes_its_own_depth_rule() -> None:
    """The rule lived in five places; a page-size multiple written anywhere else in logic/
    is a second copy of it."""
    pattern = re.compile(r"limit\s*\*\s*\d")
    copies = [
        f"{p.relative_to(LOGIC)}:{n}"
        for p in LOGIC.rglob("*.py")
        if p.name != "plan_rules.py"
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert copies == []
