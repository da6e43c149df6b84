"""The VectorStore port tells the truth (issue 26, item 3).

GIVEN the :class:`~agentic_search.ports.VectorStore` Protocol and the code that calls a store
(the core, the keyword index, the CLI's evaluation) WHEN read statically THEN every method
called on a store is one the port declares (no caller relies on an engine's extra method; the
methods of ``PublishedIndex``, the published-snapshot port, and of ``EngineHybridRrf``, the
evaluation's engine-side RRF, only behind an isinstance check), and every engine (Qdrant Edge,
a Qdrant server, qdrant-client local mode) implements every declared method with a compatible
signature (same parameters in the same order, the same defaults, anything extra optional):
adding an engine means implementing this one protocol.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from support.paths import REPO

from agentic_search.adapters.edge.store import EdgeStore
from agentic_search.adapters.qdrant.local import LocalQdrantStore
from agentic_search.adapters.qdrant.store import QdrantStore
from agentic_search.adapters.sparse_bm25 import SparseBm25Index
from agentic_search.ports import EngineHybridRrf, PublishedIndex, VectorStore

CORE = REPO / "layers" / "core" / "agentic_search"
#: Code that talks to whichever store is wired (never to an engine's own class).
CALLERS = [
    *sorted((CORE / "pipeline").glob("*.py")),
    *sorted((CORE / "sync").glob("*.py")),
    CORE / "service.py",
    CORE / "wiring.py",
    CORE / "adapters" / "sparse_bm25.py",
    *sorted((REPO / "cli" / "agentic_search_cli" / "evaluation").glob("*.py")),
]


def declared(port: type = VectorStore) -> set[str]:
    """The methods ``port`` declares."""
    return {
        name
        for name, value in vars(port).items()
        if not name.startswith("_") and inspect.isfunction(value)
    }


def narrows_to(path: Path, port: type) -> bool:
    """Whether ``path`` checks ``isinstance(..., port)``: another store port (a published
    snapshot, edge-s3; the engine's own hybrid RRF, evaluation only), whose methods a caller
    may use only behind that check."""
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "isinstance"
        and len(node.args) == 2
        and isinstance(node.args[1], ast.Name)
        and node.args[1].id == port.__name__
        for node in ast.walk(ast.parse(path.read_text()))
    )


#: The store ports beside VectorStore, each used only behind an isinstance check.
NARROWED = (PublishedIndex, EngineHybridRrf)


def _is_store(node: ast.expr) -> bool:
    """``store``, ``self.store``, ``c.store``, ``engine.deps.store``..."""
    return (isinstance(node, ast.Name) and node.id == "store") or (
        isinstance(node, ast.Attribute) and node.attr == "store"
    )


def store_calls(path: Path) -> set[str]:
    """The method names called on a store in ``path``."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and _is_store(node.func.value)
        ):
            out.add(node.func.attr)
    return out


def test_every_method_called_on_a_store_is_declared_by_the_port() -> None:
    used = {p: store_calls(p) for p in CALLERS}
    assert sum(map(len, used.values())) > 10  # the scan sees the callers
    undeclared = {
        path.relative_to(REPO).as_posix(): sorted(
            names
            - declared()
            - {m for port in NARROWED if narrows_to(path, port) for m in declared(port)}
        )
        for path, names in used.items()
    }
    assert {p: n for p, n in undeclared.items() if n} == {}


def test_the_engine_hybrid_rrf_is_off_the_search_port() -> None:
    # the evaluation's baseline only: no search path may call it
    assert "query_hybrid_rrf" not in declared()
    assert declared(EngineHybridRrf) == {"query_hybrid_rrf"}


def test_the_keyword_index_takes_the_port_not_any() -> None:
    annotation = inspect.signature(SparseBm25Index.__init__).parameters["store"].annotation
    assert annotation == "VectorStore"


@pytest.mark.parametrize(
    "engine", [EdgeStore, QdrantStore, LocalQdrantStore], ids=lambda e: e.__name__
)
@pytest.mark.parametrize(
    ("port", "method"),
    [(VectorStore, m) for m in sorted(declared())]
    + [(EngineHybridRrf, m) for m in sorted(declared(EngineHybridRrf))],
    ids=lambda x: x if isinstance(x, str) else x.__name__,
)
def test_each_engine_implements_the_declared_method_compatibly(
    engine: type, port: type, method: str
) -> None:
    want = inspect.signature(getattr(port, method))
    impl = getattr(engine, method, None)
    assert callable(impl), f"{engine.__name__} lacks {method}"
    have = inspect.signature(impl)
    w, h = list(want.parameters.values()), list(have.parameters.values())
    # the declared parameters, in order, with the same kinds and defaults
    assert [(p.name, p.kind, p.default) for p in h[: len(w)]] == [
        (p.name, p.kind, p.default) for p in w
    ]
    # anything more must be optional (a caller of the port never passes it)
    assert all(p.default is not inspect.Parameter.empty for p in h[len(w) :])
