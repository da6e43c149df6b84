"""Structured filters: validation against the schema allowlist, and compilation to MongoDB and
Qdrant.

Every filter is checked before it is compiled: the field must be declared filterable in the
domain schema, the operator must be one that field allows, and values must be scalars of the
field's type (vocabulary fields: canonical vocabulary values only). No dict or operator-shaped
value can get through, so a ``{"$where": ...}`` or a ``$``/``.`` field name is rejected rather
than passed on (the injection hole of the seed's ``_buildMongoFilter``).

``contains`` means: the text occurs as a whole-word phrase, case-insensitively (Qdrant's
``MatchPhrase`` semantics, backed by a full-text index on a server); for MongoDB it is
compiled to a ``$regex`` of the *escaped* text (``re.escape``) between word boundaries, so a
user's text cannot become a pattern. Numbers compare as numbers everywhere (``eq`` on a number
is a closed range in Qdrant, so 20 matches a stored 20.0).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from qdrant_client import models as qm

from agentic_search.domain.schema import DomainSchema
from agentic_search.state import Filter

MAX_CONTAINS_LEN = 200
MAX_IN_VALUES = 50


class FilterError(ValueError):
    """One or more filters are not allowed by the schema; ``reasons`` lists each problem."""

    def __init__(self, reasons: Sequence[str]) -> None:
        self.reasons = list(reasons)
        super().__init__("; ".join(self.reasons))


def _scalar_ok(kind: str, value: Any) -> bool:
    if kind in ("string", "list"):
        return isinstance(value, str)
    if kind == "number":
        return (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and math.isfinite(float(value))
        )
    if kind == "boolean":
        return isinstance(value, bool)
    return False


def filter_problems(schema: DomainSchema, flt: Filter) -> list[str]:
    """Reasons ``flt`` is not allowed by ``schema`` (empty when it is)."""
    fdef = schema.fields.get(flt.field)
    if fdef is None or not fdef.filter:
        return [f"field {flt.field!r} is not filterable in domain {schema.name!r}"]
    if flt.operator not in fdef.filter:
        return [
            f"operator {flt.operator!r} is not allowed on {flt.field!r} (allowed: {fdef.filter})"
        ]
    values: list[Any]
    if flt.operator in ("in", "nin"):
        if not isinstance(flt.value, list) or not flt.value:
            return [f"{flt.field} {flt.operator}: value must be a non-empty list"]
        if len(flt.value) > MAX_IN_VALUES:
            return [f"{flt.field} {flt.operator}: at most {MAX_IN_VALUES} values"]
        values = flt.value
    else:
        values = [flt.value]
    problems = []
    for v in values:
        if not _scalar_ok(fdef.type, v):
            problems.append(f"{flt.field} {flt.operator}: {v!r} is not a {fdef.type} value")
        elif fdef.vocabulary and v not in schema.vocabularies[fdef.vocabulary]:
            problems.append(
                f"{flt.field} {flt.operator}: {v!r} is not in vocabulary {fdef.vocabulary!r}"
            )
    if flt.operator == "contains" and isinstance(flt.value, str):
        if not flt.value.strip():
            problems.append(f"{flt.field} contains: empty text")
        elif len(flt.value) > MAX_CONTAINS_LEN:
            problems.append(f"{flt.field} contains: text over {MAX_CONTAINS_LEN} characters")
    return problems


def validate_filters(schema: DomainSchema, filters: Iterable[Filter]) -> None:
    """Check every filter against the schema allowlist.

    Raises:
        FilterError: listing every problem found.
    """
    problems = [p for f in filters for p in filter_problems(schema, f)]
    if problems:
        raise FilterError(problems)


# ----- MongoDB ---------------------------------------------------------------------------------


def contains_regex(text: str) -> str:
    """The regex for ``contains``: the escaped text as a whole-word phrase (case-insensitive
    is applied by the caller). Whitespace in the text matches any run of whitespace."""
    words = [re.escape(w) for w in text.split()]
    return r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)"


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
    validate_filters(schema, filters)
    clauses: list[dict[str, Any]] = []
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


# ----- Qdrant ----------------------------------------------------------------------------------


def to_qdrant(
    schema: DomainSchema, filters: Sequence[Filter], exclude_ids: Sequence[str] = ()
) -> qm.Filter | None:
    """Compile validated filters to a Qdrant payload filter (None when there is nothing to do).

    Raises:
        FilterError: when a filter is not allowed (see :func:`validate_filters`).
    """
    validate_filters(schema, filters)
    must: list[qm.Condition] = []
    must_not: list[qm.Condition] = []
    for f in filters:
        key = f.field
        op = f.operator
        numeric = schema.fields[key].type == "number"
        if op == "eq" and numeric:
            exact = qm.Range(gte=float(f.value), lte=float(f.value))
            must.append(qm.FieldCondition(key=key, range=exact))
        elif op == "ne" and numeric:
            exact = qm.Range(gte=float(f.value), lte=float(f.value))
            must_not.append(qm.FieldCondition(key=key, range=exact))
        elif op == "eq":
            must.append(qm.FieldCondition(key=key, match=qm.MatchValue(value=f.value)))
        elif op == "ne":
            must_not.append(qm.FieldCondition(key=key, match=qm.MatchValue(value=f.value)))
        elif op == "in":
            must.append(qm.FieldCondition(key=key, match=qm.MatchAny(any=list(f.value))))
        elif op == "nin":
            must_not.append(qm.FieldCondition(key=key, match=qm.MatchAny(any=list(f.value))))
        elif op in ("lt", "lte", "gt", "gte"):
            must.append(qm.FieldCondition(key=key, range=qm.Range(**{op: float(f.value)})))
        elif op == "contains":
            must.append(qm.FieldCondition(key=key, match=qm.MatchPhrase(phrase=f.value)))
    if exclude_ids:
        must_not.append(
            qm.FieldCondition(
                key=schema.id_field, match=qm.MatchAny(any=[str(i) for i in exclude_ids])
            )
        )
    if not must and not must_not:
        return None
    return qm.Filter(must=must or None, must_not=must_not or None)


def matches(schema: DomainSchema, flt: Filter, record: dict[str, Any]) -> bool:
    """Evaluate one validated filter against a record in Python (Mongo/Qdrant semantics:
    a list field matches eq/in when any element does; missing values fail range tests)."""
    value = record.get(flt.field)
    items = value if isinstance(value, list) else [value]
    op = flt.operator
    if op == "eq":
        return flt.value in items
    if op == "ne":
        return flt.value not in items
    if op == "in":
        return any(v in flt.value for v in items)
    if op == "nin":
        return not any(v in flt.value for v in items)
    if op == "contains":
        pattern = re.compile(contains_regex(flt.value), re.IGNORECASE)
        return any(isinstance(v, str) and pattern.search(v) is not None for v in items)
    if value is None or isinstance(value, list | bool | str):
        return False
    return {
        "lt": value < flt.value,
        "lte": value <= flt.value,
        "gt": value > flt.value,
        "gte": value >= flt.value,
    }[op]
