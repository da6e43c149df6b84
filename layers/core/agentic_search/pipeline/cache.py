"""CacheCheck and CacheStore: the exact-match result cache around a search.

The key covers the normalized query, limit, rounds, domain, schema fingerprint, catalog version and
the process's answer-shaping settings (:mod:`agentic_search.logic.cache_keys`); a failing
cache is a miss, never a failed search.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from agentic_search.dependencies import Dependencies
from agentic_search.logic.access import AccessPolicy
from agentic_search.logic.cache_keys import added_filters, cache_key, history_material
from agentic_search.ports import CacheError
from agentic_search.wire import (
    BUDGET_STOP,
    CacheInfo,
    Caller,
    SearchRequest,
    SearchState,
    elapsed_ms,
)


def cache_check(state: SearchState, deps: Dependencies) -> SearchState:
    """CacheCheck: look the request up; a hit puts the cached response in the state.
    A failing cache is a miss with ``cache.error`` set (never a failed search)."""
    info, hit = cache_lookup(state.request, deps, state.caller)
    if hit is not None:
        state.response = hit
    state.cache = info
    return state


def cache_lookup(
    req: SearchRequest, deps: Dependencies, caller: Caller | None = None
) -> tuple[CacheInfo, dict[str, Any] | None]:
    """CacheCheck's lookup of ``req`` asked by ``caller`` (None: anonymous; its effective
    access set is part of the key when the domain declares access): what it notes (key,
    backend, catalog version, hit or error) and the cached response (with that note as its
    ``cache``), or None on a miss. A failing cache is a miss with ``error`` set. Needs no
    search state (a cache hit ahead of the graph:
    :meth:`agentic_search.service.SearchService.cached`)."""
    info = CacheInfo()
    try:
        cache = deps.cache
        info.backend = cache.name
        info.catalog_version = cache.catalog_version(req.domain)
        info.key = cache_key(
            req.query,
            limit=req.limit,
            rounds=req.rounds,
            domain=req.domain,
            schema_fingerprint=deps.schema.fingerprint,
            catalog_version=info.catalog_version,
            drop=req.drop,
            filters=added_filters(req.filters),
            settings=deps.settings.answer_settings,
            history=history_material(req.history),
            access=AccessPolicy.of(deps.schema, caller).cache_part,
        )
        start = time.perf_counter()
        hit = cache.get(info.key)
        took = elapsed_ms(start)
    except CacheError as exc:
        info.error = str(exc)
        hit = None
    if hit is not None:
        info.hit = True
        info.lookup_ms = round(took, 2)
        info.computed_at = (hit.get("cache") or {}).get("computedAt")
        hit["cache"] = info.wire()
    return info, hit


def cache_store(state: SearchState, deps: Dependencies) -> SearchState:
    """CacheStore: keep the response unless it came from the cache, has no key, lists errors
    (a partial answer), stopped its rounds for the latency budget (a busy host's answer:
    a later request gets the rounds it asked for) or ran on the rules because the LLM failed
    transiently (a timeout, throttling, missing configuration: the next request may get the
    LLM's reading, as the plan cache already assumes). A cache failure is noted, never
    raised."""
    info, resp = state.cache, state.response
    if info is None or resp is None or info.hit or not info.key or resp.get("errors"):
        return state
    if any(step is not None and step.transient for step in (state.extractor, state.planner)):
        return state
    stop = (resp.get("retrievalReport") or {}).get("stopReason") or ""
    if stop.startswith(BUDGET_STOP):
        return state
    # the stored copy says when it was computed (a hit shows it); the response is unchanged
    stamped = info.model_copy(
        update={"computed_at": datetime.now(UTC).isoformat(timespec="seconds")}
    )
    try:
        deps.cache.put(info.key, {**resp, "cache": stamped.wire()}, deps.settings.cache_ttl_s)
    except CacheError as exc:
        info.error = str(exc)
        resp["cache"] = info.wire()
    return state


__all__ = ["cache_check", "cache_lookup", "cache_store"]
