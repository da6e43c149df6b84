"""The 256 KB state guard (agentic_search.wire.budget) on recorded states of events/, inflated
past the budget: what is trimmed, in which order, that it is reported, and that the result is
still a valid state the next step reads (plans and sub-queries untouched).

GIVEN a state over the budget, WHEN fit_state runs, THEN the state fits, the steps were applied
in the documented order only as far as needed, and retrievalReport.trimmed says what was cut.
"""

from __future__ import annotations

import copy
import json

import pytest
from support.paths import EVENTS

from agentic_search.wire import SearchResponse, SearchState
from agentic_search.wire.budget import (
    QUERY_CHARS,
    RETRIEVE_FIXED_BYTES,
    RETRIEVE_HIT_BYTES,
    SNIPPET_CHARS_TRIMMED,
    STATE_BUDGET_BYTES,
    fit_state,
    map_reserve,
    wire_size,
)

LONG_QUERY = ("open source coding assistant that runs locally in the terminal " * 16)[:1000]


def event(rel: str) -> dict:
    return json.loads((EVENTS / rel).read_text(encoding="utf-8"))


def executor_state(hits_per_list: int = 200, snippet_chars: int = 4000) -> dict:
    """The recorded GradeRound input with long debug query texts, long snippets and every
    retrieved list padded to ``hits_per_list`` hits."""
    state = event("grade_round/input.json")
    ex = state["executor"]
    for ev in ex["pool"]:
        ev["text"] = (ev["text"] + " ") * (snippet_chars // max(1, len(ev["text"])) + 1)
        ev["text"] = ev["text"][:snippet_chars]
        ev["queries"] = [LONG_QUERY]
        for hit in (ev.get("provenance") or {}).get("hits", []):
            hit["query"] = LONG_QUERY
    for r in ex["retrieved"]:
        r["query"] = LONG_QUERY
        r["hits"] = [
            {"id": f"record-{i:04d}", "score": 1.0 / i, "rank": i}
            for i in range(1, hits_per_list + 1)
        ]
    for q in state["round"]["report"]["queries"]:
        q["text"] = LONG_QUERY
    return state


def response_state(candidates: int = 100) -> dict:
    """The recorded CacheStore input with ``candidates`` candidates (copies of the recorded
    ones, ids made unique) whose provenance carries the long query."""
    state = event("cache_store/input.json")
    recorded = state["response"]["candidates"]
    cands = []
    for i in range(candidates):
        cand = copy.deepcopy(recorded[i % len(recorded)])
        cand["id"] = f"{cand['id']}-{i}"
        for hit in cand["provenance"]["hits"]:
            hit["query"] = LONG_QUERY
        cands.append(cand)
    state["response"]["candidates"] = cands
    return state


def test_a_state_under_the_budget_is_left_alone():
    state = event("grade_round/input.json")
    before = copy.deepcopy(state)
    assert fit_state(state) == []
    assert state == before and "trimmed" not in state["executor"]["report"]


def test_debug_query_texts_go_first_and_alone_when_that_is_enough():
    state = executor_state(hits_per_list=20, snippet_chars=300)
    size = wire_size(state)
    budget = size - 1000  # a little over: cutting the query texts is enough
    notes = fit_state(state, budget)
    assert wire_size(state) <= budget
    assert len(notes) == 1 and notes[0].startswith("query texts: ")
    ex = state["executor"]
    hits = [h for ev in ex["pool"] for h in ev["provenance"]["hits"]]
    assert hits and all(len(h["query"]) == QUERY_CHARS for h in hits)
    assert all(len(r["query"]) <= QUERY_CHARS for r in ex["retrieved"])
    assert all(len(q) <= QUERY_CHARS for ev in ex["pool"] for q in ev["queries"])
    assert ex["report"]["trimmed"] == notes


def test_the_steps_run_in_order_until_the_state_fits():
    state = executor_state()
    plan, subs = (
        copy.deepcopy(state["executor"]["plan"]),
        copy.deepcopy(state["round"]["subQueries"]),
    )
    request = copy.deepcopy(state["request"])
    budget = 40 * 1024
    assert wire_size(state) > 3 * budget
    notes = fit_state(state, budget)
    assert wire_size(state) <= budget
    names = [n.split(":", 1)[0] for n in notes]
    assert names == ["query texts", "evidence snippets", "lowest-ranked hits"]
    ex = state["executor"]
    assert all(len(ev["text"]) <= SNIPPET_CHARS_TRIMMED for ev in ex["pool"])
    kept = max(h["rank"] for r in ex["retrieved"] for h in r["hits"])
    assert kept < 200 and f"rank > {kept} dropped" in notes[-1]
    # what the next steps ask is untouched, and the state still parses
    assert ex["plan"] == plan and state["round"]["subQueries"] == subs
    assert state["request"] == request
    parsed = SearchState.model_validate(state)
    assert parsed.executor is not None and parsed.executor.report.trimmed == notes


def test_a_response_drops_its_lowest_ranked_candidates_last_and_says_how_many():
    state = response_state(candidates=100)
    order = [c["id"] for c in state["response"]["candidates"]]
    budget = 60 * 1024
    notes = fit_state(state, budget)
    assert wire_size(state) <= budget
    assert notes[0].startswith("query texts: ")
    assert notes[-1].startswith("lowest-ranked candidates: ")
    kept = [c["id"] for c in state["response"]["candidates"]]
    assert 1 <= len(kept) < 100 and kept == order[: len(kept)]  # the best, in their order
    assert f"(100 -> {len(kept)})" in notes[-1]
    report = state["response"]["retrievalReport"]
    assert report["trimmed"] == notes
    parsed = SearchResponse.from_wire(state["response"])
    assert parsed.evidence is not None and parsed.evidence.report.trimmed == notes
    assert [c.id for c in parsed.output.candidates] == kept


def test_every_step_spent_leaves_at_least_one_candidate_and_reports_it():
    state = response_state(candidates=3)
    notes = fit_state(state, 1024)  # unreachable
    assert wire_size(state) > 1024
    assert len(state["response"]["candidates"]) == 1
    assert notes and state["response"]["retrievalReport"]["trimmed"] == notes


def test_the_map_reserve_counts_each_sub_query_by_its_top_k():
    state = event("prepare_round/round1.json")
    assert map_reserve(state) == 0  # no round prepared yet
    state = event("fuse_rerank/input.json")
    subs = state["round"]["subQueries"]
    reserve = map_reserve(state)
    assert reserve >= len(subs) * (RETRIEVE_FIXED_BYTES + RETRIEVE_HIT_BYTES)
    assert reserve < STATE_BUDGET_BYTES


@pytest.mark.parametrize("budget", [STATE_BUDGET_BYTES, 200 * 1024, 120 * 1024])
def test_the_budget_is_met_at_the_sizes_the_handlers_use(budget):
    state = executor_state(hits_per_list=200, snippet_chars=20000)
    fit_state(state, budget)
    assert wire_size(state) <= budget
