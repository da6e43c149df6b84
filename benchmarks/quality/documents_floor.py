"""The documents domain's "no good match" floor on one embedder's cosine scale.

Usage: python benchmarks/quality/documents_floor.py --dataset DIR [--split train]
       [--embedder minilm|e5-small] [--collection-prefix PREFIX] [--json]

documents.yaml sets ``min_relevance`` and ``candidate_relevance`` just under the lowest
best-candidate cosine seen on answerable questions (SciFact train: 0.31 under
all-MiniLM-L6-v2, so 0.30). Another embedder puts cosines on another scale
(multilingual-e5-small: unrelated pairs near 0.75), so its floor is read the same way on the
same tuning split: for each judged query, the cosine of the first hit of the dense
(``content``) vector; printed as min and percentiles. Reads the index ``agentic-search eval``
built (``eval-<dataset>-[<model>-]documents`` under ``AGENTIC_SEARCH_HOME``); never ingests.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from pathlib import Path

from agentic_search.service import SearchService
from agentic_search_cli.common import settings_for
from agentic_search_cli.evaluation.datasets import load_beir
from agentic_search_cli.evaluation.systems import dense_aspect


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dataset", required=True, type=Path)
    parser.add_argument("--split", default="train")
    parser.add_argument("--embedder", choices=["minilm", "e5-small"], default="minilm")
    parser.add_argument("--collection-prefix")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    name = re.sub(r"[^a-z0-9-]+", "-", args.dataset.resolve().name.lower()).strip("-")
    model = "" if args.embedder == "minilm" else f"{args.embedder}-"
    prefix = args.collection_prefix or f"eval-{name}-{model}"
    settings = settings_for(
        collection_prefix=prefix,
        cache_backend="none",
        local_embedding_model=args.embedder,
        embedding_provider="local",
    )
    svc = SearchService.create(settings, "documents")
    try:
        data = load_beir(args.dataset, args.split, svc.schema)
        aspect = dense_aspect(svc)
        best: list[float] = []
        for qid in data.qrels:
            vec = svc.deps.embedder.embed_query(data.queries[qid])
            hits = svc.deps.store.query_dense(svc.schema, aspect, vec, 1)
            best.append(hits[0].score if hits else float("nan"))
    finally:
        svc.close()
    best.sort()
    n = len(best)

    def pct(p: float) -> float:
        return round(best[min(n - 1, int(p * n))], 4)

    report = {
        "dataset": name,
        "split": args.split,
        "embedder": args.embedder,
        "queries": n,
        "min": round(best[0], 4),
        "p01": pct(0.01),
        "p05": pct(0.05),
        "median": round(statistics.median(best), 4),
        "lowest5": [round(x, 4) for x in best[:5]],
    }
    print(json.dumps(report, indent=None if args.json else 2))


if __name__ == "__main__":
    main()
