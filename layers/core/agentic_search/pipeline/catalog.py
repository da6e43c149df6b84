"""The catalog as the intent extractor sees it: names -> record ids, and the rule-based
extractor built on them (kept in the memo until the next write)."""

from __future__ import annotations

from typing import Any

from agentic_search.components import Components
from agentic_search.domain.intent import CatalogLookup
from agentic_search.domain.intent_rules import RuleBasedIntentExtractor
from agentic_search.state import IntentState


def catalog_lookup(c: Components) -> CatalogLookup:
    """Names -> ids of the indexed records (reference tools are resolved through it), read
    once from the store and kept until a write (``memo.forget_catalog``). Only the tools
    domain has named records to refer to."""
    if c.memo.catalog is None:
        schema = c.schema
        names: dict[str, str] = {}
        if schema.name == "tools" and c.store.exists(schema):
            title = schema.title_field
            for p in c.store.scroll(schema, payload=[schema.id_field, title]):
                if p.get(title):
                    names[str(p[title]).lower()] = str(p[schema.id_field])

        def record(rid: str) -> dict[str, Any] | None:
            rec = c.store.get_records(schema, [rid]).get(rid)
            return dict(rec.payload or {}) if rec else None

        c.memo.catalog = CatalogLookup(names=names, record=record)
        c.memo.extractor = None
    return c.memo.catalog


def extract_by_rules(c: Components, query: str) -> IntentState:
    """The rule-based intent of ``query`` over the catalog's names.

    Raises:
        ValueError: for an empty or over-long query.
    """
    lookup = catalog_lookup(c)
    if c.memo.extractor is None:
        c.memo.extractor = RuleBasedIntentExtractor(c.schema, lookup)
    return c.memo.extractor.extract(query)


__all__ = ["catalog_lookup", "extract_by_rules"]
