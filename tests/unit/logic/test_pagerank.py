"""The graph walk's personalized PageRank (igraph) against networkx's, the reference
implementation, on random graphs."""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_search.pipeline.graph import personalized_pagerank

NODES = [f"n{i}" for i in range(12)]


@settings(max_examples=60, deadline=None)
@given(
    edges=st.lists(
        st.tuples(st.sampled_from(NODES), st.sampled_from(NODES)).filter(lambda e: e[0] != e[1]),
        min_size=1,
        max_size=30,
        unique=True,
    ),
    alpha=st.floats(min_value=0.5, max_value=0.95),
    data=st.data(),
)
def test_personalized_pagerank_equals_networkx(edges, alpha, data):
    present = sorted({n for e in edges for n in e})
    seeds = data.draw(st.lists(st.sampled_from(present), min_size=1, max_size=3, unique=True))
    weights = data.draw(st.lists(st.floats(0.1, 2.0), min_size=len(seeds), max_size=len(seeds)))
    got = personalized_pagerank(edges, seeds, weights, alpha)
    graph = nx.Graph()
    graph.add_edges_from(edges)
    want = nx.pagerank(
        graph,
        alpha=alpha,
        personalization=dict(zip(seeds, weights, strict=True)),
        tol=1e-12,
        max_iter=10_000,
    )
    assert got.keys() == want.keys()
    for node, value in want.items():
        assert got[node] == pytest.approx(value, abs=1e-6)


def test_no_edges_or_no_seed_in_the_graph_gives_nothing():
    assert personalized_pagerank([], ["a"]) == {}
    assert personalized_pagerank([("a", "b")], ["a"], [0.0]) == {}
