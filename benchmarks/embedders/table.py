"""Markdown tables of `agentic-search eval --json` outputs of the tools queries, one per model.

    python benchmarks/embedders/table.py NAME=FILE.json [NAME=FILE.json ...]

Prints, per system, nDCG@10 per split (tuning, held-out) and per kind (non-English and
task-phrased first), then the executor's abstention per split. Reads the JSON only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

KINDS = ("non-english", "task", "typo", "constraint", "alternative", "comparison", "paragraph")


def _cell(block: dict, kind: str) -> str:
    value = block.get("by_type", {}).get(kind, {}).get("ndcg@10")
    return "–" if value is None else f"{value:.3f}"


def main(argv: list[str]) -> int:
    """Entry point (see module docstring)."""
    parser = argparse.ArgumentParser(
        description="Markdown tables of `agentic-search eval --json` outputs, one per model."
    )
    parser.add_argument("runs", nargs="+", metavar="NAME=FILE.json", help="a model's eval JSON")
    args = parser.parse_args(argv)
    runs = {}
    for arg in args.runs:
        name, _, path = arg.partition("=")
        runs[name] = json.loads(Path(path).read_text())
    systems = next(iter(runs.values()))["systems"].keys()
    head = "| system | model | split | all | " + " | ".join(KINDS) + " |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for system in systems:
        for name, run in runs.items():
            block = run["systems"].get(system)
            if block is None:
                continue
            for split in ("tuning", "heldout"):
                s = block["by_split"][split]
                cells = " | ".join(_cell(s, k) for k in KINDS)
                print(f"| {system} | {name} | {split} | {s['ndcg@10']:.3f} | {cells} |")
    print()
    print("| model | split | unanswerable clean | padded | answerable left empty | p50 / p95 ms |")
    print("|---|---|---|---|---|---|")
    for name, run in runs.items():
        block = run["systems"]["executor"]
        lat = block["latency_ms"]
        for split in ("tuning", "heldout"):
            a = block["by_split"][split]["abstention"]
            print(
                f"| {name} | {split} | {a['clean']}/{a['unanswerable']} | "
                f"{a['padded']}/{a['unanswerable']} | {a['left_empty']}/{a['answerable']} | "
                f"{lat['p50']:.0f} / {lat['p95']:.0f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
