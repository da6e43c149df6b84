"""Intent extraction: natural-language query -> :class:`IntentState` in schema vocabularies.

The rule-based extractor (:mod:`.intent_rules`) is the deterministic default (the LLM's
reading is merged with its own). It finds, in order:

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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentic_search.logic.chunking import doc_id_of
from agentic_search.logic.entities import (
    EntityIndex,
    common_words,
    fold,
    link_text,
    lowercase_names,
    named_after,
    record_names,
    short_names,
)
from agentic_search.logic.intent_patterns import CUE_WORDS, QUOTED
from agentic_search.logic.linking import QueryLinker, vocabulary_phrases
from agentic_search.logic.schema import DomainSchema
from agentic_search.logic.text import ENGLISH_STOPWORDS, Analyzer
from agentic_search.wire import ENTITY_KEY, IntentState


@dataclass(frozen=True)
class CatalogLookup:
    """What the extractor may know of the collection: display names (lowercased) -> ids,
    records by id, and the query linker over its entity index (None: no entities)."""

    names: Mapping[str, str]
    record: Callable[[str], dict[str, Any] | None]
    linker: QueryLinker | None = None
    dated: bool = True
    """Whether some record carries the schema's date field (temporal filters on a corpus
    without dates would filter everything out, so they are read only when it does)."""
    dated_count: int = 0
    """How many records carry the schema's date field (0: unknown)."""
    record_count: int = 0
    """How many records the lookup knows (0: unknown)."""

    def dated_note(self, label: str) -> str:
        """What a temporal filter leaves out, for its origin and the plan's rationale:
        " (142 of 284 records carry a released year)" ; "" when every record is dated or the
        counts are unknown."""
        if not self.record_count or self.dated_count >= self.record_count:
            return ""
        return f" ({self.dated_count} of {self.record_count} records carry a {label} year)"

    def derivatives(self, rid: str, typed: str = "", limit: int = 100) -> list[str]:
        """The records named after record ``rid``: a name of theirs holds one of its names,
        or ``typed`` (the reference as the query wrote it: "DynamoDB" for "Amazon
        DynamoDB"), as whole words ("webpack cli", "amazon dynamodb streams"). They are its
        add-ons and plugins, not alternatives to it. Shortest names first, at most
        ``limit``; none for a name under 3 characters or a stopword."""
        if self.linker is not None:
            index = self.linker.index
            pairs = [(n, i) for n in index.names for i in index.ids(n)]
            own = index.names_of(rid)
        else:
            pairs = [(fold(n), i) for n, i in self.names.items()]
            own = [n for n, i in pairs if i == rid]
        seeds = [
            s
            for s in dict.fromkeys([*own, fold(typed)])
            if len(s) >= 3 and s not in ENGLISH_STOPWORDS
        ]
        found: dict[str, int] = {}
        for name, other in pairs:
            if other != rid and seeds and named_after([name], seeds):
                found[other] = min(len(name), found.get(other, len(name)))
        return sorted(found, key=lambda i: (found[i], i))[:limit]

    @staticmethod
    def empty() -> CatalogLookup:
        """A lookup that knows no records."""
        return CatalogLookup(names={}, record=lambda _id: None)

    @staticmethod
    def of(
        schema: DomainSchema,
        payloads: Iterable[Mapping[str, Any]],
        record: Callable[[str], dict[str, Any] | None] | None = None,
        known: Callable[[Sequence[str]], set[str] | None] | None = None,
        analyzer: Analyzer | None = None,
    ) -> CatalogLookup:
        """A lookup over records (payloads with the id, name and alias fields, and the
        ``_entity`` key the link pass writes: its ``common`` words; without any, the common
        words are found in the payloads' link fields when given). ``record`` reads a record
        by id (default: the given payloads); ``known`` is the keyword index's
        :meth:`~agentic_search.ports.KeywordIndex.known_terms` for fuzzy linking."""
        rows = [
            p
            for p in payloads
            if doc_id_of(str(p.get(schema.id_field, ""))) == str(p.get(schema.id_field, ""))
        ]
        by_id = {str(p[schema.id_field]): dict(p) for p in rows}
        named = [(rid, record_names(schema, p)) for rid, p in by_id.items()]
        titles = {rid: str(p.get(schema.name_fields[0]) or rid) for rid, p in by_id.items()}
        stored = [p.get(ENTITY_KEY) for p in rows]
        if any(isinstance(e, dict) for e in stored):
            common = {w for e in stored if isinstance(e, dict) for w in e.get("common", [])}
        else:
            plain = EntityIndex.from_records(named)
            lower = {n for p in rows for n in lowercase_names(schema, p)}
            texts = ((record_names(schema, p), link_text(schema, p)) for p in rows)
            common = common_words(plain.names, texts, lower)
        index = EntityIndex.from_records(named, common)
        linker = None
        if schema.entities is not None:
            link_tuning = schema.tuning.linking
            read = record or by_id.get

            def text_of(rid: str) -> str:
                return link_text(schema, read(rid) or {})

            short = short_names(
                named,
                min_share=link_tuning.brand_prefix_min_share,
                min_names=link_tuning.brand_prefix_min_names,
                text_of=text_of,
            )

            def known_terms(terms: Sequence[str]) -> set[str]:
                got = known(terms) if known is not None else None
                return set(terms) if got is None else got

            linker = QueryLinker(
                index,
                titles,
                vocabulary_phrases(schema.vocabularies),
                known_terms if known is not None else None,
                analyzer,
                CUE_WORDS,
                tuning=link_tuning,
                short=short,
            )
        names = {title.lower(): rid for rid, title in titles.items()}
        temporal = schema.temporal
        dated_count = (
            sum(p.get(temporal.field) is not None for p in by_id.values()) if temporal else 0
        )
        return CatalogLookup(
            names=names,
            record=record or by_id.get,
            linker=linker,
            dated=dated_count > 0,
            dated_count=dated_count,
            record_count=len(by_id),
        )


