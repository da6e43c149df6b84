"""The entity sources a Retrieve runs besides the ranked ones: the entity_state fetch (named
records by id) and the graph walk (walk_seeds / predicate_walk) with its personalized
PageRank (Page, Brin, Motwani, Winograd, "The PageRank Citation Ranking", 1999; personalized:
Haveliwala, "Topic-Sensitive PageRank", WWW 2002), computed by igraph (its C core: networkx's
PageRank needs scipy, over 100 MB, which would not fit the Lambda layer).

The walk reads each frontier record's stored edges (``_links`` out, ``_linked_from`` in; see
:mod:`agentic_search.sync.links`), at most ``fanout`` neighbours per record per hop, and
builds an undirected graph of what it walked. PageRank restarts on the seeds (weights as
given). A walked record's score is ``ppr(v) / max ppr * max(0, cos(q, v))``: the PageRank
says how close it sits to the seeds, the cosine of its stored vector on the source's aspect
to the query text says whether it is what the question is about. Each hit's payload names
the edge it was first reached by (``_via`` = ``<kind>:<from id>``). With ``max_mentions``, a
walked record mentioned by more records (a hub: a general topic) is left out.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from agentic_search.dependencies import Dependencies
from agentic_search.logic.entities import fold, link_text, record_names
from agentic_search.logic.filters import matches
from agentic_search.logic.graph_edges import names_as_addon, names_as_alternative
from agentic_search.pipeline.embedding import embed_texts
from agentic_search.ports import KeywordIndexError
from agentic_search.wire import (
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
    deps: Dependencies, source: EntitySource, filters: Sequence[Filter] = ()
) -> list[ScoredRecord]:
    """entity_state: the named records in the order named, score 1.0, those the hard
    ``filters`` reject left out; each hit's ``_via`` is the name it was asked by."""
    records = deps.store.hydrate_records(deps.schema, source.ids)
    names = dict(zip(source.ids, source.names, strict=False))
    out: list[ScoredRecord] = []
    for rid in source.ids:
        rec = records.get(rid)
        if rec is None:
            continue
        payload = rec.payload or {}
        if all(matches(deps.schema, f, payload) for f in filters):
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


def walk(
    deps: Dependencies,
    source: GraphSource,
    filters: Sequence[Filter] = (),
    exclude: Sequence[str] = (),
) -> list[ScoredRecord]:
    """The graph walk of ``source`` (see the module docstring): walked records that pass the
    hard ``filters`` and are neither in the source's ``exclude`` nor in ``exclude`` (the
    plan's: the records the query rules out), best first, at most ``top_k``."""
    schema = deps.schema
    edges: list[tuple[str, str]] = []
    via: dict[str, str] = {}
    frontier = list(dict.fromkeys(source.seeds))
    seen = set(frontier)
    seed_payloads: list[Mapping[str, Any]] = []
    for _ in range(source.hops):
        # the writer's view: the query side's cached reads leave the graph's keys out
        records = deps.store.retrieve_records(schema, frontier, without=[HASHES_KEY])
        if not seed_payloads:
            seed_payloads = [rec.payload or {} for rec in records.values()]
        nxt: list[str] = []
        for rid in frontier:
            rec = records.get(rid)
            if rec is None:
                continue
            neighbours = _neighbours(rec.payload or {}, source.kinds, source.direction)
            for nb, kind in neighbours[: source.fanout]:
                edges.append((rid, nb))
                if nb not in seen:
                    seen.add(nb)
                    via[nb] = f"{kind}:{rid}"
                    nxt.append(nb)
        frontier = nxt
        if not frontier:
            break
    excluded = {*source.exclude, *exclude}
    candidates = [n for n in via if n not in excluded and n not in source.seeds]
    if source.max_mentions is not None and candidates:
        linked = deps.store.retrieve_records(schema, candidates, without=[HASHES_KEY])
        counts = {rid: mention_count(rec.payload or {}) for rid, rec in linked.items()}
        candidates = [n for n in candidates if counts.get(n, 0) <= source.max_mentions]
    if not candidates:
        return []
    mention_only: set[str] = set()
    seed_names: list[str] = []
    if source.mention_context == "alternative":
        mention_only = _mention_only(seed_payloads, source.direction)
        seed_names = [n for p in seed_payloads for n in record_names(schema, p)]
    ppr = personalized_pagerank(edges, source.seeds, source.weights, source.alpha)
    top = max(ppr.get(n, 0.0) for n in candidates) or 1.0
    cosine = _cosines(deps, source, candidates)
    payloads = deps.store.hydrate_records(schema, candidates)
    scored: list[ScoredRecord] = []
    for n in candidates:
        rec = payloads.get(n)
        if rec is None:
            continue
        payload = rec.payload or {}
        if not all(matches(schema, f, payload) for f in filters):
            continue
        if n in mention_only and not names_as_alternative(link_text(schema, payload), seed_names):
            continue  # it names a seed as what it plugs into: an add-on, not an alternative
        score = ppr.get(n, 0.0) / top * max(0.0, cosine.get(n, 0.0))
        scored.append(ScoredRecord(n, round(score, 6), {**payload, VIA_KEY: via[n]}))
    scored.sort(key=lambda h: (-h.score, h.id))
    return scored[: source.top_k]


