"""Retrieve (one Map item): run one sub-query's source; a failing source is in the result."""

from __future__ import annotations

import time

from agentic_search.components import Components
from agentic_search.pipeline.sources import run_sources
from agentic_search.state import (
    RetrievedList,
    RetrieveEvent,
    RoundWork,
    SourceError,
    SubQuery,
    elapsed_ms,
)


def retrieve(event: RetrieveEvent, c: Components) -> RetrievedList:
    """Retrieve: the Map item's sub-query run against ``c``'s stores (never raises for a
    failing source). Start-up work done meanwhile (a cold process loading the model or
    opening the store) is reported in ``setup_ms``, so the round budget can leave it out."""
    before = c.memo.setup_ms
    out = retrieve_sub_query(c, event.sub_query)
    out.setup_ms = max(0.0, c.memo.setup_ms - before)
    return out


def retrieve_sub_query(c: Components, sub: SubQuery) -> RetrievedList:
    """Run one sub-query's source; never raises for a failing source (the error is in the
    result)."""
    results, _ = run_sources(c, sub.plan)
    if not results:
        return RetrievedList(
            name=sub.name,
            error=SourceError(source=sub.name, error="EmptyPlan", message="no source"),
        )
    return results[0]


def retrieve_all(c: Components, work: RoundWork) -> RoundWork:
    """Every sub-query of the round in one in-process pass (texts embedded once, sources in
    one bounded pool); the same results as one :func:`retrieve_sub_query` each."""
    t = time.perf_counter()
    before = c.memo.setup_ms
    results, stage = run_sources(c, work.plan)
    work.setup_ms += max(0.0, c.memo.setup_ms - before)
    work.results = results
    work.report.stage_ms.update(stage)
    work.report.stage_ms["retrieve_all"] = elapsed_ms(t)
    return work


__all__ = ["retrieve", "retrieve_all", "retrieve_sub_query"]
