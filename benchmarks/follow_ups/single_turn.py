"""Single-turn answers before and after a change: every golden query and every tools query
(both splits) searched with no history, each response reduced to what a client reads (the
ranked ids and scores, the intent, the plan, the answer's quality; no timings), written as one
JSON object per query. Two runs' files compare line by line (``--compare A B``).

Usage: python benchmarks/follow_ups/single_turn.py --out FILE
       python benchmarks/follow_ups/single_turn.py --compare BEFORE AFTER

The bundled catalog is indexed under ``$AGENTIC_SEARCH_HOME`` on first use; no result cache.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "cli" / "agentic_search_cli" / "data" / "tools_golden.jsonl"
TOOLS = ROOT / "benchmarks" / "tools_queries" / "queries.jsonl"
#: response keys that change from run to run (timings) or say how it was served
_VOLATILE = {"executionStats", "cache", "timingsMs", "retrievalReport"}


def queries() -> list[tuple[str, str]]:
    """(set, query) of the golden and the tools queries, in file order."""
    out = []
    for line in GOLDEN.read_text().splitlines():
        if line.strip():
            out.append(("golden", json.loads(line)["query"]))
    for line in TOOLS.read_text().splitlines():
        if line.strip():
            q = json.loads(line)
            out.append((f"tools-{q.get('split', '')}", q["text"]))
    return out


def reduced(wire: dict) -> dict:
    """What a client reads of a response, without timings."""
    out = {k: v for k, v in wire.items() if k not in _VOLATILE}
    out["candidates"] = [
        {"id": c["id"], "score": c["score"], "relaxed": c.get("relaxed")}
        for c in wire.get("candidates", [])
    ]
    return out


def run(out: Path) -> None:
    from agentic_search.config import Settings
    from agentic_search.service import SearchService

    service = SearchService.create(Settings(cache_backend="none"), "tools")
    try:
        service.ensure_bundled_catalog()
        with out.open("w") as fh:
            for kind, query in queries():
                resp = service.search(query, limit=10)
                row = {"set": kind, "query": query, "response": reduced(resp.wire())}
                fh.write(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n")
    finally:
        service.close()


def compare(before: Path, after: Path) -> int:
    """Print each query whose response differs; 1 when any does."""
    a = before.read_text().splitlines()
    b = after.read_text().splitlines()
    differ = [json.loads(x)["query"] for x, y in zip(a, b, strict=True) if x != y]
    for q in differ:
        print(f"differs: {q}")
    print(f"{len(a) - len(differ)} of {len(a)} responses identical")
    return 1 if differ else 0


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path)
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = ap.parse_args()
    if args.compare:
        return compare(*args.compare)
    if args.out is None:
        ap.error("--out or --compare")
    run(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
