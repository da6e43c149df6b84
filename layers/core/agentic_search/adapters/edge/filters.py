"""Filters compiled to a Qdrant Edge payload filter (validated against the schema allowlist
first), with the semantics of :func:`agentic_search.adapters.qdrant.filters.to_qdrant`:
``contains`` is a phrase match (a full-text index with phrase matching on such fields),
numbers compare as numbers (``eq`` on a number is a closed range, so 20 matches a stored
20.0), and excluded records are left out by point id. The caller's access rule
(:class:`~agentic_search.logic.access.AccessFilter`) is one more ``must`` condition, its
restricted classes ``must_not`` ones."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import qdrant_edge as qe

from agentic_search.adapters.qdrant.ids import point_id
from agentic_search.logic.access import AccessFilter, principals_of, split_access
from agentic_search.logic.filters import validate_filters
from agentic_search.logic.schema import DomainSchema
from agentic_search.wire import Filter


def _condition(schema: DomainSchema, f: Filter) -> tuple[bool, Any]:
    """``(negated, condition)`` of one validated filter."""
    key, op = f.field, f.operator
    if schema.fields[key].numeric and op in ("eq", "ne"):
        exact = qe.RangeFloat(gte=float(f.value), lte=float(f.value))
        return op == "ne", qe.FieldCondition(key=key, range=exact)
    if op in ("eq", "ne"):
        value = f.value
        if isinstance(value, bool):
            # qdrant-edge-py 0.9.0 reads a Python bool as the integer 0/1 (bool subclasses
            # int), which matches no boolean payload; numpy's bool is read as a bool.
            value = np.bool_(value)
        return op == "ne", qe.FieldCondition(key=key, match=qe.MatchValue(value))
    if op in ("in", "nin"):
        return op == "nin", qe.FieldCondition(key=key, match=qe.MatchAny(list(f.value)))
    if op in ("lt", "lte", "gt", "gte"):
        return False, qe.FieldCondition(key=key, range=qe.RangeFloat(**{op: float(f.value)}))
    if op == "contains":
        return False, qe.FieldCondition(key=key, match=qe.MatchPhrase(f.value))
    raise ValueError(f"operator {op!r} has no Edge form")  # validate_filters rejects it first


def _access(rule: AccessFilter) -> Any:
    """The Edge condition of the caller's access rule: the access list shares a principal,
    or (``public``) the record has no list."""
    listed = qe.FieldCondition(key=rule.field, match=qe.MatchAny(principals_of(rule)))
    if not rule.public:
        return listed
    return qe.Filter(should=[listed, qe.IsEmptyCondition(rule.field)])


def conditions(
    schema: DomainSchema, filters: Sequence[Filter], exclude_ids: Sequence[str] = ()
) -> tuple[list[Any], list[Any]]:
    """``(must, must_not)`` conditions of validated filters and excluded record ids.

    Raises:
        FilterError: when a filter is not allowed (see :func:`validate_filters`).
    """
    filters, access = split_access(filters)
    validate_filters(schema, filters)
    must: list[Any] = []
    must_not: list[Any] = []
    if access is not None:
        must.append(_access(access))
        must_not += [qe.FieldCondition(key=k, match=qe.MatchAny(list(v))) for k, v in access.denied]
    for f in filters:
        negated, cond = _condition(schema, f)
        (must_not if negated else must).append(cond)
    if exclude_ids:
        ids = {point_id(schema.name, str(i)) for i in exclude_ids}
        must_not.append(qe.HasIdCondition(ids))
    return must, must_not


def to_edge(
    schema: DomainSchema, filters: Sequence[Filter], exclude_ids: Sequence[str] = ()
) -> qe.Filter | None:
    """Compile validated filters to an Edge payload filter (None when there is nothing to do).

    Raises:
        FilterError: when a filter is not allowed (see :func:`validate_filters`).
    """
    must, must_not = conditions(schema, filters, exclude_ids)
    if not must and not must_not:
        return None
    return qe.Filter(must=must or None, must_not=must_not or None)


__all__ = ["conditions", "to_edge"]
