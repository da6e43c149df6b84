"""Keys of the exact-match result and plan caches.

A cached entry is a whole search response. The key is a SHA-256 over the normalized query, the
request's limit and rounds, the domain, the domain schema's content fingerprint (an edited YAML
is another schema, whatever its ``version`` says), the catalog version and the
answer-shaping settings of the process (LLM provider and model, HyDE and LLM rounds, embedder,
reranker, round and fusion settings: :attr:`agentic_search.config.Settings.answer_settings`),
so an entry never outlives the catalog it was computed on (every write to the index bumps the
catalog version) and a search run with ``LLM=on`` is never served the rules' cached answer.
The match is exact on purpose: "free code editors" and "paid code editors"
are one word apart and need opposite filters, so a semantic (nearest-neighbour) cache would
serve the wrong answer.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from typing import Any


def normalize_query(query: str) -> str:
    """NFKC, case-folded, whitespace collapsed: what makes two queries the same query."""
    return " ".join(unicodedata.normalize("NFKC", query).casefold().split())


def cache_key(
    query: str,
    *,
    limit: int,
    rounds: int | None,
    domain: str,
    schema_fingerprint: str,
    catalog_version: int,
    drop: list[str] | None = None,
    filters: list[dict[str, object]] | None = None,
    settings: dict[str, object] | None = None,
    history: list[dict[str, object]] | None = None,
) -> str:
    """Hex SHA-256 of the normalized query and everything the response depends on
    (``drop``: the parts of the intent left out, in any order; none keeps the key of a
    request without them; ``settings``: the answer-shaping settings, JSON-serializable, none
    for none; ``history``: :func:`history_material` of the conversation, none keeping the key
    of a request without one)."""
    material = json.dumps(
        {
            "q": normalize_query(query),
            "limit": limit,
            "rounds": rounds,
            "domain": domain,
            "schema": schema_fingerprint,
            "catalog": catalog_version,
            **_dropped(drop),
            **_added(filters),
            **({"settings": settings} if settings else {}),
            **({"history": history} if history else {}),
        },
        sort_keys=True,
    )
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


def _dropped(drop: list[str] | None) -> dict[str, list[str]]:
    return {"drop": sorted(set(drop))} if drop else {}


def _added(filters: list[dict[str, object]] | None) -> dict[str, list[str]]:
    """The added filters' part of a key: each as sorted-key JSON, sorted (their order does
    not change the answer); none keeps the key of a request without them."""
    if not filters:
        return {}
    return {"filters": sorted({json.dumps(f, sort_keys=True) for f in filters})}


def history_material(history: list[Any] | None) -> list[dict[str, object]] | None:
    """``SearchRequest.history`` as the cache keys take it: each turn's normalized query and
    its shown ids, in order (the order of turns and of ids changes the reading: "the second
    one"); None for none."""
    if not history:
        return None
    return [{"q": normalize_query(t.query), "ids": list(t.ids)} for t in history]


def added_filters(filters: list[Any] | None) -> list[dict[str, object]] | None:
    """``SearchRequest.filters`` as the plain dicts the cache keys take (None for none)."""
    return [f.wire() for f in filters] if filters else None


def plan_cache_key(
    query: str,
    *,
    domain: str,
    limit: int,
    schema_fingerprint: str,
    catalog_version: int,
    planner: str,
    drop: list[str] | None = None,
    filters: list[dict[str, object]] | None = None,
    history: list[dict[str, object]] | None = None,
) -> str:
    """Key of the exact-match plan cache: ``plan:`` + hex SHA-256 of the normalized query, the
    domain, the limit (topK follows it), the schema's fingerprint, the catalog version, the planner
    (``llm:<model>``: another model may plan differently) and the parts of the intent left
    out (``drop``) and the conversation (``history``: :func:`history_material`). Exact on
    purpose, as for results:
    "free code editors" and "paid code editors" need opposite filters."""
    material = json.dumps(
        {
            "q": normalize_query(query),
            "domain": domain,
            "limit": limit,
            "schema": schema_fingerprint,
            "catalog": catalog_version,
            "planner": planner,
            **_dropped(drop),
            **_added(filters),
            **({"history": history} if history else {}),
        },
        sort_keys=True,
    )
    return "plan:" + hashlib.sha256(material.encode("utf-8")).hexdigest()


__all__ = [
    "added_filters",
    "cache_key",
    "history_material",
    "normalize_query",
    "plan_cache_key",
]
