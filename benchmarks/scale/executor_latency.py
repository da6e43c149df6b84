"""The executor's latency on a real corpus: Qdrant Edge with and without its record cache and id
map, and qdrant-client local mode, in ONE process, the queries interleaved.

The Edge shard is an evaluation index left by ``agentic-search eval`` (or ``agentic-search
migrate``) in ``--home``; it is copied once (two Edge stores cannot open one shard) and the
copy gets ``records.capacity = 0`` and ``map_ids = False`` (every read asks the engine, every hit
reads its record id from the payload: as before both). Local mode
is an in-memory qdrant-client collection filled from the shard (the same points, payloads,
dense and sparse vectors; local mode keeps its collection in memory on disk too). Each
query runs on the three engines in a rotating order, every search cold (``cold_start``: no
query vector, record or token count left by an earlier search), the executor as ``eval``
runs it (``limit=100``, ``max(2, MAX_ROUNDS)`` rounds). Prints one JSON object.

    AGENTIC_SEARCH_HOME=... python benchmarks/scale/executor_latency.py \\
        --home /tmp/home --prefix eval-scifact- --dataset datasets/scifact
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from qdrant_client import QdrantClient

from agentic_search.adapters.edge.replica import copy_dir
from agentic_search.adapters.edge.sparse import EdgeSparseKeywordIndex
from agentic_search.adapters.qdrant.local import LocalQdrantStore
from agentic_search.adapters.qdrant.sparse import QdrantSparseKeywordIndex
from agentic_search.config import Settings
from agentic_search.logic.schema import load_schema
from agentic_search.service import SearchService
from agentic_search.wire import SPARSE_VECTOR, PointWrite
from agentic_search.wiring import build_embedder
from agentic_search_cli.evaluation.systems import cold_start


def _local_copy(edge_engine: SearchService, settings: Settings) -> LocalQdrantStore:
    schema = edge_engine.schema
    edge = edge_engine.deps.store
    store = LocalQdrantStore(settings, client=QdrantClient(":memory:"))
    ids = [str(p[schema.id_field]) for p in edge.scroll(schema, [schema.id_field])]
    first = edge.retrieve_records(schema, ids[:1], with_vectors=True)[ids[0]]
    dim = len(first.vectors[schema.aspect_names[0]])
    store.ensure_collection(schema, dim)
    for i in range(0, len(ids), 256):
        recs = edge.retrieve_records(schema, ids[i : i + 256], with_vectors=True)
        store.upsert(
            schema,
            [
                PointWrite(
                    rid,
                    {a: v for a, v in rec.vectors.items() if a != SPARSE_VECTOR},
                    rec.payload,
                    rec.vectors.get(SPARSE_VECTOR),
                )
                for rid, rec in recs.items()
            ],
        )
    kw = EdgeSparseKeywordIndex(edge, schema=schema)
    QdrantSparseKeywordIndex(store, schema=schema).set_average(
        schema, kw.avg_doc_len_of(schema), len(ids)
    )
    return store


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path, required=True, help="home holding the Edge shard")
    ap.add_argument("--prefix", required=True, help="collection prefix, e.g. eval-scifact-")
    ap.add_argument("--dataset", type=Path, required=True, help="BEIR folder (queries.jsonl)")
    ap.add_argument("--queries", type=int, default=60)
    args = ap.parse_args()

    schema = load_schema("documents")
    base = dict(collection_prefix=args.prefix, cache_backend="none")
    settings = Settings(agentic_search_home=args.home, **base)
    embedder = build_embedder(settings)
    tmp = Path(tempfile.mkdtemp(prefix="exec-latency-"))
    copy_dir(args.home / "edge", tmp / "edge")  # sparse: the engine preallocates 32 MiB pages
    for lock in (tmp / "edge").rglob("*.lock"):
        lock.unlink()
    engines = {
        "edge-cache": SearchService.create(settings, schema, embedder=embedder),
        "edge-nocache": SearchService.create(
            Settings(agentic_search_home=tmp, **base), schema, embedder=embedder
        ),
    }
    before = engines["edge-nocache"].deps.store
    before.records.capacity, before.map_ids = 0, False  # as before: every read asks the engine
    local = _local_copy(engines["edge-cache"], settings)
    engines["local"] = SearchService.create(settings, schema, store=local, embedder=embedder)
    rounds = max(2, settings.max_rounds)
    lines = (args.dataset / "queries.jsonl").read_text().splitlines()
    queries = [json.loads(line)["text"] for line in lines if line.strip()]
    names = list(engines)
    for name in names:  # warm: models, first reads, the local dense matrix
        engines[name].search(queries[0], limit=100, rounds=rounds)
    times: dict[str, list[float]] = {n: [] for n in names}
    load_before = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    for i, text in enumerate(queries[1 : args.queries + 1]):
        for name in names[i % 3 :] + names[: i % 3]:
            cold_start(engines[name])
            t0 = time.perf_counter()
            engines[name].search(text, limit=100, rounds=rounds)
            times[name].append((time.perf_counter() - t0) * 1000)
    out = {
        "started": started,
        "ended": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "load_before": [round(x, 1) for x in load_before],
        "load_after": [round(x, 1) for x in os.getloadavg()],
        "queries": len(times[names[0]]),
        "executor_ms": {
            n: {
                "p50": round(statistics.median(t), 1),
                "p95": round(_pct(t, 0.95), 1),
                "mean": round(statistics.fmean(t), 1),
            }
            for n, t in times.items()
        },
    }
    print(json.dumps(out, indent=2))
    for engine in engines.values():
        engine.close()
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
