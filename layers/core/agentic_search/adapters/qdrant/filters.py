"""Filters compiled to a Qdrant payload filter (validated against the schema allowlist first).

``contains`` is Qdrant's ``MatchPhrase`` (a full-text index on a server); numbers compare as
numbers (``eq`` on a number is a closed range, so 20 matches a stored 20.0).
"""

from __future__ import annotations

from collections.abc import Sequence

from qdrant_client import models as qm

from agentic_search.logic.filters import validate_filters
from agentic_search.logic.schema import DomainSchema
from agentic_search.wire import Filter


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
        numeric = schema.fields[key].numeric
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
