"""How the capability step's cosine threshold (``capabilities.min_score``, or a model's
``calibrations`` entry) is chosen for an embedder: on the tuning split of
benchmarks/tools_queries only.

Usage: python benchmarks/quality/capabilities.py [--embedder minilm|e5-small|embeddinggemma]
       [--collection-prefix PREFIX] [--split tuning] [--json]

Every query of the split is read by the rule-based extractor with the threshold off (-1: the
best capability entry of every query whose words matched no capability vocabulary, with its
cosine). A match is *right* when a tool judged relevant to an answerable query (qrels grade
1 or more) holds that value in the vocabulary's field; every match of an unanswerable query
is wrong. The threshold chosen is the lowest on a 0.01 grid above every wrong match's cosine
(every match it lets through on the split is right); the matches are printed best first.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from agentic_search.config import Settings
from agentic_search.logic.schema import EmbedderCalibration
from agentic_search.pipeline.catalog import extract_by_rules
from agentic_search.service import SearchService

QUERIES = Path(__file__).resolve().parents[1] / "tools_queries"
CATALOG = Path(__file__).resolve().parents[2] / "layers/core/agentic_search/data/tools.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", default="tuning")
    parser.add_argument(
        "--embedder", choices=["minilm", "e5-small", "embeddinggemma"], default="minilm"
    )
    parser.add_argument("--collection-prefix", default="", help="of an existing tools index")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    queries = [json.loads(x) for x in (QUERIES / "queries.jsonl").read_text().splitlines()]
    relevant: dict[str, set[str]] = {}
    for line in (QUERIES / "qrels" / f"{args.split}.tsv").read_text().splitlines()[1:]:
        qid, did, grade = line.split("\t")
        if int(grade) >= 1:
            relevant.setdefault(qid, set()).add(did)
    tools = {
        r["id"]: r for r in (json.loads(x) for x in CATALOG.read_text().splitlines() if x.strip())
    }
    settings = Settings(
        cache_backend="none",
        embedding_provider="local",
        local_embedding_model=args.embedder,  # type: ignore[arg-type]
        collection_prefix=args.collection_prefix,
    )
    svc = SearchService.create(settings, "tools")
    svc.ensure_bundled_catalog()
    c = svc.deps
    schema = c.schema
    model = settings.embedder_model
    schema.calibrations = {model: EmbedderCalibration(capability_min_score=-1.0)}
    fields = schema.vocabulary_fields
    rows = []
    try:
        for q in (q for q in queries if q["split"] == args.split):
            intent = extract_by_rules(c, q["text"])
            for m in intent.by_meaning:
                field = fields.get(m.vocabulary, m.vocabulary)
                holders = {
                    rid
                    for rid in relevant.get(q["_id"], set())
                    if m.value in _values(tools.get(rid, {}).get(field))
                }
                rows.append(
                    {
                        "id": q["_id"],
                        "text": q["text"],
                        "answerable": q["answerable"],
                        "value": m.value,
                        "score": m.score,
                        "right": q["answerable"] and bool(holders),
                    }
                )
    finally:
        svc.close()
    rows.sort(key=lambda r: -r["score"])
    wrong = max((r["score"] for r in rows if not r["right"]), default=-1.0)
    chosen = math.floor(wrong * 100 + 1e-9) / 100 + 0.01
    out = {
        "embedder": args.embedder,
        "model": model,
        "chosen_min_score": round(chosen, 2),
        "right_at_or_above": sum(r["right"] and r["score"] >= chosen for r in rows),
        "matches": rows,
    }
    if args.json:
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return
    print(f"{model}: min_score {out['chosen_min_score']} ({out['right_at_or_above']} right above)")
    for r in rows:
        print(f"{r['score']:.3f} {'right' if r['right'] else 'WRONG'} {r['value']!r} {r['text']}")


def _values(value: object) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    return [] if value is None else [str(value)]


if __name__ == "__main__":
    main()
