"""Scale benchmark of the embedded vector stores on a synthetic corpus shaped like ours.

Generates (deterministically, nothing committed) ``n`` points of the ``synthetic`` domain
(``synthetic.yaml``): two 384-d named dense vectors (clustered, unit length), a BM25 sparse
vector (Zipf-distributed terms, TF weights with the corpus' average length, the engine
applying the IDF) and a keyword / float / bool payload; then, per engine, through the
project's own adapters:

* ``edge``  -- :class:`EdgeStore` (Qdrant Edge): ingest, queries before ``optimize()`` (brute
  force), ``optimize()``, queries after it, dense recall@10 against numpy's brute force, RSS,
  disk, and the open time of a fresh process (open + first query);
* ``local`` -- :class:`LocalQdrantStore` in local mode on disk (dense and filtered dense through the
  adapter, BM25 through bm25s, hybrid = our client-side RRF of the two);
* ``bm25s`` -- the sparse path of today's default, on the same term ids.

Query kinds (top 10): ``dense`` (one aspect), ``sparse`` (3-5 terms), ``filtered`` (dense with
``category eq`` and ``price lt``, ~2.5% admitted), ``hybrid`` (dense + sparse prefetches fused
by RRF). Latencies are per query in ms, p50/p95 over ``--queries`` queries after 5 warm-ups; ingest
times only the ``upsert`` calls (batches of 256 points, built beforehand).

Usage: ``python benchmarks/scale/run.py --sizes 10000 100000 --engines edge local bm25s``
(prints one JSON line per engine and size, and appends them to ``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
DIM = 384
VOCAB = 30_000
CATEGORIES = [f"cat{i:02d}" for i in range(20)]
K1, B = 1.2, 0.75


def schema():
    """The synthetic domain."""
    from agentic_search.logic.schema import load_schema

    return load_schema(HERE / "synthetic.yaml")


class Corpus:
    """``n`` synthetic points, generated from ``seed`` in batches (so 1M fits in memory)."""

    def __init__(self, n: int, seed: int = 7) -> None:
        self.n = n
        rng = np.random.default_rng(seed)
        self.centroids = rng.normal(size=(200, DIM)).astype(np.float32)
        self.seed = seed
        # Zipf term distribution over the vocabulary and doc lengths ~ Poisson(120).
        ranks = np.arange(1, VOCAB + 1, dtype=np.float64)
        self.term_cdf = np.cumsum(1 / ranks) / (1 / ranks).sum()
        self.avgdl = 120.0

    def _unit(self, rng: np.random.Generator, m: int) -> np.ndarray:
        c = self.centroids[rng.integers(0, len(self.centroids), size=m)]
        v = c + 0.6 * rng.normal(size=(m, DIM)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def batches(self, size: int = 256, dense_only: bool = False):
        """Yield ``(ids, vectors_a, vectors_b, term_lists, payloads)`` batches; with
        ``dense_only``, ``vectors_b`` and ``term_lists`` are None (a different random stream)."""
        rng = np.random.default_rng(self.seed + 1)
        for start in range(0, self.n, size):
            m = min(size, self.n - start)
            a = self._unit(rng, m)
            b = terms = None
            if not dense_only:
                b = self._unit(rng, m)
                lens = np.maximum(5, rng.poisson(self.avgdl, size=m))
                drawn = np.searchsorted(self.term_cdf, rng.random(int(lens.sum())))
                terms = np.split(np.minimum(drawn, VOCAB - 1), np.cumsum(lens)[:-1])
            ids = [f"r{start + i}" for i in range(m)]
            payloads = [
                {
                    "id": rid,
                    "title": rid,
                    "category": CATEGORIES[int(rng.integers(0, 20))],
                    "price": None if rng.random() < 0.1 else float(rng.uniform(0, 100)),
                    "open_source": bool(rng.random() < 0.3),
                }
                for rid in ids
            ]
            yield ids, a, b, terms, payloads

    def queries(self, m: int, seed: int = 99) -> list[tuple[np.ndarray, list[int]]]:
        """``m`` (dense query, distinct query terms) pairs."""
        rng = np.random.default_rng(seed)
        dense = self._unit(rng, m)
        return [
            (dense[i], sorted({int(t) for t in rng.integers(20, 3000, size=rng.integers(3, 6))}))
            for i in range(m)
        ]


def bm25_weights(terms: np.ndarray, avgdl: float):
    """The document-side sparse vector (``agentic_search.logic.bm25.document_vector``'s
    formula on term ids instead of analysed text)."""
    from agentic_search.wire import SparseVector

    idx, tf = np.unique(terms, return_counts=True)
    norm = K1 * (1 - B + B * len(terms) / avgdl)
    return SparseVector(idx.tolist(), (tf * (K1 + 1) / (tf + norm)).tolist())


def pct(samples: list[float]) -> dict[str, float]:
    """p50/p95 of latencies (s) in ms."""
    a = np.asarray(samples) * 1000
    return {
        "p50": round(float(np.percentile(a, 50)), 3),
        "p95": round(float(np.percentile(a, 95)), 3),
    }


def timed(fn: Callable[[Any], Any], args: list[Any], warm: int = 5) -> dict[str, float]:
    for x in args[:warm]:
        fn(x)
    out = []
    for x in args:
        t = time.perf_counter()
        fn(x)
        out.append(time.perf_counter() - t)
    return pct(out)


def rss_mb() -> float:
    """Current resident set size (MB)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def disk_mb(path: Path) -> dict[str, float]:
    """Disk use (MB): blocks allocated (as ``du``) and apparent size (Edge preallocates and
    memory-maps sparse files, so the apparent size overstates it)."""
    files = [f.stat() for f in path.rglob("*") if f.is_file()]
    return {
        "allocated": round(sum(s.st_blocks * 512 for s in files) / 2**20, 1),
        "apparent": round(sum(s.st_size for s in files) / 2**20, 1),
    }


