"""The one runner's options on the bundled catalog (Qdrant Edge, MiniLM): warm-up and the
executor's tests walk the search ASL from PrepareRound with the result cache off, and the
walk answers the same whether the states pass objects or JSON."""

from __future__ import annotations

from pathlib import Path

from agentic_search.adapters.caches import SqliteCache
from agentic_search.pipeline.catalog import extract_by_rules
from agentic_search.pipeline.runner import LocalRunner, RunOptions, from_plan
from agentic_search.service import SearchService
from agentic_search.wire import SearchRequest


def test_a_walk_from_prepare_round_without_the_cache_runs_the_rounds_and_stores_nothing(
    tools_engine: SearchService, tmp_path: Path
):
    c = tools_engine.deps.derive(cache=SqliteCache(tmp_path / "cache.sqlite"))
    runner = LocalRunner(lambda _: c)
    query = "chatbot for healthcare"
    intent = extract_by_rules(c, query)
    state = from_plan(c, c.planner.plan(intent, limit=10), intent)
    result = runner.walk(state, RunOptions(start_at="PrepareRound", cache=False))
    # GIVEN a query that takes two rounds THEN the walk starts at PrepareRound and loops once
    assert result.trace[0] == "PrepareRound" and result.trace.count("PrepareRound") == 2
    assert result.trace[-3:] == ["Finalize", "CacheStore", "Respond"]
    resp = result.state.built_response
    assert resp is not None and resp.output.candidates
    assert len(resp.evidence.report.rounds) == 2
    # AND nothing was stored: the same request through the whole graph is a miss, then a hit
    request = SearchRequest(query=query, limit=10, domain="tools")
    miss = runner.run(request)
    assert miss.trace[:3] == ["CacheCheck", "CacheHit", "ExtractIntent"]
    hit = runner.run(request)
    assert hit.trace == ["CacheCheck", "CacheHit", "Finalize", "CacheStore", "Respond"]
    # AND with cache=False even a stored answer is not read
    again = runner.run(request, RunOptions(cache=False))
    assert again.trace[:3] == ["CacheCheck", "CacheHit", "ExtractIntent"]


def test_the_walk_answers_the_same_with_json_between_the_states(tools_engine: SearchService):
    request = SearchRequest(query="open source video generator for iOS", limit=10)
    c = tools_engine.deps
    objects = LocalRunner(lambda _: c).run(request, RunOptions(cache=False))
    wire = LocalRunner(lambda _: c, wire=True).run(request, RunOptions(cache=False))
    assert objects.trace == wire.trace
    assert objects.state.response is not None and wire.state.response is not None
    ranked = [(x["id"], x["score"]) for x in objects.state.response["candidates"]]
    assert ranked == [(x["id"], x["score"]) for x in wire.state.response["candidates"]]
    assert ranked and wire.state.built_response is None  # the state crossed JSON
