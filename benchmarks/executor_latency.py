"""The executor's cost against hybrid-rrf's, query by query, on a BEIR dataset already indexed by
``agentic-search eval`` (its collection ``eval-<dataset>-documents``): wall time and process
CPU time per query, their p50 / p95 and the executor ÷ hybrid-rrf ratios, and the executor's
mean time per stage (``execution_stats.stage_ms``).

Usage: python benchmarks/executor_latency.py --dataset datasets/scifact
       [--split test] [--max-queries 100] [--warmup 5] [--profile out.prof] [--json]

The same code path as ``eval``'s ``hybrid-rrf`` and ``executor`` systems (each query through
both in turn, the executor timed cold: :func:`cold_start` first). CPU time (``process_time``,
every thread of the process) is much less sensitive than wall time to other processes on the
machine, so the CPU ratio is the figure to compare across runs on a busy machine; with
``--profile``, the executor's searches run under cProfile (its main thread only).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import statistics
import time
from pathlib import Path
from typing import Any

from agentic_search.config import Settings
from agentic_search.service import SearchService
from agentic_search_cli.evaluation.datasets import load_beir
from agentic_search_cli.evaluation.systems import RUNNERS, cold_start

SYSTEMS = ("hybrid-rrf", "executor")


def percentile(xs: list[float], q: float) -> float:
    """The nearest-rank ``q`` quantile of ``xs`` (0 for none)."""
    if not xs:
        return 0.0
    ordered = sorted(xs)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summary(xs: list[float]) -> dict[str, float]:
    """p50, p95 and mean of ``xs`` (ms), rounded to 0.1."""
    return {
        "p50": round(percentile(xs, 0.5), 1),
        "p95": round(percentile(xs, 0.95), 1),
        "mean": round(statistics.mean(xs), 1) if xs else 0.0,
    }


def run(
    dataset: Path, split: str, max_queries: int, warmup: int, profile: Path | None
) -> dict[str, Any]:
    """Time both systems on the dataset's first ``max_queries`` judged queries."""
    name = dataset.resolve().name
    settings = Settings(collection_prefix=f"eval-{name}-", cache_backend="none", llm="off")
    svc = SearchService.create(settings, "documents")
    prof = cProfile.Profile() if profile else None
    wall: dict[str, list[float]] = {s: [] for s in SYSTEMS}
    cpu: dict[str, list[float]] = {s: [] for s in SYSTEMS}
    stages: dict[str, list[float]] = {}
    try:
        if svc.is_empty():
            raise SystemExit(f"{dataset}: not indexed yet; run agentic-search eval on it first")
        queries = list(load_beir(dataset, split, svc.schema).limit(max_queries).queries.values())
        for text in queries[:warmup]:
            for system in SYSTEMS:
                RUNNERS[system](svc, text)
        rounds = max(2, svc.settings.max_rounds)
        for text in queries:
            for system in SYSTEMS:
                if system == "executor":
                    cold_start(svc)
                    if prof:
                        prof.enable()
                t, tc = time.perf_counter(), time.process_time()
                if system == "executor":
                    resp = svc.search(text, limit=100, rounds=rounds)
                else:
                    RUNNERS[system](svc, text)
                wall[system].append((time.perf_counter() - t) * 1000)
                cpu[system].append((time.process_time() - tc) * 1000)
                if system == "executor":
                    if prof:
                        prof.disable()
                    for k, v in resp.output.execution_stats.stage_ms.items():
                        stages.setdefault(k, []).append(float(v))
    finally:
        svc.close()
    if prof and profile:
        prof.dump_stats(str(profile))
    out: dict[str, Any] = {"dataset": name, "queries": len(wall["executor"])}
    for kind, data in (("wall_ms", wall), ("cpu_ms", cpu)):
        out[kind] = {s: summary(xs) for s, xs in data.items()}
        a, b = out[kind]["executor"], out[kind]["hybrid-rrf"]
        out[kind]["ratio"] = {
            k: round(a[k] / b[k], 2) if b[k] else None for k in ("p50", "p95", "mean")
        }
    out["executor_stage_mean_ms"] = {
        k: round(statistics.mean(v), 2)
        for k, v in sorted(stages.items(), key=lambda kv: -statistics.mean(kv[1]))
    }
    return out


def main() -> None:
    """Parse the arguments, run, print a few lines (or the JSON)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--split", default="test")
    ap.add_argument("--max-queries", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--profile", type=Path, default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = run(args.dataset, args.split, args.max_queries, args.warmup, args.profile)
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"{out['dataset']}: {out['queries']} queries")
    for kind in ("wall_ms", "cpu_ms"):
        for s in (*SYSTEMS, "ratio"):
            print(f"  {kind:8s} {s:10s} {out[kind][s]}")
    print("  executor stages (mean ms):", out["executor_stage_mean_ms"])


if __name__ == "__main__":
    main()
