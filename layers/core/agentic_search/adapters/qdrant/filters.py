"""Filters compiled to a Qdrant payload filter (validated against the schema allowlist first).

``contains`` is Qdrant's ``MatchPhrase`` (a full-text index on a server); numbers compare as
numbers (``eq`` on a number is a closed range, so 20 matches a stored 20.0). The caller's
access rule (:class:`~agentic_search.logic.access.AccessFilter`) is one more ``must``
condition (``should``: listed, or no list when the domain's default is public).
"""

from __future__ import annotations

from collections.abc import Sequence

from qdrant_client import models as qm

from agentic_search.logic.access import principals_of, split_access
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
    filters, access = split_access(filters)
    validate_filters(schema, filters)
    must: list[qm.Condition] = []
    must_not: list[qm.Condition] = []
    if access is not None:
        listed = qm.FieldCondition(key=access.field, match=qm.MatchAny(any=principals_of(access)))
        empty = qm.IsEmptyCondition(is_empty=qm.PayloadField(key=access.field))
        must.append(qm.Filter(should=[listed, empty]) if access.public else listed)
        must_not += [
            qm.FieldCondition(key=k, match=qm.MatchAny(any=list(v))) for k, v in access.denied
        ]
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
