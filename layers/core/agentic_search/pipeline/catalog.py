"""The catalog as the intent extractor sees it: names -> record ids, and the rule-based
extractor built on them (kept in the process caches until the next write)."""

from __future__ import annotations

import threading
from typing import Any

from agentic_search.dependencies import Dependencies
from agentic_search.logic.capabilities import CapabilityMatcher
from agentic_search.logic.embedder_identity import identity_of
from agentic_search.logic.intent import CatalogLookup
from agentic_search.logic.intent_rules import RuleBasedIntentExtractor
from agentic_search.pipeline.embedding import document_vectors
from agentic_search.wire import ENTITY_KEY, IntentState


def catalog_lookup(deps: Dependencies) -> CatalogLookup:
    """The collection's names, records by id and query linker (reference tools and named
    entities are resolved through it), read once from the store and kept until a write
    (``caches.forget_catalog``). A schema without ``entities`` has no named records; its
    declared ``temporal`` field is read all the same."""
    if deps.caches.catalog is None:
        schema = deps.schema

        def record(rid: str) -> dict[str, Any] | None:
            rec = deps.store.retrieve_records(schema, [rid]).get(rid)
            return dict(rec.payload or {}) if rec else None

        if schema.entities is not None and deps.store.exists(schema):
            keys = [schema.id_field, *schema.name_fields, ENTITY_KEY]
            if schema.temporal is not None:
                keys.append(schema.temporal.field)
            if schema.entities.aliases:
                keys.append(schema.entities.aliases)
            payloads = list(deps.store.scroll(schema, payload=keys))
            deps.caches.catalog = CatalogLookup.of(
                schema,
                payloads,
                record,
                lambda terms: deps.keyword.known_terms(schema, terms),
                deps.analyzer,
            )
        elif schema.temporal is not None and deps.store.exists(schema):
            deps.caches.catalog = _dated_lookup(deps, record)
        else:
            deps.caches.catalog = CatalogLookup(names={}, record=record, dated=False)
        deps.caches.extractor = None
    return deps.caches.catalog


def _dated_lookup(deps: Dependencies, record: Any) -> CatalogLookup:
    """The lookup of a schema with a ``temporal`` field and no ``entities``: no named records,
    but the time filter is read when some record carries a date (as with entities)."""
    schema, temporal = deps.schema, deps.schema.temporal
    assert temporal is not None
    rows = list(deps.store.scroll(schema, payload=[schema.id_field, temporal.field]))
    dated = sum(p.get(temporal.field) is not None for p in rows)
    return CatalogLookup(
        names={}, record=record, dated=dated > 0, dated_count=dated, record_count=len(rows)
    )


_MATCHERS_LOCK = threading.Lock()


def capability_matcher(deps: Dependencies) -> CapabilityMatcher | None:
    """The schema's capability matcher over the dependencies' embedder, one per process and
    domain (in the process caches): its entries are embedded once, on the first query that
    needs them.
    None when the schema declares no ``capabilities``. The embedder is only touched then (its
    model name too: a threshold calibrated for other models matches nothing)."""
    if deps.schema.capabilities is None:
        return None
    with _MATCHERS_LOCK:
        root = deps.caches.root  # vocabulary entries, not records: one per process
        if root.capabilities is None:
            root.capabilities = CapabilityMatcher(
                deps.schema,
                lambda texts: document_vectors(deps.embedder, texts),
                lambda text: deps.embedder.embed_query(text),
                model=lambda: deps.embedder.identity.model,
                memo=_memo(deps),
                identity=lambda: identity_of(deps.embedder).model_dump_json(),
            )
        return root.capabilities


def _memo(deps: Dependencies) -> Any:
    """The dependencies' :class:`~agentic_search.ports.ArrayMemo` ``get_or_compute``, or None
    when they have none (dependencies a test builds with its own adapters only)."""
    try:
        return deps.memo.get_or_compute
    except KeyError:
        return None


def extract_by_rules(deps: Dependencies, query: str) -> IntentState:
    """The rule-based intent of ``query`` over the catalog's names.

    Raises:
        ValueError: for an empty or over-long query.
    """
    lookup = catalog_lookup(deps)
    if deps.caches.extractor is None:
        deps.caches.extractor = RuleBasedIntentExtractor(
            deps.schema, lookup, capabilities=capability_matcher(deps)
        )
    return deps.caches.extractor.extract(query)


__all__ = ["catalog_lookup", "extract_by_rules"]
