"""Structured filters: validation against the schema allowlist and evaluation in Python.

The compilers live with their engines: :mod:`agentic_search.adapters.qdrant.filters` (payload
filters) and :mod:`agentic_search.adapters.mongo` (query documents); both validate first.

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

from agentic_search.logic.schema import NUMERIC_TYPES, DomainSchema
from agentic_search.wire import Filter

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
    if kind in NUMERIC_TYPES:
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
    problems = [p for f in filters if not _is_access(f) for p in filter_problems(schema, f)]
    if problems:
        raise FilterError(problems)


def _is_access(f: Filter) -> bool:
    """Whether ``f`` is the caller's access rule (made in process, compiled apart)."""
    from agentic_search.logic.access import AccessFilter

    return isinstance(f, AccessFilter)


def contains_regex(text: str) -> str:
    """The regex for ``contains``: the escaped text as a whole-word phrase (case-insensitive
    is applied by the caller). Whitespace in the text matches any run of whitespace."""
    words = [re.escape(w) for w in text.split()]
    return r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)"


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
