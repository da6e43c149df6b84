"""The embedded structured source: hard filters as a Qdrant payload filter, then ranked by the
preferences matched (:func:`agentic_search.logic.structured.rank_structured`)."""

from __future__ import annotations

from collections.abc import Sequence

from qdrant_client import models as qm

from agentic_search.adapters.qdrant.filters import to_qdrant
from agentic_search.adapters.qdrant.store import QdrantStore
from agentic_search.logic.filters import validate_filters
from agentic_search.logic.schema import DomainSchema
from agentic_search.logic.structured import rank_scanned, ranking_fields
from agentic_search.wire import Filter, ScoredRecord


class QdrantPayloadStructuredStore:
    """The embedded default: hard filters as a Qdrant payload filter, preferences as ``should``."""

    system = "qdrant"

    def __init__(self, store: QdrantStore) -> None:
        self.store = store

    def find(
        self,
        schema: DomainSchema,
        filters: Sequence[Filter],
        preferences: Sequence[Filter],
        top_k: int,
        exclude_ids: Sequence[str] = (),
    ) -> list[ScoredRecord]:
        """Scroll the admitted records (at most ``SCAN_CAP``) and rank them."""
        validate_filters(schema, preferences)
        base = to_qdrant(schema, filters, exclude_ids) or qm.Filter()
        should: list[qm.Condition] | None = None
        if self.store.server_mode:
            # Each preference is a nested filter in `should` (negative ones count too). Local
            # mode evaluates nested filters slowly in Python, so there the preferences are
            # applied only by the ranking below (which drops records matching none).
            should = [to_qdrant(schema, [p]) for p in preferences] or None  # type: ignore[misc]
        flt = qm.Filter(must=base.must, must_not=base.must_not, should=should)
        payloads = self.store.scroll(schema, ranking_fields(schema, preferences), flt=flt)
        return rank_scanned(schema, payloads, preferences, top_k)
