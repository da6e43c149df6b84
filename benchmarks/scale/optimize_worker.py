"""Optimize in a worker process (issue 18): how the store answers while its HNSW indexes are
built beside it, and after the optimized copy is swapped in.

Ingests ``--size`` points of run.py's synthetic corpus into an :class:`EdgeStore` (no
``optimize()``), then measures dense and hybrid top-10 latencies (p50/p95 ms) in this process
three times: before (brute force, nothing else running), during (a
:class:`~agentic_search.adapters.edge.optimize.ShardOptimizer` child optimizing a copy, niced;
queries issued back to back until it is done), and after the swap; plus the copy's time, the
optimize's wall time, whether every answer during the optimize equals the exact (brute-force)
one, and dense recall@10 after it against those exact answers.

Usage: ``python benchmarks/scale/optimize_worker.py --size 20000`` (one JSON line, appended to
``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run import DIM, Corpus, bm25_weights, machine, pct, schema, timed  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=20_000)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--out", type=Path, default=HERE / "results-optimize.jsonl")
    args = ap.parse_args()

    from agentic_search.adapters.edge.optimize import ShardOptimizer
    from agentic_search.adapters.edge.store import EdgeStore
    from agentic_search.config import Settings
    from agentic_search.wire import PointWrite, SparseVector

    start = machine()
    tmp = Path(tempfile.mkdtemp(prefix="optimize-worker-"))
    try:
        sch = schema()
        corpus = Corpus(args.size)
        store = EdgeStore(Settings(), root=tmp / "edge")
        store.ensure_collection(sch, DIM)
        for ids, a, b, terms, payloads in corpus.batches():
            store.upsert(
                sch,
                [
                    PointWrite(
                        ids[i],
                        {"overview": a[i].tolist(), "content": b[i].tolist()},
                        payloads[i],
                        bm25_weights(terms[i], corpus.avgdl),
                    )
                    for i in range(len(ids))
                ],
            )
        qs = corpus.queries(args.queries)

        def dense(q):
            return [h.id for h in store.query_dense(sch, "overview", q[0], 10)]

        def hybrid(q):
            sparse = SparseVector(q[1], [1.0] * len(q[1]))
            return [h.id for h in store.query_hybrid_rrf(sch, "overview", q[0], sparse, 10)]

        exact = [dense(q) for q in qs]
        before = {"dense": timed(dense, qs), "hybrid": timed(hybrid, qs)}

        job = ShardOptimizer(store, sch)
        t0 = time.perf_counter()
        job.start()
        copy_s = time.perf_counter() - t0
        during: dict[str, list[float]] = {"dense": [], "hybrid": []}
        exact_during = True
        i = 0
        while (result := job.wait(0)) is None:
            q = qs[i % len(qs)]
            t = time.perf_counter()
            got = dense(q)
            during["dense"].append(time.perf_counter() - t)
            exact_during &= got == exact[i % len(qs)]
            t = time.perf_counter()
            hybrid(q)
            during["hybrid"].append(time.perf_counter() - t)
            i += 1
        after = {"dense": timed(dense, qs), "hybrid": timed(hybrid, qs)}
        recall = np.mean([len(set(e) & set(dense(q))) / 10 for e, q in zip(exact, qs, strict=True)])
        info = store.info(sch)
        store.close()
        line = {
            "n": args.size,
            "copy_s": round(copy_s, 2),
            "optimize_wall_s": round(result.seconds, 1),
            "swapped": result.swapped,
            "reason": result.reason,
            "indexed_vectors_after": info.indexed_vectors_count,
            "before_ms": before,
            "during_ms": {k: pct(v) for k, v in during.items()},
            "queries_during": i,
            "answers_during_exact": bool(exact_during),
            "after_ms": after,
            "dense_recall_at_10_after": round(float(recall), 3),
            "machine": start,
            "loadavg_end": [round(x, 2) for x in os.getloadavg()],
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(line), flush=True)
    with args.out.open("a") as f:
        f.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
