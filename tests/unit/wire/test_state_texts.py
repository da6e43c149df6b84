"""Each long text once in the state's wire form (agentic_search.wire.texts): a recorded
GradeRound state whose query is a pasted paragraph carries that paragraph once, and parses back
into the very state it was made from.

GIVEN a state whose long query is repeated in the intent, the plan, the retrieved lists, the
round reports and the evidence, WHEN it is made JSON (``SearchState.wire``) and parsed again,
THEN the paragraph occurs once in the JSON and the parsed state equals the original.
"""

from __future__ import annotations

import json

from support.paths import EVENTS

from agentic_search.wire import SearchState
from agentic_search.wire.texts import MIN_CHARS, expand_texts, intern_texts

PARAGRAPH = (
    "open source coding assistant that runs locally in the terminal and in the editor, "
    "with code review, test generation and agents for small teams; "
) * 25


def long_query_state() -> SearchState:
    """The recorded GradeRound input with the paragraph as its query everywhere a query text
    goes (as the steps write it)."""
    state = json.loads((EVENTS / "grade_round/input.json").read_text(encoding="utf-8"))
    state["request"]["query"] = PARAGRAPH
    state["intent"]["query"] = state["intent"]["normalizedQuery"] = PARAGRAPH
    ex = state["executor"]
    ex["intent"]["query"] = ex["intent"]["normalizedQuery"] = PARAGRAPH
    for vs in ex["plan"].get("vectorSources", []):
        vs["text"] = PARAGRAPH
    for r in ex["retrieved"]:
        r["query"] = PARAGRAPH
    for rnd in ex["report"]["rounds"]:
        for q in rnd["queries"]:
            q["text"] = PARAGRAPH
    for ev in ex["pool"]:
        ev["queries"] = [PARAGRAPH]
    return SearchState.model_validate(state)


def test_a_long_query_crosses_the_wire_once_and_parses_back_to_the_same_state():
    state = long_query_state()
    plain = state.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert json.dumps(plain).count(PARAGRAPH) > 10  # the copies the state holds in process
    wire = state.wire()
    assert json.dumps(wire).count(PARAGRAPH) == 1
    assert wire["texts"].count(PARAGRAPH) == 1
    assert len(json.dumps(wire)) < len(json.dumps(plain)) - 10 * len(PARAGRAPH)
    again = SearchState.model_validate(json.loads(json.dumps(wire)))
    assert again == state


def test_a_short_query_state_is_written_as_before():
    state = json.loads((EVENTS / "grade_round/input.json").read_text(encoding="utf-8"))
    parsed = SearchState.model_validate(state)
    assert parsed.wire() == {
        **parsed.model_dump(mode="json", by_alias=True, exclude_none=True),
        "texts": [],
    }


def test_a_string_that_looks_like_a_reference_comes_back_as_written():
    """A query that is literally ``$texts[0]`` and the response (left as written)."""
    state = {"request": {"query": "$texts[0]"}, "response": {"query": "x" * MIN_CHARS}}
    wire = intern_texts(state)
    assert wire["texts"] == ["$texts[0]"]  # listed, so expanding gives the string back
    assert expand_texts(wire) == state
    # the response (the execution's output) is left as it is
    long = {
        "intent": {"q": "y" * MIN_CHARS, "n": "y" * MIN_CHARS},
        "response": {"q": "y" * MIN_CHARS},
    }
    out = intern_texts(long)
    assert out["response"] == long["response"] and out["intent"]["q"] == "$texts[0]"
    assert expand_texts(out) == long
