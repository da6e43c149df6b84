"""Every golden and tools_queries response, as JSON lines, for a before/after comparison.

Usage: python benchmarks/responses.py --home DIR --out FILE.jsonl [--compare OTHER.jsonl]

Searches the bundled tools catalog (ingested into ``--home`` on first use; no result cache)
with the golden queries (cli/agentic_search_cli/data/tools_golden.jsonl) and the
tools_queries benchmark's tuning and held-out queries, and writes one line per query: its
split, its text and the whole response with every timing, cache note and correlation id left
out. ``--compare`` then counts the responses that differ from another run's file (a change
that must not move any answer: run it on the old code and the new, over the same index).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "cli" / "agentic_search_cli" / "data" / "tools_golden.jsonl"
TOOLS = REPO / "benchmarks" / "tools_queries" / "queries.jsonl"
#: Keys whose values change from run to run: timings, cache notes, ids of the run.
VOLATILE = re.compile(r"(ms|timing|latency|correlation|elapsed|seconds|cache)", re.I)


def stable(value: Any) -> Any:
    """``value`` without the keys :data:`VOLATILE` matches, at any depth."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if not VOLATILE.search(k)}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def queries() -> list[tuple[str, str]]:
    """(split, text) of every golden and tools_queries query."""
    golden = [json.loads(line) for line in GOLDEN.read_text().splitlines() if line.strip()]
    tools = [json.loads(line) for line in TOOLS.read_text().splitlines() if line.strip()]
    return [("golden", g["query"]) for g in golden] + [(t["split"], t["text"]) for t in tools]


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--home", type=Path, required=True, help="AGENTIC_SEARCH_HOME of the index")
    ap.add_argument("--out", type=Path, required=True, help="the JSON lines to write")
    ap.add_argument("--compare", type=Path, help="another run's file: count what differs")
    ap.add_argument(
        "--budget-ms",
        type=float,
        default=600_000.0,
        help="ROUND_BUDGET_MS (default 600000: a busy host's slow round must not stop the "
        "rounds of one run and not of the other); the source deadline is lifted alike",
    )
    args = ap.parse_args()
    from agentic_search.config import Settings
    from agentic_search.service import SearchService

    service = SearchService.create(
        Settings(
            agentic_search_home=args.home,
            cache_backend="none",
            round_budget_ms=args.budget_ms,
            source_timeout_s=max(args.budget_ms / 1000.0, 1.0),
        ),
        "tools",
    )
    try:
        service.ensure_bundled_catalog()
        rows = [
            {"split": split, "query": text, "response": stable(service.search(text).wire())}
            for split, text in queries()
        ]
    finally:
        service.close()
    args.out.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    print(f"{len(rows)} responses -> {args.out}")
    if args.compare is None:
        return 0
    other = [json.loads(line) for line in args.compare.read_text().splitlines() if line]
    differ = [a["query"] for a, b in zip(rows, other, strict=True) if a != b]
    print(f"identical: {len(rows) - len(differ)}, differ: {len(differ)}")
    for text in differ[:10]:
        print(f"  differs: {text}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
