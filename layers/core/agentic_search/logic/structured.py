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

from collections.abc import Iterable, Sequence
from itertools import islice
from typing import Any

from agentic_search.logic.filters import matches
from agentic_search.logic.schema import DomainSchema
from agentic_search.wire import Filter, ScoredRecord

#: Most records a structured source considers before ranking (bounded work per query).
SCAN_CAP = 2000


def rank_structured(
    schema: DomainSchema,
    records: Sequence[dict[str, Any]],
    preferences: Sequence[Filter],
    top_k: int,
) -> list[ScoredRecord]:
    """Rank records by preferences matched (desc), then the declared sort fields
    (``structured_sort``, most significant first), then the id; score in [0, 1].

    Records that match none of a non-empty preference list are dropped.
    """
    kept: list[tuple[int, dict[str, Any]]] = []
    for rec in records:
        hits = sum(1 for p in preferences if matches(schema, p, rec))
        if preferences and hits == 0:
            continue
        kept.append((hits, rec))
    # Stable sorts, least significant key first: id, then each sort field from the last
    # declared (missing values last), then the number of preferences matched.
    kept.sort(key=lambda it: str(it[1].get(schema.id_field)))
    scored = kept
    for sort in reversed(schema.structured_sort):
        with_value = [it for it in scored if it[1].get(sort.field) is not None]
        without = [it for it in scored if it[1].get(sort.field) is None]
        with_value.sort(key=lambda it, f=sort.field: it[1][f], reverse=sort.order == "desc")
        scored = with_value + without
    scored.sort(key=lambda it: -it[0])
    n = max(1, len(preferences))
    return [
        ScoredRecord(str(rec[schema.id_field]), hits / n if preferences else 1.0, rec)
        for hits, rec in scored[:top_k]
    ]


def ranking_fields(schema: DomainSchema, preferences: Sequence[Filter]) -> list[str]:
    """The payload fields :func:`rank_structured` reads: the id, the sort fields and every
    preference's field (sorted, each once)."""
    sorts = (s.field for s in schema.structured_sort)
    return sorted({schema.id_field, *sorts, *(p.field for p in preferences)})


def rank_scanned(
    schema: DomainSchema,
    payloads: Iterable[dict[str, Any]],
    preferences: Sequence[Filter],
    top_k: int,
) -> list[ScoredRecord]:
    """:func:`rank_structured` over the first :data:`SCAN_CAP` of ``payloads`` (partial
    payloads holding :func:`ranking_fields`), returned with **no payload**: only the ranking
    fields were read, so the caller fetches the full records it keeps instead of trusting a
    partial one."""
    ranked = rank_structured(schema, list(islice(payloads, SCAN_CAP)), preferences, top_k)
    return [ScoredRecord(r.id, r.score, {}) for r in ranked]
