"""MongoDB as the structured source (pymongo; the domain's collection in the database).

Filters are compiled to a query document from the schema's allowlist only: ``contains`` is a
``$regex`` of the *escaped* text (``re.escape``) between word boundaries, so a user's text
cannot become a pattern, and no ``$``/``.`` field name or operator-shaped value gets through
(the injection hole of the seed's ``_buildMongoFilter``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentic_search.logic.access import principals_of, split_access
from agentic_search.logic.filters import contains_regex, validate_filters
from agentic_search.logic.schema import DomainSchema
from agentic_search.logic.structured import SCAN_CAP, rank_structured
from agentic_search.wire import Filter, ScoredRecord

_MONGO_OPS = {
    "eq": "$eq",
    "ne": "$ne",
    "in": "$in",
    "nin": "$nin",
    "lt": "$lt",
    "lte": "$lte",
    "gt": "$gt",
    "gte": "$gte",
}


def to_mongo(
    schema: DomainSchema, filters: Sequence[Filter], exclude_ids: Sequence[str] = ()
) -> dict[str, Any]:
    """Compile validated filters to a MongoDB query document (``$and`` of conditions).

    Raises:
        FilterError: when a filter is not allowed (see :func:`validate_filters`).
    """
    filters, access = split_access(filters)
    validate_filters(schema, filters)
    clauses: list[dict[str, Any]] = []
    if access is not None:
        listed = {access.field: {"$in": principals_of(access)}}
        if access.public:  # no list: absent, null or empty
            unlisted = [{access.field: None}, {access.field: {"$size": 0}}]
            clauses.append({"$or": [listed, *unlisted]})
        else:
            clauses.append(listed)
        clauses += [{k: {"$nin": list(v)}} for k, v in access.denied]
    for f in filters:
        if f.operator == "contains":
            clauses.append({f.field: {"$regex": contains_regex(f.value), "$options": "i"}})
        else:
            clauses.append({f.field: {_MONGO_OPS[f.operator]: f.value}})
    if exclude_ids:
        clauses.append({schema.id_field: {"$nin": [str(i) for i in exclude_ids]}})
    if not clauses:
        return {}
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


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
        order = [(s.field, 1 if s.order == "asc" else -1) for s in schema.structured_sort]
        cursor = (
            coll.find(query, projection={"_id": False})
            .sort([*order, (schema.id_field, 1)])
            .limit(SCAN_CAP)
        )
        return rank_structured(schema, list(cursor), preferences, top_k)
