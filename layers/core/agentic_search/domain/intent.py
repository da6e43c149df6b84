"""Intent extraction: natural-language query -> :class:`IntentState` in schema vocabularies.

The rule-based extractor (:mod:`.intent_rules`) is the deterministic default (the LLM
extractor sits behind the same :class:`IntentExtractor` protocol). It finds, in order:

1. quoted phrases and catalog product names (must-preserve terms);
2. a reference tool ("like Cursor", "alternative to Copilot", "cheaper than Cursor") and the
   primary goal (find / compare / alternative-to / explain);
3. vocabulary values by canonical name or synonym, longest phrase first, whole words only;
4. hard constraints with negations: pricing ("free", "not paid", "open source"), deployment
   ("works locally", "self-hosted", "not cloud"), price ceilings ("under $20", "cheaper than
   Cursor"), operating systems ("for Linux"), and "not <vocabulary value>" exclusions;
5. a semantic variant (the query without its constraint phrases) and a confidence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from agentic_search.domain.intent_patterns import QUOTED
from agentic_search.domain.schema import DomainSchema
from agentic_search.state import IntentState

MAX_QUERY_CHARS = 1000


class IntentExtractor(Protocol):
    """Turns a query into an IntentState for a domain."""

    name: str

    def extract(self, query: str) -> IntentState:
        """Extract the intent of ``query``."""
        ...


@dataclass(frozen=True)
class CatalogLookup:
    """What the extractor may know of the catalog: names -> ids, and records by id."""

    names: Mapping[str, str]
    record: Callable[[str], dict[str, Any] | None]

    @staticmethod
    def empty() -> CatalogLookup:
        """A lookup that knows no tools."""
        return CatalogLookup(names={}, record=lambda _id: None)


def normalize_query(query: str) -> str:
    """Lowercase, unify quotes and dashes, collapse whitespace."""
    q = query.replace("’", "'").replace("–", "-").replace("—", "-")
    return re.sub(r"\s+", " ", q.strip().lower())


def quoted_phrases(query: str) -> list[str]:
    """The phrases the query puts in straight or curly double quotes (2..100 characters)."""
    return [next(g for g in m.groups() if g) for m in QUOTED.finditer(query)]


def reference_profile(schema: DomainSchema, record: Mapping[str, Any]) -> dict[str, list[str]]:
    """The reference tool's category and functionality values (query by example), by
    vocabulary name; empty vocabularies are left out."""
    profile: dict[str, list[str]] = {}
    for vocab in ("categories", "functionality"):
        fname = schema.vocabulary_fields.get(vocab)
        value = record.get(fname) if fname else None
        values = value if isinstance(value, list) else [value] if value else []
        if values:
            profile[vocab] = [str(v) for v in values]
    return profile
