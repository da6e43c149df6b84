"""Tune the documents domain's one-round fusion on a BEIR split (train by default).

Collects, once per query, the two ranked lists the one-round executor fuses for the documents
domain (the ``content`` dense vector with the planned dense text, and BM25 with the planned
sparse text, each to depth ``--depth``) and then scores fusion variants offline with the same
metrics as ``agentic-search eval`` (pytrec_eval nDCG@10, Recall@100, MRR@10 over documents:
chunks ranked at their best chunk). Only the split given is read: tune on ``train``, report
``test`` afterwards with ``agentic-search eval``.

    PYTHONPATH=layers/core python benchmarks/tune_fusion.py \
        --dataset datasets/scifact --split train

The evaluation index (``eval-<dataset>-documents``) must exist: run ``agentic-search eval`` on
the dataset once first. (BM25 parameter variants needed the separate bm25s index, removed with
it: ``--bm25`` is refused.)
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from pathlib import Path

import numpy as np

from agentic_search.config import Settings
from agentic_search.logic.chunking import doc_ranking
from agentic_search.logic.fusion import fuse
from agentic_search.service import SearchService
from agentic_search.wire import RankedList
from agentic_search_cli import evaluation as ev


def collect(
    engine: SearchService, queries: dict[str, str], depth: int, keyword=None, detail=False
) -> dict:
    """{query id: {"dense": [(id, score)], "bm25": [(id, score)]}} with the planned texts;
    with ``detail`` also the texts (``dtext``, ``stext``) and the query vector (``qvec``)."""
    keyword = keyword or engine.deps.keyword
    out = {}
    for qid, text in queries.items():
        intent = engine.extract(text)
        plan = engine.deps.planner.plan(intent, limit=100)
        dtext = plan.vector_sources[0].text or text
        stext = plan.sparse_source.text if plan.sparse_source else text
        vec = engine.deps.embedder.embed_query(dtext)
        dense = engine.deps.store.query_dense(engine.schema, "content", vec, depth, None)
        sparse = keyword.search(engine.schema, stext, depth)
        out[qid] = {
            "dense": [(h.id, h.score) for h in dense],
            "bm25": [(h.id, h.score) for h in sparse],
        }
        if detail:
            out[qid].update(dtext=dtext, stext=stext, qvec=np.asarray(vec, dtype=np.float32))
    return out


def score(qrels, rankings) -> dict[str, float]:
    per = ev.evaluate_rankings(qrels, {q: doc_ranking(r)[:100] for q, r in rankings.items()})
    return ev.mean_metrics(per)


def fused(lists: dict, method: str, k: int, wd: float, ws: float, dd: int, sd: int) -> list[str]:
    dense = lists["dense"][:dd]
    bm25 = lists["bm25"][:sd]
    rl = [
        RankedList("dense", [i for i, _ in dense], [s for _, s in dense], wd),
        RankedList("bm25", [i for i, _ in bm25], [s for _, s in bm25], ws),
    ]
    return [f.id for f in fuse([r for r in rl if r.ids], method, k)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--split", default="train")
    ap.add_argument("--depth", type=int, default=300)
    ap.add_argument("--cache", type=Path, default=None, help="pickle of collected lists")
    ap.add_argument("--bm25", default="", help="k1:b pairs to try, e.g. 0.9:0.4,1.2:0.75")
    args = ap.parse_args()
    if args.split == "test":
        print("refusing to tune on the test split", file=sys.stderr)
        return 2
    name = args.dataset.resolve().name
    engine = SearchService.create(
        Settings(collection_prefix=f"eval-{name}-", cache_backend="none"), domain="documents"
    )
    data = ev.load_beir(args.dataset, args.split, engine.schema)
    qrels = data.qrels
    t = time.perf_counter()
    if args.cache and args.cache.is_file():
        lists = pickle.loads(args.cache.read_bytes())
    else:
        lists = collect(engine, data.queries, args.depth)
        if args.cache:
            args.cache.write_bytes(pickle.dumps(lists))
    print(f"{len(lists)} queries collected in {time.perf_counter() - t:.1f} s", file=sys.stderr)

    rows = []

    def run(label: str, method: str, k=60, wd=1.0, ws=1.0, dd=200, sd=300, src=None) -> None:
        src = src or lists
        m = score(qrels, {q: fused(v, method, k, wd, ws, dd, sd) for q, v in src.items()})
        rows.append({"variant": label, **{x: round(y, 4) for x, y in m.items()}})
        print(json.dumps(rows[-1]), flush=True)

    run("bm25 alone", "none", ws=1.0, dd=0)
    run("dense alone", "none", dd=200, sd=0)
    run("current: weighted_sum dense200 bm25-300", "weighted_sum")
    run("hybrid-rrf k60 100/100", "rrf", dd=100, sd=100)
    for k in (5, 10, 20, 40, 60, 100):
        run(f"rrf k{k} 200/300", "rrf", k=k)
    for wd in (0.3, 0.4, 0.5, 0.6, 0.7):
        run(f"weighted_sum wd{wd}", "weighted_sum", wd=wd, ws=1 - wd)
        run(f"dbsf wd{wd}", "dbsf", wd=wd, ws=1 - wd)
    for dd, sd in ((100, 100), (50, 50), (100, 300), (300, 300)):
        run(f"weighted_sum {dd}/{sd}", "weighted_sum", dd=dd, sd=sd)
        run(f"dbsf {dd}/{sd}", "dbsf", dd=dd, sd=sd)
    if args.bm25:
        sys.exit("--bm25: parameter variants needed bm25s's separate index, removed with it")
    engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
