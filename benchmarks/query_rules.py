"""Wall time of the rule-based intent extractor and planner on max-length queries
(``QUERY_MAX_CHARS`` characters of one repeated token), the figure that
``tests/unit/logic/test_intent_planner.py::test_max_length_query_of_one_repeated_token_is_linear``
guards structurally (its work grows linearly with the query; it times nothing).

Usage: python benchmarks/query_rules.py [--runs 5] [--json]

No store and no model: the extractor runs over the bundled catalog's names and words, as in
the unit tests. Per token: the best and median of ``--runs`` extract + plan calls (ms).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from agentic_search.logic.intent import CatalogLookup
from agentic_search.logic.intent_rules import RuleBasedIntentExtractor
from agentic_search.logic.planner import RuleBasedPlanner
from agentic_search.logic.schema import load_schema
from agentic_search.logic.text import default_analyzer
from agentic_search.sync.files import bundled_catalog_path, read_catalog
from agentic_search.wire import QUERY_MAX_CHARS

TOKENS = ("a", "free ", "not ", "cursor ", "vs ", "under $", "rag ", "\u201c")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    schema = load_schema("tools")
    records = read_catalog(bundled_catalog_path(), schema).records
    analyzer = default_analyzer()
    vocabulary = {t for r in records for t in analyzer.terms(" ".join(map(str, r.values())))}
    lookup = CatalogLookup.of(
        schema,
        records,
        known=lambda terms: {t for t in terms if t in vocabulary},
        analyzer=analyzer,
    )
    extractor, planner = RuleBasedIntentExtractor(schema, lookup), RuleBasedPlanner(schema)
    rows = []
    for token in TOKENS:
        query = (token * QUERY_MAX_CHARS)[:QUERY_MAX_CHARS]
        times = []
        for _ in range(max(1, args.runs)):
            t = time.perf_counter()
            planner.plan(extractor.extract(query))
            times.append((time.perf_counter() - t) * 1000.0)
        rows.append({"token": token, "best_ms": min(times), "p50_ms": statistics.median(times)})
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'token':<10} {'best ms':>9} {'p50 ms':>9}")
    for row in rows:
        print(f"{row['token']!r:<10} {row['best_ms']:>9.1f} {row['p50_ms']:>9.1f}")


if __name__ == "__main__":
    main()
