"""Round budgets judge the search, not the process's start-up, and an answer cut short by
the budget is not cached (finding 5)."""

from __future__ import annotations

import time
from typing import Any

from agentic_search.adapters.caches import SqliteCache
from agentic_search.dependencies import Dependencies, ProcessCaches
from agentic_search.service import SearchService


class Clock:
    """``time.time`` and ``time.perf_counter`` running ``offset_s`` ahead of the real ones: a
    start-up can take ten minutes of this clock in no real time."""

    def __init__(self, monkeypatch: Any) -> None:
        self.offset_s = 0.0
        real_time, real_counter = time.time, time.perf_counter
        monkeypatch.setattr(time, "time", lambda: real_time() + self.offset_s)
        monkeypatch.setattr(time, "perf_counter", lambda: real_counter() + self.offset_s)


class SlowStartEmbedder:
    """The real embedder whose start-up (``warm_up``) takes ``delay_s`` longer on ``clock``: a
    cold process on a loaded host."""

    def __init__(self, inner: Any, delay_s: float, clock: Clock) -> None:
        self.inner, self.delay_s, self.clock = inner, delay_s, clock
        self.name, self.dim = inner.name, inner.dim
        self.warmed = False

    def warm_up(self) -> None:
        if not self.warmed:
            self.clock.offset_s += self.delay_s
            self.warmed = True

    def embed_documents(self, texts):
        return self.inner.embed_documents(texts)

    def embed_queries(self, texts):
        return self.inner.embed_queries(texts)

    def count_tokens(self, texts):
        return self.inner.count_tokens(texts)


def _service(tools_engine, tmp_path, budget_ms: float, **adapters: Any) -> SearchService:
    """A service over the session's stores with fresh process caches (no query vector cached: the
    first search embeds), a SQLite result cache and a round budget of ``budget_ms``."""
    base = tools_engine.deps
    settings = base.settings.model_copy(update={"round_budget_ms": budget_ms})
    built = {name: getattr(base, name) for name in ("store", "keyword", "structured", "embedder")}
    given = {**built, "cache": SqliteCache(tmp_path / "cache.sqlite"), **adapters}
    return SearchService(
        Dependencies(settings, base.schema, base._factories, ProcessCaches(), **given)
    )


def test_start_up_work_does_not_count_against_the_round_budget(tools_engine, tmp_path, monkeypatch):
    # GIVEN a process whose model start-up takes 601 s (of a clock that jumps: no real wait),
    # and a 600 s round budget: counted with the start-up, round 1 is over budget; without it,
    # a round would have to take ten minutes, so machine load cannot trip it
    slow = SlowStartEmbedder(tools_engine.deps.embedder, delay_s=601.0, clock=Clock(monkeypatch))
    service = _service(tools_engine, tmp_path, 600_000.0, embedder=slow)
    try:
        # WHEN its first search asks for 3 rounds of a query that needs a second one
        resp = service.search("chatbot for healthcare", rounds=3)
    finally:
        service._runner and service._runner.close()
    rounds = resp.evidence.report.rounds
    # THEN round 1 reports the start-up apart and is not stopped by the budget for it
    assert slow.warmed
    assert rounds[0].stage_ms["setup"] >= 601_000.0 > 600_000.0
    assert rounds[0].stage_ms["round_total"] < rounds[0].stage_ms["setup"]
    assert "budget" not in resp.evidence.report.stop_reason
    assert len(rounds) >= 2


def test_an_answer_cut_short_by_the_budget_is_not_cached(tools_engine, tmp_path):
    # GIVEN a budget no round can meet, over a real SQLite result cache
    service = _service(tools_engine, tmp_path, 0.001)
    try:
        first = service.search("chatbot for healthcare", rounds=3)
        again = service.search("chatbot for healthcare", rounds=3)
    finally:
        service._runner and service._runner.close()
    # THEN the rounds stopped for the budget, and the second request was not served that
    # answer from the cache
    assert first.evidence.report.stop_reason.startswith("round latency budget exceeded")
    assert len(first.evidence.report.rounds) == 1
    assert again.wire().get("cache", {}).get("hit") is not True


def test_a_complete_answer_is_cached(tools_engine, tmp_path):
    # GIVEN a generous budget WHEN the same search runs twice THEN the second is a cache hit
    service = _service(tools_engine, tmp_path, 600_000.0)
    try:
        service.search("vector database for embeddings", rounds=2)
        runner_state = service._runner.run  # the runner's raw state says where it came from
        from agentic_search.wire import SearchRequest

        result = runner_state(SearchRequest(query="vector database for embeddings", rounds=2))
    finally:
        service._runner and service._runner.close()
    assert result.state.cache is not None and result.state.cache.hit
