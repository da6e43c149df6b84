"""What the rounds after the first add, query by query, on a BEIR dataset already indexed by
``agentic-search eval`` (its collection ``eval-<dataset>-documents``).

Usage: python benchmarks/rounds.py --dataset datasets/hotpotqa [--split test]
       [--limit 10] [--out benchmarks/hotpotqa/rounds.json]

Every judged query runs twice through ``SearchService.search``: with one round and with the
executor's default (``MAX_ROUNDS``). Reported: how many queries took 2+ rounds, what each
round did (bridges placed, records pinned, new evidence), and per query type the share with
every relevant document in the top ``limit`` (both@k) after one round and after all rounds,
with the queries gained and lost.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from agentic_search.config import Settings
from agentic_search.logic.chunking import doc_ranking
from agentic_search.service import SearchService
from agentic_search_cli.evaluation.datasets import load_beir


def run(dataset: Path, split: str, limit: int) -> dict[str, Any]:
    """The per-round report (see the module docstring) as a JSON-able dict."""
    name = dataset.resolve().name
    settings = Settings(collection_prefix=f"eval-{name}-", cache_backend="none")
    svc = SearchService.create(settings, "documents")
    try:
        data = load_beir(dataset, split, svc.schema)
        rounds_taken: Counter[int] = Counter()
        per_round: dict[int, Counter[str]] = defaultdict(Counter)
        both: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
        for qid, text in data.queries.items():
            relevant = {d for d, r in data.qrels[qid].items() if r > 0}
            one = svc.search(text, limit=limit, rounds=1)
            full = svc.search(text, limit=limit)
            rounds_taken[full.output.execution_stats.rounds] += 1
            for rep in full.evidence.report.rounds if full.evidence else []:
                per_round[rep.round]["queries"] += 1
                per_round[rep.round]["bridges"] += len(rep.bridges)
                per_round[rep.round]["pinned"] += len(rep.pinned)
                per_round[rep.round]["new_evidence"] += len(rep.new_evidence)
            hit1 = relevant <= set(doc_ranking([c.id for c in one.output.candidates]))
            hitn = relevant <= set(doc_ranking([c.id for c in full.output.candidates]))
            typ = data.types.get(qid, "all")
            both[typ].append((hit1, hitn))
            both["all"].append((hit1, hitn))
    finally:
        svc.close()
    return {
        "dataset": name,
        "split": split,
        "queries": len(data.queries),
        "limit": limit,
        "rounds_taken": dict(sorted(rounds_taken.items())),
        "two_or_more_rounds": round(
            sum(n for r, n in rounds_taken.items() if r >= 2) / max(1, len(data.queries)), 3
        ),
        "per_round": {r: dict(c) for r, c in sorted(per_round.items())},
        "both_at_limit": {
            typ: {
                "one_round": round(sum(a for a, _ in rows) / len(rows), 3),
                "all_rounds": round(sum(b for _, b in rows) / len(rows), 3),
                "gained": sum(1 for a, b in rows if b and not a),
                "lost": sum(1 for a, b in rows if a and not b),
            }
            for typ, rows in both.items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dataset", type=Path, required=True, help="BEIR dataset folder")
    parser.add_argument("--split", default="test", help="qrels split (default: test)")
    parser.add_argument("--limit", type=int, default=10, help="results per query (the k of both@k)")
    parser.add_argument("--out", type=Path, help="write the report as JSON here too")
    args = parser.parse_args()
    report = run(args.dataset, args.split, args.limit)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
