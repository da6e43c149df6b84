"""The entity graph, built at ingest and stored beside the index: each record's payload carries
its names, its out-edges and its in-edges, so a search reads a seed's neighbourhood with the
records it reads anyway (embedded and server mode alike: a payload field, no side store).

Payload keys (internal, never shown as record data):

* ``_entity``: ``{"names": [folded names], "common": [its plain-word names that the corpus
  also uses as ordinary words]}`` (see :mod:`agentic_search.logic.entities`);
* ``_links``: ``{edge kind: [record ids]}``, the records this one points to;
* ``_linked_from``: ``{edge kind: [record ids]}``, the records pointing to this one.

Edge kinds: ``mention`` (this record's link fields name the other record), ``integrates``
(named in an "integrates with / plugin for / works with" phrase of the schema's integrates
field) and ``similar`` (one of its ``similar_k`` nearest neighbours on the schema's similar
aspect, cosine at least ``similar_min``). Edges point at document ids (a chunked document is
one entity, its first chunk's id).

:func:`relink` after a bulk write rebuilds every record's edges from one scan of the
collection (names, ambiguity, mentions), writing only the payloads that changed;
``relink_changed`` (:mod:`agentic_search.sync.relink`) after a small sync batch recomputes
the changed records' edges, finds the existing records that mention a new name through the
keyword index, and updates the in-edges of every record whose in-edges changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentic_search.dependencies import Dependencies
from agentic_search.logic.chunking import doc_id_of
from agentic_search.logic.entities import (
    EntityIndex,
    common_words,
    link_text,
    lowercase_names,
    record_names,
)
from agentic_search.logic.graph_edges import (
    Edges,
    invert,
    out_edges,
)
from agentic_search.logic.schema import DomainSchema
from agentic_search.wire import ENTITY_KEY, LINKED_FROM_KEY, LINKS_KEY

#: A sync batch of at most this many records (in a collection of at least ``5 x`` that)
#: relinks incrementally; larger writes rebuild every edge.
INCREMENTAL_MAX = 64
#: Records fetched from the keyword index per new name when looking for its mentions.
MENTION_SEARCH_K = 200


@dataclass
class LinkStats:
    """What a relink did: records scanned, payloads rewritten, edges now held."""

    scanned: int = 0
    rewritten: int = 0
    edges: int = 0
    mode: str = "none"
    kinds: dict[str, int] = field(default_factory=dict)


def graph_fields(schema: DomainSchema) -> list[str]:
    spec = schema.entities
    assert spec is not None
    keys = [schema.id_field, "doc_id", *schema.name_fields, *spec.link_fields]
    if spec.aliases:
        keys.append(spec.aliases)
    return list(dict.fromkeys([*keys, ENTITY_KEY, LINKS_KEY, LINKED_FROM_KEY]))


def is_entity(schema: DomainSchema, payload: Mapping[str, Any]) -> bool:
    rid = str(payload.get(schema.id_field, ""))
    return doc_id_of(rid) == rid


def similar_edges(deps: Dependencies, rid: str) -> list[str]:
    rel = deps.schema.entities.relations  # type: ignore[union-attr]
    if not rel.similar_aspect:
        return []
    vec = deps.store.vector_of(deps.schema, rid, rel.similar_aspect)
    if vec is None:
        return []
    hits = deps.store.query_dense(deps.schema, rel.similar_aspect, vec, rel.similar_k + 1)
    return [
        doc_id_of(h.id)
        for h in hits
        if doc_id_of(h.id) != doc_id_of(rid) and h.score >= rel.similar_min
    ][: rel.similar_k]


def write_keys(deps: Dependencies, updates: Mapping[str, Mapping[str, Any]]) -> int:
    """Merge ``{record id: {key: value}}`` into the stored payloads (read, merged,
    overwritten in batches). Returns the number of payloads written."""
    schema = deps.schema
    ids = list(updates)
    written = 0
    for i in range(0, len(ids), 256):
        chunk = ids[i : i + 256]
        current = deps.store.retrieve_records(schema, chunk)
        payloads = {
            rid: {**(rec.payload or {}), **updates[rid]}
            for rid, rec in current.items()
            if any((rec.payload or {}).get(k) != v for k, v in updates[rid].items())
        }
        if payloads:
            deps.store.update_points(schema, [], payloads)
            written += len(payloads)
    return written


def relink(deps: Dependencies) -> LinkStats:
    """Rebuild every record's names, ambiguity and edges from one scan of the collection;
    only changed payloads are written. A schema without ``entities`` does nothing."""
    schema = deps.schema
    stats = LinkStats(mode="full")
    if schema.entities is None or not deps.store.exists(schema):
        return stats
    records = list(deps.store.scroll(schema, payload=graph_fields(schema)))
    stats.scanned = len(records)
    named = [
        (str(p[schema.id_field]), record_names(schema, p)) for p in records if is_entity(schema, p)
    ]
    plain = EntityIndex.from_records(named)
    lower = {n for p in records for n in lowercase_names(schema, p)}
    texts = ((record_names(schema, p), link_text(schema, p)) for p in records)
    common = common_words(plain.names, texts, lower)
    index = EntityIndex(
        {n: plain.ids(n) for n in plain.names},
        common,
    )
    out: dict[str, Edges] = {}
    for p in records:
        rid = str(p[schema.id_field])
        edges = out_edges(schema, index, p, rid)
        if is_entity(schema, p):
            sim = similar_edges(deps, rid)
            if sim:
                edges["similar"] = sim
        if edges:
            doc = doc_id_of(rid)
            merged = out.setdefault(doc, {})
            for kind, targets in edges.items():
                merged[kind] = list(dict.fromkeys([*merged.get(kind, []), *targets]))
    inv = invert(out)
    updates: dict[str, dict[str, Any]] = {}
    names = dict(named)
    for p in records:
        rid = str(p[schema.id_field])
        doc = doc_id_of(rid)
        want: dict[str, Any] = {
            LINKS_KEY: out.get(doc, {}),
            LINKED_FROM_KEY: inv.get(doc, {}),
        }
        if rid in names:
            want[ENTITY_KEY] = {
                "names": names[rid],
                "common": sorted(n for n in names[rid] if n in index.common),
            }
        if any(p.get(k) != v for k, v in want.items()):
            updates[rid] = want
    stats.rewritten = write_keys(deps, updates)
    stats.edges = sum(len(t) for e in out.values() for t in e.values())
    for e in out.values():
        for kind, targets in e.items():
            stats.kinds[kind] = stats.kinds.get(kind, 0) + len(targets)
    deps.caches.forget_entities()
    return stats


__all__ = ["INCREMENTAL_MAX", "LinkStats", "graph_fields", "relink", "similar_edges", "write_keys"]