def plugged_into(deps: Dependencies, ref: str, typed: str, *, top_k: int) -> list[str]:
    """The records whose text names record ``ref`` as what they plug into or run on ("a
    webpack loader for YAML", "runs on Kubernetes") and nowhere as what they replace
    (:func:`~agentic_search.logic.graph_edges.names_as_addon`). Read from ``ref``'s
    mention in-edges and, as the link pass records a name that is also an ordinary word of
    the catalog only where it is capitalized ("for webpack" is not an edge), from the first
    ``top_k`` BM25 hits of each of its names (the edges alone when the keyword index cannot
    be read); each record's link text is read. ``typed``: the name as the query wrote it, also
    matched. Empty for a schema without entities."""
    schema = deps.schema
    if schema.entities is None:
        return []
    seed = deps.store.retrieve_records(schema, [ref], without=[HASHES_KEY]).get(ref)
    if seed is None:
        return []
    payload = seed.payload or {}
    names = [n for n in dict.fromkeys([*record_names(schema, payload), fold(typed)]) if n]
    found = [str(i) for i in (payload.get(LINKED_FROM_KEY) or {}).get("mention") or []]
    try:
        for name in names:
            found += [h.id for h in deps.keyword.search(schema, name, top_k, exclude_ids=[ref])]
    except KeywordIndexError:
        pass  # the BM25 source reports the damaged index; the edges still name add-ons
    found = [rid for rid in dict.fromkeys(found) if rid != ref]
    if not found:
        return []
    records = deps.store.hydrate_records(schema, found)
    out = []
    for rid in found:
        rec = records.get(rid)
        text = link_text(schema, rec.payload or {}) if rec is not None else ""
        if names_as_addon(text, names):
            out.append(rid)
    return out


def _mention_only(seeds: Sequence[Mapping[str, Any]], direction: str) -> set[str]:
    """The seeds' neighbours that only a mention edge joins to them (no similar or other
    edge), along ``direction``."""
    keys = (LINKED_FROM_KEY,) if direction == "in" else (LINKS_KEY, LINKED_FROM_KEY)
    mentioned: set[str] = set()
    other: set[str] = set()
    for payload in seeds:
        for key in keys:
            for kind, targets in (payload.get(key) or {}).items():
                (mentioned if kind == "mention" else other).update(map(str, targets))
    return mentioned - other


def mention_count(payload: Mapping[str, Any]) -> int:
    """How many records mention the record of ``payload`` (its ``_linked_from`` mention
    edges)."""
    return len((payload.get(LINKED_FROM_KEY) or {}).get("mention") or [])


def personalized_pagerank(
    edges: Sequence[tuple[str, str]],
    seeds: Sequence[str],
    weights: Sequence[float] = (),
    alpha: float = 0.85,
) -> dict[str, float]:
    """Personalized PageRank of the simple undirected graph given by ``edges`` (an edge and
    its reverse are one edge; self-loops dropped): the random walk restarts on ``seeds`` with
    probability ``1 - alpha``, in proportion to ``weights`` (1 each by default). Returns
    {node: score}, the scores summing to 1 (empty without edges or seeds in the graph)."""
    igraph = _igraph()
    edges = list(dict.fromkeys(tuple(sorted(e)) for e in edges if e[0] != e[1]))
    nodes = list(dict.fromkeys([*seeds, *(n for e in edges for n in e)]))
    index = {n: i for i, n in enumerate(nodes)}
    restart = [0.0] * len(nodes)
    for s, w in zip(seeds, list(weights) or [1.0] * len(seeds), strict=False):
        restart[index[s]] += w
    if not edges or not any(restart):
        return {}
    graph = igraph.Graph(n=len(nodes), edges=[(index[a], index[b]) for a, b in edges])
    scores = graph.personalized_pagerank(directed=False, damping=alpha, reset=restart)
    return dict(zip(nodes, scores, strict=True))


_IGRAPH_LOCK = threading.Lock()


def _igraph() -> ModuleType:
    """The ``igraph`` module, imported without its matplotlib backend when matplotlib is not
    imported yet: ``import igraph`` imports ``matplotlib.pyplot`` whenever matplotlib is
    installed (``igraph.drawing.matplotlib``; the eval and test extras install it), which made
    igraph's import 0.42 s instead of 0.03 s, paid by every CLI search that walks the graph.
    Nothing here draws: igraph's drawing then answers "install matplotlib" if asked to plot.
    ``None`` in :data:`sys.modules` is Python's own way to make an import fail; the entry is
    removed again, so a later ``import matplotlib`` works."""
    with _IGRAPH_LOCK:
        if "igraph" in sys.modules or "matplotlib" in sys.modules:
            import igraph

            return igraph
        sys.modules["matplotlib"] = None  # type: ignore[assignment]
        try:
            import igraph
        finally:
            if sys.modules.get("matplotlib", 0) is None:
                del sys.modules["matplotlib"]
        return igraph


def _cosines(deps: Dependencies, source: GraphSource, ids: Sequence[str]) -> dict[str, float]:
    """Cosine of each record's stored vector on the source's aspect to the query text's
    vector (the embedder's, cached), or to the reference record's stored vector (stored
    vectors are unit length). Without either, every record scores 1 (PageRank alone)."""
    import numpy as np

    if source.text:
        probe = QueryPlan(
            domain=deps.schema.name,
            strategy="identity-focused",
            vector_sources=[VectorSource(aspect=source.aspect, top_k=1, text=source.text)],
            fusion="none",
        )
        vectors, errors = embed_texts(deps, probe)
        if source.text in errors or source.text not in vectors:
            return {}
        query = vectors[source.text]
    elif source.reference:
        query = deps.store.vector_of(deps.schema, source.reference, source.aspect)
        if query is None:
            return {}
    else:
        return dict.fromkeys(ids, 1.0)
    q = np.asarray(query, dtype=np.float32)
    q = q / (np.linalg.norm(q) or 1.0)
    stored = deps.store.vectors_of(deps.schema, list(ids), source.aspect)
    return {rid: float(np.dot(q, np.asarray(v, dtype=np.float32))) for rid, v in stored.items()}


__all__ = ["fetch_entities", "mention_count", "personalized_pagerank", "plugged_into", "walk"]
