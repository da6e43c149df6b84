"""The result cache's gate ahead of the graph (``SearchService.cached``): a miss is handed to
the walk, so a search the gate missed asks the cache once, not again in CacheCheck."""

from __future__ import annotations

from pathlib import Path

from conftest import make_settings
from support.homes import copy_home

from agentic_search.adapters.caches import SqliteCache
from agentic_search.service import SearchService


class _CountingCache(SqliteCache):
    """The embedded SQLite cache, counting its lookups."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.gets = 0

    def get(self, key):  # type: ignore[no-untyped-def]
        self.gets += 1
        return super().get(key)


def test_a_miss_at_the_gate_is_looked_up_once_and_the_next_search_is_a_hit(
    tools_engine: SearchService, embedder, tmp_path: Path
):
    """GIVEN a copy of the indexed bundled catalog and a fresh service (store not open)
    WHEN the gate misses a query and the same query is then searched (what the CLI does)
    THEN the cache was asked once for both, the walk did not run CacheCheck, and the answer
    was stored: a fresh service's gate answers it, with the same candidates."""
    home = tmp_path / "home"
    copy_home(Path(tools_engine.deps.settings.agentic_search_home), home)
    # no round stopped for a busy host's latency budget: such an answer is not stored
    settings = make_settings(home, round_budget_ms=100_000_000, source_timeout_s=600)
    cache = _CountingCache(tmp_path / "cache.sqlite")
    svc = SearchService.create(settings, "tools", embedder=embedder, cache=cache)
    try:
        assert svc.cached("free code editor") is None
        assert cache.gets == 1
        resp = svc.search("free code editor")
        assert cache.gets == 1  # neither search()'s gate nor CacheCheck asked again
        assert resp.output.candidates and resp.paths["cache"]["hit"] is False
    finally:
        svc.close()
    cache = _CountingCache(tmp_path / "cache.sqlite")  # the same file (closing closed the first)
    again = SearchService.create(settings, "tools", embedder=embedder, cache=cache)
    try:
        hit = again.cached("free code editor")
        assert hit is not None and hit.paths["cache"]["hit"] is True
        assert [c.id for c in hit.output.candidates] == [c.id for c in resp.output.candidates]
        # a different request is looked up anew
        assert again.search("free code editor", limit=5).paths["cache"]["hit"] is False
    finally:
        again.close()
