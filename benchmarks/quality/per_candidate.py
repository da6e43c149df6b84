"""How the tools schema's per-candidate abstention thresholds were chosen: on the tuning split
of benchmarks/tools_queries only (the held-out split is reported by ``eval``, never read here).

Usage: python benchmarks/quality/per_candidate.py [--split tuning] [--json]

Runs every query of the split once with abstention off (a ``QualitySpec()`` that supports
every candidate), keeps each candidate's own evidence (cosine to the query, an asked
vocabulary value, every query word, named), then replays :mod:`agentic_search.domain.quality`
over a grid of ``candidate_relevance`` x ``candidate_floor`` and prints, per pair, the
answerable queries left empty, the unanswerable ones padded and nDCG@10 of what is returned
(pytrec_eval). The pair chosen never ranks below the baseline: among the pairs whose nDCG@10 is
at least ``--baseline`` (hybrid-rrf's on the split, from ``eval``; 0.531 on tuning), the
fewest unanswerable queries padded, then the fewest answerable left empty, then the highest
floor (the most padding withheld at no cost).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytrec_eval

from agentic_search.config import Settings
from agentic_search.domain.quality import CandidateEvidence, answer_quality, clearing
from agentic_search.domain.schema import QualitySpec
from agentic_search.service import SearchService

QUERIES = Path(__file__).resolve().parents[1] / "tools_queries"
RELEVANCE = [0.20, 0.22, 0.24, 0.26, 0.28, 0.30, 0.32, 0.34, 0.36, 0.38, 0.42]
FLOOR = [-1.0, 0.05, 0.1, 0.15, 0.2, 0.25]


def collect(split: str) -> list[tuple[dict, float, list[CandidateEvidence]]]:
    """(query, coverage, evidence in rank order) of each query of ``split``."""
    queries = [json.loads(line) for line in (QUERIES / "queries.jsonl").read_text().splitlines()]
    svc = SearchService.create(Settings(cache_backend="none"), "tools")
    svc.ensure_bundled_catalog()
    calibrated = svc.components.schema.quality
    svc.components.schema.quality = QualitySpec(
        min_relevance=calibrated.min_relevance, min_coverage=calibrated.min_coverage
    )
    analyzer, fields = svc.components.analyzer, svc.components.schema.vocabulary_fields
    out = []
    try:
        for q in (q for q in queries if q["split"] == split):
            try:
                resp = svc.search(q["text"], limit=100)
            except ValueError:  # over the length bound: scored as an error by eval
                continue
            words = set(analyzer.terms(resp.intent.normalized_query))
            asked = {fields[v]: set(vals) for v, vals in resp.intent.matches.items() if v in fields}
            pins = {p for r in resp.evidence.report.rounds for p in r.pinned}
            evidence = [
                CandidateEvidence(
                    id=c.id,
                    relevance=c.relevance,
                    vocabulary=any(
                        asked.get(f, set()) & set(v) for f, v in c.provenance.matched_values.items()
                    ),
                    lexical=bool(words) and words <= set(c.provenance.matched_terms),
                    named=c.id in pins,
                )
                for c in resp.output.candidates
            ]
            out.append((q, resp.output.confidence, evidence))
    finally:
        svc.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", default="tuning")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--baseline", type=float, default=0.531, help="hybrid-rrf's nDCG@10 on the split"
    )
    args = parser.parse_args()
    qrels: dict[str, dict[str, int]] = {}
    for line in (QUERIES / "qrels" / f"{args.split}.tsv").read_text().splitlines()[1:]:
        qid, did, grade = line.split("\t")
        qrels.setdefault(qid, {})[did] = int(grade)
    runs = collect(args.split)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"})
    rows = []
    for rel in RELEVANCE:
        for floor in FLOOR:
            spec = QualitySpec(
                min_relevance=0.42, min_coverage=0.9, candidate_relevance=rel, candidate_floor=floor
            )
            empty = padded = 0
            run: dict[str, dict[str, float]] = {}
            for q, coverage, evidence in runs:
                kept = clearing(spec, answer_quality(spec, evidence, coverage), evidence)
                if q["answerable"]:
                    empty += not kept
                    run[q["_id"]] = {rid: 100.0 - i for i, rid in enumerate(kept)} or {"-": 0.0}
                else:
                    padded += bool(kept)
            scores = evaluator.evaluate(run)
            ndcg = sum(s["ndcg_cut_10"] for s in scores.values()) / max(1, len(qrels))
            rows.append(
                {"candidate_relevance": rel, "candidate_floor": floor, "left_empty": empty,
                 "padded": padded, "ndcg@10": round(ndcg, 4)}
            )  # fmt: skip
    rows.sort(
        key=lambda r: (
            r["ndcg@10"] < args.baseline,
            r["padded"],
            r["left_empty"],
            -r["candidate_floor"],
        )
    )
    if args.json:
        print(json.dumps({"chosen": rows[0], "rows": rows}, indent=2))
        return
    answerable = sum(q["answerable"] for q, *_ in runs)
    print(f"{args.split}: {answerable} answerable, {len(runs) - answerable} unanswerable")
    print(f"chosen (nDCG@10 >= {args.baseline}):", rows[0])
    for r in rows:
        print(r)


if __name__ == "__main__":
    main()
