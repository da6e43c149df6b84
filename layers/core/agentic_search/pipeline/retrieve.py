"""Retrieve (one Map item): run one sub-query's source; a failing source is in the result."""

from __future__ import annotations

from agentic_search.dependencies import Dependencies
from agentic_search.pipeline.access import as_caller
from agentic_search.pipeline.sources import run_sources
from agentic_search.wire import (
    RetrievedList,
    RetrieveEvent,
    SourceError,
    SubQuery,
)


@as_caller
def retrieve(event: RetrieveEvent, deps: Dependencies) -> RetrievedList:
    """Retrieve: the Map item's sub-query run against ``deps``'s stores (never raises for a
    failing source). Start-up work done meanwhile (a cold process loading the model or
    opening the store) is reported in ``setup_ms``, so the round budget can leave it out."""
    before = deps.caches.setup_ms
    out = retrieve_sub_query(deps, event.sub_query)
    out.setup_ms = max(0.0, deps.caches.setup_ms - before)
    return out


def retrieve_sub_query(deps: Dependencies, sub: SubQuery) -> RetrievedList:
    """Run one sub-query's source; never raises for a failing source (the error is in the
    result)."""
    results, _ = run_sources(deps, sub.plan)
    if not results:
        return RetrievedList(
            name=sub.name,
            error=SourceError(source=sub.name, error="EmptyPlan", message="no source"),
        )
    return results[0]


__all__ = ["retrieve", "retrieve_sub_query"]
