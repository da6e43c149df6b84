"""Whether a search response came from any source at all.

A source that fails or times out is listed in the response's ``errors`` and the others still
answer: a partial answer is a 200. When *every* retrieval source failed, the response would be
an empty list that looks like "nothing matches" although nothing was asked: the HTTP API
answers 503 instead and the CLI exits 1, both naming the failed sources.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: executionStats counters of the queries that answered (failed sources are not counted).
_ANSWERED = ("vectorQueriesExecuted", "structuredQueriesExecuted", "sparseQueriesExecuted")


def unanswered(response: Mapping[str, Any]) -> list[str]:
    """The failed sources (each once, in order) when no retrieval source answered the search;
    an empty list when at least one did, when nothing failed, or for a cached response."""
    errors = response.get("errors") or []
    if not errors or response.get("candidates"):
        return []
    stats = response.get("executionStats") or {}
    if any(int(stats.get(key) or 0) > 0 for key in _ANSWERED):
        return []
    return list(dict.fromkeys(str(e.get("source", "?")) for e in errors))


def unavailable_message(failed: list[str], errors: list[Mapping[str, Any]]) -> str:
    """One line for people: which sources failed and the first reason of each."""
    reasons: dict[str, str] = {}
    for e in errors:
        src = str(e.get("source", "?"))
        reasons.setdefault(src, f"{e.get('error', 'Error')}: {e.get('message', '')}".strip())
    parts = [f"{src} ({reasons.get(src, '')[:120]})" for src in failed]
    return "no source could answer the search: " + "; ".join(parts)


__all__ = ["unanswered", "unavailable_message"]
