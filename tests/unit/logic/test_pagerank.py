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


def test_the_walk_imports_igraph_without_matplotlib() -> None:
    """GIVEN a fresh process with matplotlib installed (the test extra) WHEN the walk's PageRank
    runs THEN igraph answered without importing matplotlib (its import pulled in pyplot:
    0.42 s of a CLI search), the scores are PageRank's, and matplotlib still imports after."""
    import subprocess
    import sys

    code = (
        "import sys, json\n"
        "from agentic_search.pipeline.graph import personalized_pagerank\n"
        "r = personalized_pagerank([('a', 'b'), ('b', 'c')], ['a'])\n"
        "before = 'matplotlib' in sys.modules\n"
        "import matplotlib.pyplot\n"
        "print(json.dumps([before, r]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    import json

    before, scores = json.loads(done.stdout)
    assert before is False
    path = nx.path_graph(["a", "b", "c"])
    want = nx.pagerank(path, personalization={"a": 1}, tol=1e-12, max_iter=10_000)
    assert scores == pytest.approx(want, abs=1e-6)
