"""Derive the evaluation files of the AWS services query set from its judgments.

Usage: python benchmarks/aws_services/build.py [--check]

``judgments.jsonl`` (one query a line: ``id``, ``query``, ``kind``, ``lang``, ``answerable``,
``relevant`` {service id: grade 1 or 2}, ``note``) is the only hand-written file. This script
writes, next to it, the layout ``agentic-search eval --domain`` reads (no corpus:
the catalog comes from ``catalog.py`` and is passed as ``--catalog``):

* ``queries.jsonl``: ``{"_id", "text", "type" (the kind), "lang", "answerable", "split"}``;
* ``qrels/tuning.tsv`` and ``qrels/heldout.tsv``: ``query-id corpus-id score`` for the
  answerable queries of that split (unanswerable queries have no judgment line; their
  ``split`` in ``queries.jsonl`` places them).

The split is fixed before any tuning and never depends on the engine: within each group of
queries with the same kind, language and answerability, the queries are ordered by the SHA-256
of their id and the first ``round(0.4 * n)`` go to ``tuning``, the rest to ``heldout`` (so every
kind and every language of the answerable queries is in both splits, about 40/60; a group of one
goes to ``heldout``). Adding a query to a group can move that group's others across the cut, so
once tuning has started a new query carries its own ``"split": "heldout"`` in the judgments
(kept as written, outside the rule). ``--check`` exits 1 when the files on disk
differ from what the judgments give (the test suite runs the same comparison).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location(
    "tools_queries_build", HERE.parent / "tools_queries" / "build.py"
)
assert _spec is not None and _spec.loader is not None
_tools = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_tools)

#: The tools query set's rules, read from its build script (one definition of the split).
SPLITS = _tools.SPLITS
split_of = _tools.split_of
render = _tools.render
JUDGMENTS = HERE / "judgments.jsonl"


def read_judgments(path: Path = JUDGMENTS) -> list[dict]:
    """The judgment lines of this folder's ``judgments.jsonl``, in file order."""
    return _tools.read_judgments(path)


if __name__ == "__main__":
    sys.exit(_tools.main(HERE, __doc__))
