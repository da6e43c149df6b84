"""A fixed subset of a BEIR-layout dataset, for measurements whose full ingest does not fit in
a sitting (multilingual-e5-small embeds documents at a fraction of MiniLM's tokens/s).

Usage: python benchmarks/subset.py --dataset DIR --split test [--queries Q] --others N --seed 0
       --out DIR

The subset's queries are ``Q`` of the split's judged queries (all when not given) drawn with
``random.Random(seed)`` (sorted ids, then sampled: the same subset on every machine), its qrels
their rows of ``qrels/SPLIT.tsv``, and its corpus every document judged for them plus ``N`` of
the other documents drawn the same way, in the corpus's order.
Scores on a subset are higher than on the full corpus (fewer distractors): compare models on the
same subset, never a subset's figure with a full corpus's.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path


def make_subset(
    dataset: Path, split: str, others: int, seed: int, out: Path, queries: int | None = None
) -> dict[str, int]:
    """Write the subset into ``out`` (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv); returns
    ``{"judged": n, "others": n, "queries": n}``.

    Raises:
        FileNotFoundError: when the dataset lacks one of its three files.
    """
    qrels_lines = (dataset / "qrels" / f"{split}.tsv").read_text().splitlines()
    lines = [line for line in qrels_lines[1:] if line.strip()]
    rows = [line.split("\t") for line in lines]
    qids = {r[0] for r in rows}
    if queries is not None and queries < len(qids):
        qids = set(random.Random(seed).sample(sorted(qids), queries))
    kept_rows = [line for line, r in zip(lines, rows, strict=True) if r[0] in qids]
    rows = [r for r in rows if r[0] in qids]
    judged = {r[1] for r in rows}
    corpus = (dataset / "corpus.jsonl").read_text().splitlines()
    ids = [json.loads(line)["_id"] for line in corpus]
    rest = sorted(set(ids) - judged)
    drawn = set(random.Random(seed).sample(rest, min(others, len(rest))))
    keep = judged | drawn
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    lines = [line for line, i in zip(corpus, ids, strict=True) if i in keep]
    (out / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    kept_queries = [
        q
        for q in (dataset / "queries.jsonl").read_text().splitlines()
        if q.strip() and json.loads(q)["_id"] in qids
    ]
    (out / "queries.jsonl").write_text("\n".join(kept_queries) + "\n")
    (out / "qrels" / f"{split}.tsv").write_text("\n".join([qrels_lines[0], *kept_rows]) + "\n")
    return {"judged": len(judged & set(ids)), "others": len(drawn), "queries": len(kept_queries)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--split", default="test")
    parser.add_argument("--queries", type=int, help="judged queries drawn (default: all)")
    parser.add_argument("--others", type=int, required=True, help="unjudged documents drawn")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    print(
        json.dumps(
            make_subset(args.dataset, args.split, args.others, args.seed, args.out, args.queries)
        )
    )


if __name__ == "__main__":
    main()