def with_addons(
    intent: IntentState, lookup: CatalogLookup, limit: int, mentioning: Sequence[str] = ()
) -> IntentState:
    """``intent`` with ``reference_addons``: for "alternative to X", X's add-ons, never an
    alternative to it: the records named after X (:meth:`CatalogLookup.derivatives`), then
    ``mentioning``, the records whose text names X as what they plug into (the caller reads
    them from the entity graph), at most ``limit`` in all, none it excludes already; none for
    any other goal."""
    ref = intent.reference_tool
    if intent.primary_goal != "alternative-to" or not ref:
        if not intent.reference_addons:
            return intent
        return intent.model_copy(update={"reference_addons": []})
    typed = intent.reference_tool_name or ""
    named = lookup.derivatives(ref, typed, limit)
    ids = [i for i in dict.fromkeys([*named, *mentioning]) if i not in intent.excluded_tools]
    return intent.model_copy(update={"reference_addons": [i for i in ids if i != ref][:limit]})


def normalize_query(query: str) -> str:
    """Lowercase, unify quotes and dashes, collapse whitespace."""
    q = query.replace("’", "'").replace("–", "-").replace("—", "-")
    return re.sub(r"\s+", " ", q.strip().lower())


def quoted_phrases(query: str) -> list[str]:
    """The phrases the query puts in straight or curly double quotes (2..100 characters)."""
    return [next(g for g in m.groups() if g) for m in QUOTED.finditer(query)]


def reference_profile(schema: DomainSchema, record: Mapping[str, Any]) -> dict[str, list[str]]:
    """The reference record's values of the schema's reference vocabularies (query by
    example: :attr:`~agentic_search.logic.schema.DomainSchema.reference_vocabularies`), by
    vocabulary name; empty vocabularies are left out."""
    profile: dict[str, list[str]] = {}
    for vocab in schema.reference_vocabularies:
        fname = schema.vocabulary_fields.get(vocab)
        value = record.get(fname) if fname else None
        values = value if isinstance(value, list) else [value] if value else []
        if values:
            profile[vocab] = [str(v) for v in values]
    return profile
