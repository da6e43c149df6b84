"""The one runner's options on the bundled catalog (Qdrant Edge, MiniLM): warm-up and the
executor's tests walk the search ASL from PrepareRound with the result cache off, and the
walk answers the same whether the states pass objects or JSON."""

from __future__ import annotations

from pathlib import Path

from agentic_search.adapters.caches import SqliteCache
from agentic_search.pipeline.catalog import extract_by_rules
from agentic_search.pipeline.runner import LocalRunner, RunOptions, from_plan
from agentic_search.service import SearchService
from agentic_search.wire import SearchRequest, SearchState


def test_a_walk_from_prepare_round_without_the_cache_runs_the_rounds_and_stores_nothing(
    tools_engine: SearchService, tmp_path: Path
):
    c = tools_engine.deps.derive(cache=SqliteCache(tmp_path / "cache.sqlite"))
    runner = LocalRunner(lambda _: c)
    query = "chatbot for healthcare"
    intent = extract_by_rules(c, query)
    state = from_plan(c, c.planner.plan(intent, limit=10), intent)
    result = runner.run_asl(state, RunOptions(start_at="PrepareRound", cache=False))
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


def test_a_failing_step_hands_on_its_input_as_it_was_in_process(
    tools_engine: SearchService, tmp_path: Path, monkeypatch
):
    """GIVEN the in-process walk (objects between states) and a CacheStore that changes the
    response's cache note and then fails, and a FuseRerank that fails in round 2 after
    changing the state, WHEN a two-round query runs THEN each Catch hands on the step's input
    as it was before the step: the answer is Finalize's (its cache note untouched, the
    error noted), and round 2's failure finalizes with round 1 only."""
    from agentic_search.pipeline import steps

    c = tools_engine.deps.derive(cache=SqliteCache(tmp_path / "cache.sqlite"))
    request = SearchRequest(query="chatbot for healthcare", limit=10, domain="tools")
    clean = LocalRunner(lambda _: c).run(request, RunOptions(cache=False))
    assert clean.state.response is not None
    want = [x["id"] for x in clean.state.response["candidates"]]

    def failing_store(state, comps):
        state.response["cache"] = {"hit": True}  # what the Catch must not keep
        state.response["candidates"] = []
        raise RuntimeError("cache store broke")

    monkeypatch.setitem(steps.FUNCTIONS, "CacheStoreFunction", failing_store)
    result = LocalRunner(lambda _: c).run(request)
    assert result.trace[-3:] == ["Finalize", "CacheStore", "Respond"]
    resp = result.state.response
    assert resp is not None and resp["cache"]["hit"] is False
    assert [x["id"] for x in resp["candidates"]] == want
    assert result.state.cache_error is not None
    assert "cache store broke" in (result.state.cache_error.Cause or "")

    fuse = steps.FUNCTIONS["FuseRerankFunction"]

    def failing_fuse(state, comps):
        if state.need_round().index == 2:
            state.need_executor().round_index = 99  # what the Catch must not keep
            raise RuntimeError("fuse broke")
        return fuse(state, comps)

    monkeypatch.setitem(steps.FUNCTIONS, "FuseRerankFunction", failing_fuse)
    result = LocalRunner(lambda _: c).run(request, RunOptions(cache=False))
    out = result.state.built_response
    assert out is not None and out.output.execution_stats.rounds == 1
    assert any("fuse broke" in (e.message or "") for e in out.output.errors)


def test_a_kept_input_holds_the_executor_collections_by_copy_not_as_json(
    tools_engine: SearchService, monkeypatch
):
    """GIVEN the in-process walk of a two-round query WHEN a Catch-protected step's input is
    kept THEN the evidence pool, the pruned source hits, the fused lists (85% of the state's
    JSON after a round) and the coverage targets and, for FuseRerank, the Map's results and
    the round's sub-queries are not serialized;
    AND a FuseRerank that empties or extends them in round 2 and then fails hands on the
    collections as they were: the answer is the one of a FuseRerank that fails without
    touching them."""
    from agentic_search.pipeline import runner as runner_mod
    from agentic_search.pipeline import steps

    c = tools_engine.deps
    request = SearchRequest(query="chatbot for healthcare", limit=10, domain="tools")
    kept: list[tuple[list[str], list[str], str]] = []  # texts, source names, the JSON
    mapped: list[str] = []
    keep = runner_mod._Tasks.keep

    def spy(self, data):
        out = keep(self, data)
        if isinstance(data, SearchState) and data.executor is not None and data.executor.pool:
            ex = data.executor
            kept.append(([e.text for e in ex.pool], [r.name for r in ex.retrieved], out[0]))
        if isinstance(data, SearchState) and data.round is not None and data.round.results:
            mapped.append(out[0])  # FuseRerank's input: the Map's results
        return out

    monkeypatch.setattr(runner_mod._Tasks, "keep", spy)
    LocalRunner(lambda _: c).run(request, RunOptions(cache=False))
    assert kept  # a round's evidence was kept for a later step
    for texts, names, text in kept:
        assert names and all(t not in text for t in texts if t)
        keys = ("pool", "retrieved", "firstFused", "targets", "subQueries")
        assert not any(f'"{key}"' in text for key in keys)
    assert len(mapped) == 2 and not any('"results"' in text for text in mapped)

    fuse = steps.FUNCTIONS["FuseRerankFunction"]

    def answer(meddle: bool) -> list[tuple[str, float]]:
        def failing_fuse(state, comps):
            if state.need_round().index == 2:
                ex = state.need_executor()
                if meddle:  # what the Catch must not keep
                    for res in state.need_round().results:
                        res.hits = []
                    state.need_round().results.clear()
                    ex.pool.clear()
                    ex.retrieved.clear()
                    ex.first_fused.clear()
                    ex.round_rankings.append(["nothing"])
                    ex.relevance.clear()
                    ex.targets.clear()
                    state.need_round().sub_queries.clear()
                raise RuntimeError("fuse broke")
            return fuse(state, comps)

        monkeypatch.setitem(steps.FUNCTIONS, "FuseRerankFunction", failing_fuse)
        out = LocalRunner(lambda _: c).run(request, RunOptions(cache=False)).state.built_response
        assert out is not None and out.output.execution_stats.rounds == 1
        assert out.evidence is not None and out.evidence.evidence
        return [(x.id, x.score) for x in out.output.candidates] + [
            (e.id, e.relevance or 0.0) for e in out.evidence.evidence
        ]

    assert answer(meddle=True) == answer(meddle=False)
