"""How the tools schema's per-candidate abstention thresholds were chosen: on the tuning split
of benchmarks/tools_queries only (the held-out split is reported by ``eval``, never read here).

Usage: python benchmarks/quality/per_candidate.py [--split tuning]
       [--embedder minilm|e5-small|embeddinggemma]
       [--collection-prefix PREFIX] [--baseline NDCG] [--json]

Runs every query of the split once with abstention off (a ``QualitySpec()`` that supports
every candidate), keeps each candidate's own evidence (best cosine to the query's text over
the dense sources, an asked vocabulary value, every query word, named) and how the query
reads against the catalog (its content words and those no record holds), then replays
:mod:`agentic_search.logic.quality` over a grid of ``candidate_relevance`` x
``unread_relevance`` x ``missing_word_relevance`` (``candidate_floor`` kept at the schema's)
and prints, per triple, the answerable queries left empty, the unanswerable ones padded and
nDCG@10 of what is returned (pytrec_eval). The triple chosen never ranks below the baseline:
among those whose nDCG@10 is at least ``--baseline`` (hybrid-rrf's on the split, from
``eval``; 0.530 on tuning), the fewest queries wrong (answerable left empty plus
unanswerable padded), then the highest nDCG@10, then the highest thresholds (the least
padding for the same result). ``--grid pair`` (the default for another embedder than
MiniLM) replays the earlier grid instead (``candidate_relevance`` x ``candidate_floor``,
every query read alike).

A cosine threshold belongs to one embedder's scale: ``--embedder`` picks the local model (the
tools index must have been built with it; ``--collection-prefix`` names an existing one, such
as ``eval``'s ``eval-tools-queries-e5-small-``), and the grid is that model's
(:data:`GRIDS`; e5-small's cosines run from about 0.7 to 0.95). The chosen pair goes into the
tools schema: ``quality`` for MiniLM, ``calibrations: {<model>: {quality: ...}}`` for another.
``min_relevance`` (the best cosine a ``good`` verdict needs; it withholds nothing) is carried
to another model by quantile: the printed ``min_relevance_quantile`` is the cosine below which
the same share of answerable queries' best cosines falls as below MiniLM's 0.42.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytrec_eval

from agentic_search.config import Settings
from agentic_search.logic.quality import (
    CandidateEvidence,
    QueryReading,
    answer_quality,
    best_cosine,
    ids_to_return,
    read_query,
)
from agentic_search.logic.schema import QualitySpec
from agentic_search.pipeline.finalize import query_reading
from agentic_search.pipeline.relevance import word_relevance
from agentic_search.service import SearchService

QUERIES = Path(__file__).resolve().parents[1] / "tools_queries"
RELEVANCE = [0.20, 0.22, 0.24, 0.26, 0.28, 0.30, 0.32, 0.34, 0.36, 0.38, 0.42]
#: ``unread_relevance`` and ``missing_word_relevance`` grids (MiniLM's scale).
UNREAD = [0.12, 0.14, 0.16, 0.18, 0.20, 0.22, 0.24]
MISSING = [0.30, 0.34, 0.38, 0.42, 0.46, 0.50]
FLOOR = [-1.0, 0.05, 0.1, 0.15, 0.2, 0.25]
#: (candidate_relevance grid, candidate_floor grid) per local model, on its cosine scale.
GRIDS = {
    "minilm": (RELEVANCE, FLOOR),
    "e5-small": (
        [round(0.74 + 0.01 * i, 2) for i in range(18)],
        [-1.0, 0.70, 0.72, 0.74, 0.76, 0.78, 0.80],
    ),
    # EmbeddingGemma (EMBEDDINGGEMMA_QUANTIZATION / EMBEDDINGGEMMA_DIM pick the graph): top-1
    # cosines of answerable tools queries from about 0.37, unanswerable ones up to about 0.53
    "embeddinggemma": (
        [round(0.20 + 0.02 * i, 2) for i in range(20)],
        [-1.0, 0.10, 0.15, 0.20, 0.25, 0.30, 0.35],
    ),
}
#: MiniLM's ``min_relevance`` (tools schema), carried to another model by quantile.
MINILM_MIN_RELEVANCE = 0.42


def collect(
    split: str, embedder: str = "minilm", prefix: str = ""
) -> list[tuple[dict, float, list[CandidateEvidence], tuple[QueryReading, dict[str, float]]]]:
    """(query, coverage, evidence in rank order, (reading, cosine of each word no record
    holds)) of each query of ``split``, searched with the local model ``embedder`` in the
    tools index of collection prefix ``prefix``; the reading takes no word as incidental."""
    queries = [json.loads(line) for line in (QUERIES / "queries.jsonl").read_text().splitlines()]
    settings = Settings(
        cache_backend="none",
        embedding_provider="local",
        local_embedding_model=embedder,
        collection_prefix=prefix,
    )
    svc = SearchService.create(settings, "tools")
    svc.ensure_bundled_catalog()
    schema = svc.deps.schema
    calibrated = schema.quality_for(settings.embedder_model)
    schema.calibrations = {}  # abstention off under every model: every candidate replayed
    schema.quality = QualitySpec(
        min_relevance=calibrated.min_relevance, min_coverage=calibrated.min_coverage
    )
    analyzer, fields = svc.deps.analyzer, svc.deps.schema.vocabulary_fields
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
                    relevance=best_cosine(c.relevance, c.provenance.hits),
                    vocabulary=any(
                        asked.get(f, set()) & set(v) for f, v in c.provenance.matched_values.items()
                    ),
                    lexical=bool(words) and words <= set(c.provenance.matched_terms),
                    named=c.id in pins,
                )
                for c in resp.output.candidates
            ]
            # the reading as Finalize makes it, with no word taken as incidental (the floor
            # is candidate_relevance, replayed by the grid: read_query again there)
            reading = query_reading(svc.deps, resp.intent, {})
            cosines = word_relevance(svc.deps, resp.plan, resp.intent)
            out.append((q, resp.output.confidence, evidence, (reading, cosines)))
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
        "--baseline", type=float, default=0.530, help="hybrid-rrf's nDCG@10 on the split"
    )
    parser.add_argument("--embedder", choices=sorted(GRIDS), default="minilm")
    parser.add_argument(
        "--grid",
        choices=["reading", "pair"],
        default=None,
        help="reading: relevance x unread x missing-word (MiniLM); pair: relevance x floor",
    )
    parser.add_argument("--floor", type=float, default=0.10, help="candidate_floor (reading grid)")
    parser.add_argument("--collection-prefix", default="", help="of an existing tools index")
    parser.add_argument(
        "--reference", type=Path, help="MiniLM's --json output: prints min_relevance_quantile"
    )
    args = parser.parse_args()
    relevance_grid, floor_grid = GRIDS[args.embedder]
    if args.grid is None:  # the reading thresholds' grids are on MiniLM's scale
        args.grid = "reading" if args.embedder == "minilm" else "pair"
    qrels: dict[str, dict[str, int]] = {}
    for line in (QUERIES / "qrels" / f"{args.split}.tsv").read_text().splitlines()[1:]:
        qid, did, grade = line.split("\t")
        qrels.setdefault(qid, {})[did] = int(grade)
    runs = collect(args.split, args.embedder, args.collection_prefix)
    best = sorted(
        max((e.relevance for e in ev if e.relevance is not None), default=0.0)
        for q, _, ev, _ in runs
        if q["answerable"]
    )
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"})
    rows = []
    if args.grid == "pair":
        specs = [
            {"candidate_relevance": rel, "candidate_floor": floor}
            for rel in relevance_grid
            for floor in floor_grid
        ]
    else:
        specs = [
            {"candidate_relevance": rel, "candidate_floor": args.floor,
             "unread_relevance": unread, "missing_word_relevance": missing}
            for rel in relevance_grid for unread in UNREAD for missing in MISSING
        ]  # fmt: skip
    for values in specs:
        spec = QualitySpec(min_relevance=0.42, min_coverage=0.9, **values)
        empty = padded = 0
        run: dict[str, dict[str, float]] = {}
        for q, coverage, evidence, (read, cosines) in runs:
            reading = read_query(
                read.words, set(read.words) - set(read.unknown), cosines, spec.candidate_relevance
            )
            verdict = answer_quality(spec, evidence, coverage, reading)
            kept = ids_to_return(spec, verdict, evidence, reading)
            if q["answerable"]:
                empty += not kept
                run[q["_id"]] = {rid: 100.0 - i for i, rid in enumerate(kept)} or {"-": 0.0}
            else:
                padded += bool(kept)
        scores = evaluator.evaluate(run)
        ndcg = sum(s["ndcg_cut_10"] for s in scores.values()) / max(1, len(qrels))
        rows.append({**values, "left_empty": empty, "padded": padded, "ndcg@10": round(ndcg, 4)})
    if args.grid == "pair":
        rows.sort(
            key=lambda r: (
                r["ndcg@10"] < args.baseline,
                r["padded"],
                r["left_empty"],
                -r["candidate_floor"],
            )
        )
    else:
        rows.sort(
            key=lambda r: (
                r["ndcg@10"] < args.baseline,
                r["padded"] + r["left_empty"],
                -r["ndcg@10"],
                -r["missing_word_relevance"],
                -r["unread_relevance"],
                -r["candidate_relevance"],
            )
        )
    out: dict = {"embedder": args.embedder, "best_cosines": best, "chosen": rows[0]}
    if args.reference:
        ref = sorted(json.loads(args.reference.read_text())["best_cosines"])
        share = sum(c < MINILM_MIN_RELEVANCE for c in ref) / max(1, len(ref))
        out["min_relevance_share"] = round(share, 3)
        out["min_relevance_quantile"] = round(best[min(len(best) - 1, int(share * len(best)))], 3)
    if args.json:
        print(json.dumps({**out, "rows": rows}, indent=2))
        return
    answerable = sum(q["answerable"] for q, *_ in runs)
    print(f"{args.split}: {answerable} answerable, {len(runs) - answerable} unanswerable")
    print(f"chosen (nDCG@10 >= {args.baseline}):", rows[0])
    if "min_relevance_quantile" in out:
        print("min_relevance by quantile:", out["min_relevance_quantile"])
    for r in rows:
        print(r)


if __name__ == "__main__":
    main()
