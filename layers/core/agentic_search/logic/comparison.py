"""A comparison's answer, pure: the named records side by side in the order named, on the
schema's comparison fields, and their list fields split into what all share and what only
some have (``comparison`` in the domain schema)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentic_search.logic.schema import DomainSchema
from agentic_search.wire import ComparedRecord, Comparison


def _items(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def compare(
    schema: DomainSchema, ids: Sequence[str], payloads: Mapping[str, Mapping[str, Any]]
) -> Comparison | None:
    """The comparison of the records ``ids`` (in order; those without a payload are left
    out), or None when fewer than two remain. Set values compare case-insensitively and keep
    the first record's spelling."""
    present = [rid for rid in dict.fromkeys(ids) if rid in payloads]
    if len(present) < 2:
        return None
    spec = schema.comparison
    title = schema.name_fields[0]
    records = [
        ComparedRecord(
            id=rid,
            name=str(payloads[rid].get(title) or rid),
            values={f: payloads[rid].get(f) for f in [*spec.fields, *spec.sets]},
        )
        for rid in present
    ]
    common: dict[str, list[Any]] = {}
    distinct: dict[str, dict[str, list[Any]]] = {}
    for f in spec.sets:
        keyed = [{str(v).casefold(): v for v in _items(payloads[rid].get(f))} for rid in present]
        shared = set(keyed[0]).intersection(*keyed[1:])
        common[f] = [v for k, v in keyed[0].items() if k in shared]
        distinct[f] = {
            rid: [v for k, v in vals.items() if k not in shared]
            for rid, vals in zip(present, keyed, strict=True)
        }
    return Comparison(
        records=records, fields=[*spec.fields, *spec.sets], common=common, distinct=distinct
    )


__all__ = ["compare"]
