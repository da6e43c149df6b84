"""The house rules, checked: the import contract, no import cycle, light handlers, unit sizes.

GIVEN the packages as they are on disk WHEN their imports are read (statically, by grimp and
import-linter, and for the handlers by importing them in a fresh interpreter) THEN imports run
one way (handlers -> Lambda glue -> front door -> wiring -> pipeline | sync | adapters ->
deps -> logic -> ports -> wire -> config), no module is part of an import cycle, the
handlers that do not retrieve import no numpy, no Qdrant client and no console library. Modules
are split by concept, not by a line count (no size cap).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import grimp
import networkx as nx
import pytest
from support.paths import FUNCTIONS, REPO

PACKAGES = ("agentic_search", "agentic_search_lambda", "agentic_search_cli")
SOURCE_ROOTS = (REPO / "layers" / "core", REPO / "cli")
#: Handlers that embed, search or fuse: they may import numpy (never at the others' cold start).
RETRIEVING = {"retrieve", "fuse_rerank"}
HEAVY = {"numpy", "qdrant_client", "qdrant_edge", "rich", "pymongo", "onnxruntime", "fastembed"}


def test_the_import_contract_is_kept():
    # GIVEN the contracts of pyproject.toml's [tool.importlinter]
    # WHEN import-linter (the tool, as `make lint` runs it) checks them
    lint_imports = Path(sys.executable).parent / "lint-imports"
    proc = subprocess.run(
        [str(lint_imports), "--config", str(REPO / "pyproject.toml"), "--no-cache"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    # THEN every contract is kept
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "BROKEN" not in proc.stdout


def test_no_module_is_part_of_an_import_cycle():
    # GIVEN the graph of imports among the project's modules (type-checking imports left out)
    graph = grimp.build_graph(*PACKAGES, exclude_type_checking_imports=True)
    g = nx.DiGraph()
    for module in graph.modules:
        if module.split(".")[0] not in PACKAGES:
            continue
        g.add_node(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported.split(".")[0] in PACKAGES:
                g.add_edge(module, imported)
    # THEN it has no cycle (a package importing its own submodules is not a cycle: only
    # module-to-module edges count, and a package __init__ re-exporting is one direction)
    cycles = [c for c in nx.simple_cycles(g) if len(c) > 1]
    assert cycles == [], f"import cycles: {cycles[:3]}"
    assert len(g) > 100  # the graph was really read


@pytest.mark.parametrize("function", sorted(p.parent.name for p in FUNCTIONS.glob("*/app.py")))
def test_a_handler_imports_only_what_it_uses(function: str):
    # GIVEN a fresh interpreter in the function's code directory (what Lambda starts)
    code = (
        "import json, sys; import app; "
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    env = {**os.environ, "POWERTOOLS_TRACE_DISABLED": "1"}
    # WHEN the handler module is imported
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=FUNCTIONS / function,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    loaded = set(json.loads(proc.stdout))
    # THEN no function imports the Qdrant client, a console library or the CLI at import
    assert not loaded & {"qdrant_client", "rich", "agentic_search_cli"}, function
    # AND only the retrieving ones import numpy and the engines
    if function not in RETRIEVING:
        assert not loaded & HEAVY, (function, sorted(loaded & HEAVY))
