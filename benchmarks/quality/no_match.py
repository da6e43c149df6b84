"""How often the answer-quality check says "no good match" where it should and where it
should not, on the bundled catalog (indexed on first use, as ``agentic-search search``).

Usage: python benchmarks/quality/no_match.py [--out benchmarks/quality/no_match.json]

Query sets: the golden queries (the catalog holds what they ask: a "none" verdict there is a
false alarm), split by id parity as the thresholds were chosen (odd ids: chosen on; even
ids: held out), and queries for tools the catalog does not hold (``no_match_dev.txt``: chosen
on; ``no_match_test.txt``: held out). Thresholds: the tools schema's ``quality``.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from agentic_search.config import Settings
from agentic_search.service import SearchService
from agentic_search_cli.bench import GOLDEN_PATH

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, help="write the counts as JSON here too")
    args = parser.parse_args()
    svc = SearchService.create(Settings(cache_backend="none"), "tools")
    svc.ensure_bundled_catalog()
    golden = [json.loads(line) for line in GOLDEN_PATH.read_text().splitlines() if line.strip()]
    sets = {
        "golden_odd (chosen on)": [g["query"] for g in golden if int(g["id"][1:]) % 2 == 1],
        "golden_even (held out)": [g["query"] for g in golden if int(g["id"][1:]) % 2 == 0],
        "no_match_dev (chosen on)": (HERE / "no_match_dev.txt").read_text().split("\n"),
        "no_match_test (held out)": (HERE / "no_match_test.txt").read_text().split("\n"),
    }
    report = {}
    try:
        for name, queries in sets.items():
            verdicts: Counter[str] = Counter()
            for q in [q for q in queries if q.strip()]:
                quality = svc.search(q, limit=10).output.answer_quality
                verdicts[quality.verdict if quality else "none given"] += 1
            report[name] = dict(verdicts)
    finally:
        svc.close()
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
