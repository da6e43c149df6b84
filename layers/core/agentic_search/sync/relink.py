"""The entity graph after a small write: the changed records' edges recomputed, the existing
records that mention a new name found through the keyword index, the edges to a renamed record
checked again (its old name may be all its sources named) and those to a deleted one dropped,
and the in-edges of every record whose in-edges changed (see :mod:`agentic_search.sync.links`
for the payload keys)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentic_search.dependencies import Dependencies
from agentic_search.logic.chunking import doc_id_of
from agentic_search.logic.entities import EntityIndex, record_names
from agentic_search.logic.graph_edges import Edges, merge_edges, names_map, out_edges
from agentic_search.sync.links import (
    INCREMENTAL_MAX,
    MENTION_SEARCH_K,
    LinkStats,
    is_entity,
    relink,
    similar_edges,
    write_keys,
)
from agentic_search.wire import ENTITY_KEY, LINKED_FROM_KEY, LINKS_KEY


def relink_changed(
    deps: Dependencies, changed: Sequence[str], removed: Sequence[str] = ()
) -> LinkStats:
    """Update the graph after a small write (see the module docstring); falls back to
    :func:`relink` for large writes or small collections."""
    schema = deps.schema
    if schema.entities is None or not deps.store.exists(schema):
        return LinkStats()
    total = deps.store.count(schema)
    if len(changed) > INCREMENTAL_MAX or total < 5 * max(1, len(changed)):
        return relink(deps)
    stats = LinkStats(mode="incremental")
    names_only = [schema.id_field, "doc_id", *schema.name_fields, ENTITY_KEY]
    names_only += [LINKS_KEY, LINKED_FROM_KEY]
    if schema.entities.aliases:
        names_only.append(schema.entities.aliases)
    changed_docs = {doc_id_of(r) for r in changed}
    removed_docs = {doc_id_of(r) for r in removed}
    named: list[tuple[str, list[str]]] = []
    common: set[str] = set()
    members: dict[str, list[str]] = {}  # document id -> its points (chunks)
    pointing: dict[str, Edges] = {}  # record -> its out-edges, when one is to a changed record
    pointed: dict[str, Edges] = {}  # record -> its in-edges, when one is from a removed record
    for p in deps.store.scroll(schema, payload=names_only):
        rid = str(p[schema.id_field])
        members.setdefault(doc_id_of(rid), []).append(rid)
        if is_entity(schema, p):
            named.append((rid, record_names(schema, p)))
            common.update((p.get(ENTITY_KEY) or {}).get("common", []))
            links = p.get(LINKS_KEY) or {}
            if any(t in changed_docs or t in removed_docs for ts in links.values() for t in ts):
                pointing[rid] = links
            inbound = p.get(LINKED_FROM_KEY) or {}
            if any(s in removed_docs for ss in inbound.values() for s in ss):
                pointed[rid] = inbound
    index = EntityIndex(
        {n: ids for n, ids in names_map(named).items()},
        common,
    )
    gone = removed_docs - set(members)  # deleted documents (not a chunk of one that stays)
    changed_recs = deps.store.retrieve_records(schema, list(changed))
    touched: dict[str, dict[str, Any]] = {}
    new_out: dict[str, Edges] = {}
    old_out: dict[str, Edges] = {}
    for rid, rec in changed_recs.items():
        payload = rec.payload or {}
        doc = doc_id_of(rid)
        edges = out_edges(schema, index, payload, rid)
        if doc == rid:
            sim = similar_edges(deps, rid)
            if sim:
                edges["similar"] = sim
        new_out[doc] = merge_edges(new_out.get(doc, {}), edges)
        old_out[doc] = merge_edges(old_out.get(doc, {}), payload.get(LINKS_KEY) or {})
        if doc == rid:
            names = record_names(schema, payload)
            touched.setdefault(rid, {})[ENTITY_KEY] = {
                "names": names,
                "common": sorted(n for n in names if n in index.common),
            }
    # records pointing at a changed record by name (a rename may take that name away) or at a
    # deleted one: those edges go, and come back where the source still names the record
    renamed = {doc_id_of(r) for r in changed_recs}
    for src, have in pointing.items():
        if src in renamed or src in gone:
            continue
        kept = {
            kind: [t for t in targets if t not in gone and (kind == "similar" or t not in renamed)]
            for kind, targets in have.items()
        }
        found: Edges = {}
        for rec in deps.store.retrieve_records(schema, members.get(src, [src])).values():
            for kind, targets in out_edges(schema, index, rec.payload or {}, rec.id).items():
                hits = [t for t in targets if t in renamed]
                if hits:
                    found = merge_edges(found, {kind: hits})
        old_out[src] = dict(have)
        new_out[src] = merge_edges(kept, found)
    # existing records that mention a changed record's names now point at it
    for rid in changed_recs:
        if doc_id_of(rid) != rid:
            continue
        for name in index.names_of(rid):
            for hit in deps.keyword.search(schema, name, MENTION_SEARCH_K):
                src = doc_id_of(hit.id)
                if src in renamed or src == rid:
                    continue
                rec = deps.store.retrieve_records(schema, [hit.id]).get(hit.id)
                if rec is None:
                    continue
                # the full index, so that the longest name wins ("Meet Corliss Archer" names
                # the show, not "Corliss Archer"); only the edges to this record are new
                found = {
                    kind: [t for t in targets if t == rid]
                    for kind, targets in out_edges(schema, index, rec.payload or {}, hit.id).items()
                }
                found = {k: v for k, v in found.items() if v}
                if found:
                    have = (rec.payload or {}).get(LINKS_KEY) or {}
                    old_out.setdefault(src, dict(have))
                    new_out[src] = merge_edges(new_out.get(src, dict(have)), found)
    for doc in gone:
        new_out.setdefault(doc, {})
    for src, edges in new_out.items():
        touched.setdefault(src, {})[LINKS_KEY] = edges
    # in-edges: targets gained or lost a source
    deltas: dict[str, list[tuple[str, str, bool]]] = {}
    for src in set(new_out) | set(old_out):
        old, new = old_out.get(src, {}), new_out.get(src, {})
        for kind in set(old) | set(new):
            for t in set(new.get(kind, [])) - set(old.get(kind, [])):
                deltas.setdefault(t, []).append((kind, src, True))
            for t in set(old.get(kind, [])) - set(new.get(kind, [])):
                deltas.setdefault(t, []).append((kind, src, False))
    for t in pointed:  # in-edges from a deleted record go
        deltas.setdefault(t, [])
    if deltas:
        current = deps.store.retrieve_records(schema, list(deltas))
        for t, changes in deltas.items():
            rec = current.get(t)
            if rec is None:
                continue
            inbound = {
                k: [s for s in v if s not in gone]
                for k, v in ((rec.payload or {}).get(LINKED_FROM_KEY) or {}).items()
            }
            for kind, src, add in changes:
                lst = inbound.setdefault(kind, [])
                if add and src not in lst:
                    lst.append(src)
                elif not add and src in lst:
                    lst.remove(src)
            touched.setdefault(t, {})[LINKED_FROM_KEY] = {
                k: v for k, v in sorted(inbound.items()) if v
            }
    removed_set = set(removed)
    stats.rewritten = write_keys(deps, {k: v for k, v in touched.items() if k not in removed_set})
    stats.scanned = len(changed_recs)
    stats.edges = sum(len(t) for e in new_out.values() for t in e.values())
    deps.caches.forget_entities()
    return stats


__all__ = ["relink_changed"]
