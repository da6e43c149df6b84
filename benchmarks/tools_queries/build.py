"""Derive the evaluation files of the tools query set from its judgments.

Usage: python benchmarks/tools_queries/build.py [--check]

``judgments.jsonl`` (one query a line: ``id``, ``query``, ``kind``, ``lang``, ``answerable``,
``relevant`` {catalog id: grade 1 or 2}, ``note``) is the only hand-written file. This script
writes, next to it, the BEIR layout ``agentic-search eval`` reads:

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

import argparse
import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
JUDGMENTS = HERE / "judgments.jsonl"
SPLITS: tuple[str, str] = ("tuning", "heldout")
TUNING_SHARE = 0.4


def read_judgments(path: Path = JUDGMENTS) -> list[dict]:
    """The judgment lines, in file order (blank lines skipped)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def split_of(judgments: list[dict], share: float = TUNING_SHARE) -> dict[str, str]:
    """{query id: "tuning" | "heldout"}: a judgment's own ``split`` when it has one, else per
    (kind, language, answerable) group of the others, the first ``round(share * n)`` ids by
    SHA-256 go to tuning."""
    groups: dict[tuple[str, str, bool], list[str]] = {}
    out: dict[str, str] = {}
    for j in judgments:
        if j.get("split") in SPLITS:
            out[j["id"]] = j["split"]
            continue
        groups.setdefault((j["kind"], j["lang"], bool(j["answerable"])), []).append(j["id"])
    for ids in groups.values():
        ordered = sorted(ids, key=lambda i: hashlib.sha256(i.encode()).hexdigest())
        cut = round(share * len(ordered))
        for n, qid in enumerate(ordered):
            out[qid] = SPLITS[0] if n < cut else SPLITS[1]
    return out


def render(judgments: list[dict]) -> dict[str, str]:
    """{relative path: file text} of queries.jsonl and the two qrels files."""
    split = split_of(judgments)
    queries = [
        json.dumps(
            {
                "_id": j["id"],
                "text": j["query"],
                "type": j["kind"],
                "lang": j["lang"],
                "answerable": bool(j["answerable"]),
                "split": split[j["id"]],
            },
            ensure_ascii=False,
        )
        for j in judgments
    ]
    files = {"queries.jsonl": "\n".join(queries) + "\n"}
    for name in SPLITS:
        lines = ["query-id\tcorpus-id\tscore"]
        for j in judgments:
            if split[j["id"]] == name:
                lines += [f"{j['id']}\t{doc}\t{grade}" for doc, grade in j["relevant"].items()]
        files[f"qrels/{name}.tsv"] = "\n".join(lines) + "\n"
    return files


def main(folder: Path = HERE, doc: str | None = __doc__) -> int:
    """Write (or ``--check``) the files derived from ``folder/judgments.jsonl`` in ``folder``;
    another query set with the same judgment format calls it with its own folder and
    docstring. Returns the exit code (1: ``--check`` found stale files)."""
    ap = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--check", action="store_true", help="compare, do not write")
    args = ap.parse_args()
    stale = []
    for rel, text in render(read_judgments(folder / "judgments.jsonl")).items():
        path = folder / rel
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(rel)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if stale:
        sys.stderr.write(f"out of date: {', '.join(stale)} (run build.py)\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
