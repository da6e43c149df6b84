"""Structured sources: records matching hard filters, ranked by matched preferences.

A structured hit has no similarity score, and a constant score (the seed's 0.8) is
meaningless in fusion. So a structured source *ranks* its hits: by how many of the plan's
soft preferences (vocabulary values the intent matched, e.g. functionality in [Code
Completion]) the record satisfies, ties broken by the schema's declared sort field; the score
is the share of preferences matched. The executor fuses it by rank.

Two implementations: MongoDB (``MONGODB_URI``; the catalog collection of the same name as the
domain) and, in the embedded default, the same filters as a Qdrant payload filter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from qdrant_client import models as qm

from agentic_search.adapters.qdrant.store import QdrantStore
from agentic_search.domain.filters import matches, to_mongo, to_qdrant, validate_filters
from agentic_search.domain.schema import DomainSchema
from agentic_search.state import Filter, ScoredRecord

#: Most records a structured source considers before ranking (bounded work per query).
SCAN_CAP = 2000


class StructuredStore(Protocol):
    """Filter-and-rank retrieval over structured fields."""

    system: str

    def find(
        self,
        schema: DomainSchema,
        filters: Sequence[Filter],
        preferences: Sequence[Filter],
        top_k: int,
        exclude_ids: Sequence[str] = (),
    ) -> list[ScoredRecord]:
        """Records admitted by ``filters``, at least one preference matched when any are given,
        ranked (see module docstring), best first, at most ``top_k``."""
        ...


def rank_structured(
    schema: DomainSchema,
    records: Sequence[dict[str, Any]],
    preferences: Sequence[Filter],
    top_k: int,
) -> list[ScoredRecord]:
    """Rank records by preferences matched (desc), then the declared sort field; score in [0, 1].

    Records that match none of a non-empty preference list are dropped.
    """
    sort = schema.structured_sort
    kept: list[tuple[int, dict[str, Any]]] = []
    for rec in records:
        hits = sum(1 for p in preferences if matches(schema, p, rec))
        if preferences and hits == 0:
            continue
        kept.append((hits, rec))
    # Stable sorts, least significant key first: id, then the sort field (missing last), then
    # the number of preferences matched.
    kept.sort(key=lambda it: str(it[1].get(schema.id_field)))
    with_value = [it for it in kept if it[1].get(sort.field) is not None]
    without = [it for it in kept if it[1].get(sort.field) is None]
    with_value.sort(key=lambda it: it[1][sort.field], reverse=sort.order == "desc")
    scored = with_value + without
    scored.sort(key=lambda it: -it[0])
    n = max(1, len(preferences))
    return [
        ScoredRecord(str(rec[schema.id_field]), hits / n if preferences else 1.0, rec)
        for hits, rec in scored[:top_k]
    ]


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
        needed = sorted(
            {schema.id_field, schema.structured_sort.field, *(p.field for p in preferences)}
        )
        records = []
        for payload in self.store.scroll(schema, flt, payload=needed):
            records.append(payload)
            if len(records) >= SCAN_CAP:
                break
        ranked = rank_structured(schema, records, preferences, top_k)
        # Only the ranking fields were read: hand back no payload so the caller fetches the
        # full records it keeps (a handful) instead of trusting a partial one.
        return [ScoredRecord(r.id, r.score, {}) for r in ranked]


class MongoStructuredStore:
    """MongoDB as the structured source (pymongo; the domain's collection in the database)."""

    system = "mongodb"

    def __init__(self, database: Any, collection_prefix: str = "") -> None:
        self.database = database
        self.collection_prefix = collection_prefix

    def find(
        self,
        schema: DomainSchema,
        filters: Sequence[Filter],
        preferences: Sequence[Filter],
        top_k: int,
        exclude_ids: Sequence[str] = (),
    ) -> list[ScoredRecord]:
        """``find`` with the compiled filter (and an ``$or`` of preferences), then rank."""
        validate_filters(schema, preferences)
        query = to_mongo(schema, filters, exclude_ids)
        if preferences:
            any_pref = {"$or": [to_mongo(schema, [p]) for p in preferences]}
            query = {"$and": [query, any_pref]} if query else any_pref
        coll = self.database[f"{self.collection_prefix}{schema.name}"]
        direction = 1 if schema.structured_sort.order == "asc" else -1
        cursor = (
            coll.find(query, projection={"_id": False})
            .sort(schema.structured_sort.field, direction)
            .limit(SCAN_CAP)
        )
        return rank_structured(schema, list(cursor), preferences, top_k)
