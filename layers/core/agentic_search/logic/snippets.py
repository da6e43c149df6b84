"""Evidence snippets and their token counts, counted once at ingest instead of per search.

An evidence snippet is a record's keyword text without its title, cut at ``snippet_chars``
characters (:func:`evidence_text`); the evidence budget (``max_total_tokens``) is counted in
the embedder's tokens. Word-piece tokenizing the snippets was a visible share of a search's
time (benchmarks/README.md, "Performance notes moved from the code"), so the indexer stores
each record's count for the domain's snippet length (``tuning.executor.snippet_chars``, by
default ``SNIPPET_CHARS``) in the payload under ``TOKENS_KEY``, ``{"chars": 1200, "counter":
<embedder name>, "tokens": n}``. A search uses a stored count only when both the snippet
length and the counter match, and counts the snippet itself otherwise (records written before
this existed, or before the domain's ``snippet_chars`` changed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentic_search.logic.schema import DomainSchema
from agentic_search.logic.text import keyword_text
from agentic_search.wire import SNIPPET_CHARS, TOKENS_KEY


def evidence_text(schema: DomainSchema, payload: Mapping[str, Any]) -> str:
    """The text evidence is cut from: the keyword text of ``payload`` without the title."""
    return keyword_text(schema, {k: v for k, v in payload.items() if k != schema.title_field})


def snippet_token_entries(
    schema: DomainSchema,
    records: Sequence[Mapping[str, Any]],
    count_tokens: Callable[[Sequence[str]], list[int]],
    counter: str,
    *,
    snippet_chars: int,
) -> list[dict[str, Any]]:
    """The ``TOKENS_KEY`` payload entry of each record: ``{"chars", "counter", "tokens"}``,
    with ``tokens`` the count of its snippet by ``count_tokens`` (one call for the batch)."""
    snippets = [evidence_text(schema, r)[:snippet_chars] for r in records]
    counts = count_tokens(snippets) if snippets else []
    return [{"chars": snippet_chars, "counter": counter, "tokens": int(n)} for n in counts]


def stored_snippet_tokens(
    payload: Mapping[str, Any], snippet_chars: int, counter: str
) -> int | None:
    """The stored token count of ``payload``'s snippet, or None when there is none for this
    ``snippet_chars`` and ``counter``."""
    entry = payload.get(TOKENS_KEY)
    if (
        isinstance(entry, dict)
        and entry.get("chars") == snippet_chars
        and entry.get("counter") == counter
        and isinstance(entry.get("tokens"), int)
    ):
        return entry["tokens"]
    return None


__all__ = [
    "SNIPPET_CHARS",
    "TOKENS_KEY",
    "evidence_text",
    "snippet_token_entries",
    "stored_snippet_tokens",
]
