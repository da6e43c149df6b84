"""The entity sources a Retrieve runs besides the ranked ones: the entity_state fetch (named
records by id) and the graph walk (walk_seeds / predicate_walk) with its personalized
PageRank (Page, Brin, Motwani, Winograd, "The PageRank Citation Ranking", 1999; personalized:
Haveliwala, "Topic-Sensitive PageRank", WWW 2002), computed by networkx.

The walk reads each frontier record's stored edges (``_links`` out, ``_linked_from`` in; see
:mod:`agentic_search.sync.links`), at most ``fanout`` neighbours per record per hop, and
builds an undirected graph of what it walked. PageRank restarts on the seeds (weights as
given). A walked record's score is ``ppr(v) / max ppr * max(0, cos(q, v))``: the PageRank
says how close it sits to the seeds, the cosine of its stored vector on the source's aspect
to the query text says whether it is what the question is about. Each hit's payload names
the edge it was first reached by (``_via`` = ``<kind>:<from id>``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentic_search.components import Components
from agentic_search.domain.filters import matches
from agentic_search.pipeline.embedding import embed_texts
from agentic_search.state import (
    HASHES_KEY,
    LINKED_FROM_KEY,
    LINKS_KEY,
    VIA_KEY,
    EntitySource,
    Filter,
    GraphSource,
    QueryPlan,
    ScoredRecord,
    VectorSource,
)


def fetch_entities(
    c: Components, source: EntitySource, filters: Sequence[Filter] = ()
) -> list[ScoredRecord]:
    """entity_state: the named records in the order named, score 1.0, those the hard
    ``filters`` reject left out; each hit's ``_via`` is the name it was asked by."""
    records = c.store.read_records(c.schema, source.ids)
    names = dict(zip(source.ids, source.names, strict=False))
    out: list[ScoredRecord] = []
    for rid in source.ids:
        rec = records.get(rid)
        if rec is None:
            continue
        payload = rec.payload or {}
        if all(matches(c.schema, f, payload) for f in filters):
            out.append(ScoredRecord(rid, 1.0, {**payload, VIA_KEY: names.get(rid, rid)}))
    return out


def _neighbours(
    payload: Mapping[str, Any], kinds: Sequence[str], direction: str = "both"
) -> list[tuple[str, str]]:
    """(neighbour id, edge kind) of a record, out-edges first (none with ``direction`` "in"),
    each neighbour once."""
    seen: dict[str, str] = {}
    keys = (LINKED_FROM_KEY,) if direction == "in" else (LINKS_KEY, LINKED_FROM_KEY)
    for key in keys:
        edges = payload.get(key) or {}
        for kind, targets in edges.items():
            if kinds and kind not in kinds:
                continue
            for t in targets:
                seen.setdefault(str(t), kind)
    return list(seen.items())


def walk(c: Components, source: GraphSource, filters: Sequence[Filter] = ()) -> list[ScoredRecord]:
    """The graph walk of ``source`` (see the module docstring): walked records that pass the
    hard ``filters`` and are not excluded, best first, at most ``top_k``."""
    import networkx as nx

    schema = c.schema
    graph = nx.Graph()
    via: dict[str, str] = {}
    frontier = list(dict.fromkeys(source.seeds))
    graph.add_nodes_from(frontier)
    seen = set(frontier)
    for _ in range(source.hops):
        # the writer's view: the query side's cached reads leave the graph's keys out
        records = c.store.get_records(schema, frontier, without=[HASHES_KEY])
        nxt: list[str] = []
        for rid in frontier:
            rec = records.get(rid)
            if rec is None:
                continue
            edges = _neighbours(rec.payload or {}, source.kinds, source.direction)
            for nb, kind in edges[: source.fanout]:
                graph.add_edge(rid, nb)
                if nb not in seen:
                    seen.add(nb)
                    via[nb] = f"{kind}:{rid}"
                    nxt.append(nb)
        frontier = nxt
        if not frontier:
            break
    candidates = [n for n in via if n not in set(source.exclude) and n not in source.seeds]
    if not candidates:
        return []
    weights = source.weights or [1.0] * len(source.seeds)
    personalization = {s: w for s, w in zip(source.seeds, weights, strict=False) if s in graph}
    ppr = nx.pagerank(graph, alpha=source.alpha, personalization=personalization)
    top = max(ppr[n] for n in candidates) or 1.0
    cosine = _cosines(c, source, candidates)
    payloads = c.store.read_records(schema, candidates)
    scored: list[ScoredRecord] = []
    for n in candidates:
        rec = payloads.get(n)
        if rec is None:
            continue
        payload = rec.payload or {}
        if not all(matches(schema, f, payload) for f in filters):
            continue
        score = ppr[n] / top * max(0.0, cosine.get(n, 0.0))
        scored.append(ScoredRecord(n, round(score, 6), {**payload, VIA_KEY: via[n]}))
    scored.sort(key=lambda h: (-h.score, h.id))
    return scored[: source.top_k]


def _cosines(c: Components, source: GraphSource, ids: Sequence[str]) -> dict[str, float]:
    """Cosine of each record's stored vector on the source's aspect to the query text's
    vector (the embedder's, cached), or to the reference record's stored vector (stored
    vectors are unit length). Without either, every record scores 1 (PageRank alone)."""
    import numpy as np

    if source.text:
        probe = QueryPlan(
            domain=c.schema.name,
            strategy="identity-focused",
            vector_sources=[VectorSource(aspect=source.aspect, top_k=1, text=source.text)],
            fusion="none",
        )
        vectors, errors = embed_texts(c, probe)
        if source.text in errors or source.text not in vectors:
            return {}
        query = vectors[source.text]
    elif source.reference:
        query = c.store.vector_of(c.schema, source.reference, source.aspect)
        if query is None:
            return {}
    else:
        return dict.fromkeys(ids, 1.0)
    q = np.asarray(query, dtype=np.float32)
    q = q / (np.linalg.norm(q) or 1.0)
    stored = c.store.vectors_of(c.schema, list(ids), source.aspect)
    return {rid: float(np.dot(q, np.asarray(v, dtype=np.float32))) for rid, v in stored.items()}


__all__ = ["fetch_entities", "walk"]
