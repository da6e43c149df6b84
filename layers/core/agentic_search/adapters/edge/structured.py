"""The structured source over Qdrant Edge: hard filters and each preference pushed down as an
Edge payload filter (preferences as ``should``, as on a Qdrant server: Edge evaluates them in
the engine), then ranked by the preferences matched
(:func:`agentic_search.logic.structured.rank_structured`)."""

from __future__ import annotations

from collections.abc import Sequence

import qdrant_edge as qe

from agentic_search.adapters.edge.filters import conditions, to_edge
from agentic_search.adapters.edge.store import EdgeStore
from agentic_search.logic.filters import validate_filters
from agentic_search.logic.schema import DomainSchema
from agentic_search.logic.structured import rank_scanned, ranking_fields
from agentic_search.wire import Filter, ScoredRecord


class EdgeStructuredStore:
    """Filter-and-rank retrieval over an :class:`EdgeStore`'s payloads."""

    system = "qdrant"  # the engine family (a closed set in the response contract)
    #: scrolls run in this process holding the GIL (``source_pool.runs_in_process``)
    in_process = True

    def __init__(self, store: EdgeStore) -> None:
        self.store = store

    def find(
        self,
        schema: DomainSchema,
        filters: Sequence[Filter],
        preferences: Sequence[Filter],
        top_k: int,
        exclude_ids: Sequence[str] = (),
    ) -> list[ScoredRecord]:
        """Scroll the admitted records (at most ``SCAN_CAP``) and rank them.

        Raises:
            FilterError: when a filter or a preference is not allowed.
        """
        validate_filters(schema, preferences)
        must, must_not = conditions(schema, filters, exclude_ids)
        should = [to_edge(schema, [p]) for p in preferences] or None
        flt = (
            qe.Filter(must=must or None, must_not=must_not or None, should=should)
            if must or must_not or should
            else None
        )
        payloads = self.store.scroll(schema, ranking_fields(schema, preferences), flt=flt)
        return rank_scanned(schema, payloads, preferences, top_k)


__all__ = ["EdgeStructuredStore"]