def _filters():
    from agentic_search.wire import Filter

    return [
        Filter(field="category", operator="eq", value="cat03"),
        Filter(field="price", operator="lt", value=50),
    ]


# ----- engines ------------------------------------------------------------------------------------


def run_edge(
    corpus: Corpus, root: Path, nq: int, dense_only: bool = False, on_disk: bool = False
) -> dict[str, Any]:
    """Edge: ingest, queries before and after ``optimize()``, recall, RSS, disk, open time.
    ``dense_only``: one named vector per point (``overview``), no sparse vector, and only the
    dense and filtered queries (the issue's 1M case). ``on_disk``: ``QDRANT_EDGE_ON_DISK``
    (vectors memory-mapped, an int8 quantized copy in RAM)."""
    from agentic_search.adapters.edge.store import EdgeStore
    from agentic_search.config import Settings
    from agentic_search.wire import PointWrite, SparseVector

    sch = schema()
    store = EdgeStore(Settings(qdrant_edge_on_disk=on_disk), root=root)
    store.ensure_collection(sch, DIM)
    ingest_s = 0.0
    done, last = 0, time.perf_counter()
    for ids, a, b, terms, payloads in corpus.batches(dense_only=dense_only):
        points = [
            PointWrite(
                ids[i],
                {"overview": a[i].tolist()}
                if dense_only
                else {"overview": a[i].tolist(), "content": b[i].tolist()},
                payloads[i],
                None if dense_only else bm25_weights(terms[i], corpus.avgdl),
            )
            for i in range(len(ids))
        ]
        t0 = time.perf_counter()
        store.upsert(sch, points)
        ingest_s += time.perf_counter() - t0
        done += len(ids)
        if time.perf_counter() - last > 30:
            last = time.perf_counter()
            print(f"  ingested {done:,}/{corpus.n:,}", file=sys.stderr, flush=True)
    qs = corpus.queries(nq)
    flt = _filters()

    kinds = {
        "dense": lambda q: store.query_dense(sch, "overview", q[0], 10),
        "sparse": lambda q: store.query_sparse(
            sch, SparseVector(q[1], [1.0] * len(q[1])), 10, None
        ),
        "filtered": lambda q: store.query_dense(sch, "overview", q[0], 10, flt),
        "hybrid": lambda q: store.query_hybrid_rrf(
            sch, "overview", q[0], SparseVector(q[1], [1.0] * len(q[1])), 10
        ),
    }
    if dense_only:
        kinds = {k: kinds[k] for k in ("dense", "filtered")}
    print("  queries before optimize", file=sys.stderr, flush=True)
    before = {k: timed(fn, qs) for k, fn in kinds.items()}
    exact = {i: [h.id for h in kinds["dense"](q)] for i, q in enumerate(qs[:20])}
    print("  optimize", file=sys.stderr, flush=True)
    t = time.perf_counter()
    store.optimize(sch)
    optimize_s = time.perf_counter() - t
    after = {k: timed(fn, qs) for k, fn in kinds.items()}
    got = {i: [h.id for h in kinds["dense"](q)] for i, q in enumerate(qs[:20])}
    recall = np.mean([len(set(exact[i]) & set(got[i])) / 10 for i in exact])
    rss = rss_mb()
    info = store._shard(sch).info()
    store.close()
    opened = json.loads(
        subprocess.run(
            [sys.executable, __file__, "--open-edge", str(root)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    return {
        "ingest_points_per_s": round(corpus.n / ingest_s, 1),
        "optimize_s": round(optimize_s, 2),
        "before_optimize_ms": before,
        "after_optimize_ms": after,
        "dense_recall_at_10_vs_brute_force": round(float(recall), 3),
        "segments_after_optimize": info.segments_count,
        "indexed_vectors_after_optimize": info.indexed_vectors_count,
        "rss_mb_in_ingesting_process": rss,
        "disk_mb": disk_mb(root),
        **opened,
    }


def open_edge(root: Path) -> None:
    """Child process: time opening a shard and its first query; RSS after both."""
    from agentic_search.adapters.edge.store import EdgeStore
    from agentic_search.config import Settings

    sch = schema()
    base = rss_mb()
    t = time.perf_counter()
    store = EdgeStore(Settings(), root=root)
    store.count(sch)
    opened = time.perf_counter() - t
    store.query_dense(sch, "overview", np.ones(DIM, dtype=np.float32), 10)
    first = time.perf_counter() - t
    print(
        json.dumps(
            {
                "open_s": round(opened, 3),
                "open_and_first_query_s": round(first, 3),
                "rss_mb_after_open": rss_mb(),
                "rss_mb_python_baseline": base,
            }
        )
    )
    store.close()


def run_local(corpus: Corpus, root: Path, nq: int) -> dict[str, Any]:
    from agentic_search.adapters.qdrant.local import LocalQdrantStore
    from agentic_search.config import Settings
    from agentic_search.wire import PointWrite

    sch = schema()
    store = LocalQdrantStore(Settings(qdrant_path=root))
    store.ensure_collection(sch, DIM)
    ingest_s = 0.0
    for ids, a, b, _, payloads in corpus.batches():
        points = [
            PointWrite(ids[i], {"overview": a[i].tolist(), "content": b[i].tolist()}, payloads[i])
            for i in range(len(ids))
        ]
        t0 = time.perf_counter()
        store.upsert(sch, points)
        ingest_s += time.perf_counter() - t0
    qs = corpus.queries(nq)
    flt = _filters()
    out: dict[str, Any] = {"ingest_points_per_s": round(corpus.n / ingest_s, 1)}
    out["dense_ms"] = timed(lambda q: store.query_dense(sch, "overview", q[0], 10), qs)
    out["filtered_ms"] = timed(
        lambda q: store.query_dense(sch, "overview", q[0], 10, flt), qs[:10], warm=1
    )
    out["rss_mb_in_ingesting_process"] = rss_mb()
    store.close()
    out["disk_mb"] = disk_mb(root)
    t = time.perf_counter()
    again = LocalQdrantStore(Settings(qdrant_path=root))
    again.count(sch)
    out["open_s"] = round(time.perf_counter() - t, 3)
    again.query_dense(sch, "overview", np.ones(DIM, dtype=np.float32), 10)
    out["open_and_first_query_s"] = round(time.perf_counter() - t, 3)
    again.close()
    return out


def run_bm25s(corpus: Corpus, nq: int) -> dict[str, Any]:
    try:
        import bm25s
        from bm25s.tokenization import Tokenized
    except ImportError:  # bm25s is no longer a dependency of the project
        sys.exit("this benchmark compares with bm25s (no longer a dependency): pip install bm25s")

    ids, docs = [], []
    for batch_ids, _, _, terms, _ in corpus.batches():
        ids += batch_ids
        docs += [t.tolist() for t in terms]
    vocab = {str(t): t for t in range(VOCAB)}
    t = time.perf_counter()
    index = bm25s.BM25(k1=K1, b=B)
    index.index(Tokenized(ids=docs, vocab=vocab), show_progress=False)
    build = time.perf_counter() - t
    qs = corpus.queries(nq)
    lat = timed(
        lambda q: index.retrieve([[str(x) for x in q[1]]], k=10, show_progress=False, n_threads=1),
        qs,
    )
    return {"index_s": round(build, 2), "sparse_ms": lat}


def machine() -> dict[str, Any]:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        "?",
    )
    return {
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "loadavg_1_5_15": [round(x, 2) for x in os.getloadavg()],
        "python": sys.version.split()[0],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    ap.add_argument("--engines", nargs="+", default=["edge", "local", "bm25s"])
    ap.add_argument("--local-max", type=int, default=10_000, help="largest size local mode runs at")
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--out", type=Path, default=HERE / "results.jsonl")
    ap.add_argument(
        "--dense-only",
        action="store_true",
        help="Edge with one dense vector per point, no sparse vector (the 1M case)",
    )
    ap.add_argument(
        "--on-disk",
        action="store_true",
        help="Edge shards with QDRANT_EDGE_ON_DISK (vectors memory-mapped, int8 copy in RAM)",
    )
    ap.add_argument("--root", type=Path, help="parent folder of the stores (default: a tmp dir)")
    ap.add_argument("--open-edge", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.open_edge:
        open_edge(args.open_edge)
        return
    for n in args.sizes:
        corpus = Corpus(n)
        for engine in args.engines:
            if engine == "local" and n > args.local_max:
                continue
            tmp = Path(tempfile.mkdtemp(prefix=f"scale-{engine}-{n}-", dir=args.root))
            try:
                start = machine()
                if engine == "edge":
                    res = run_edge(
                        corpus, tmp / "edge", args.queries, args.dense_only, args.on_disk
                    )
                elif engine == "local":
                    res = run_local(corpus, tmp / "qdrant", args.queries)
                else:
                    res = run_bm25s(corpus, args.queries)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            line = {
                "engine": engine
                + ("-dense-only" if args.dense_only else "")
                + ("-on-disk" if args.on_disk else ""),
                "n": n,
                **res,
                "machine": start,
                "loadavg_end": [round(x, 2) for x in os.getloadavg()],
                "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            }
            print(json.dumps(line), flush=True)
            with args.out.open("a") as f:
                f.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
