"""Plan-cache target: a repeated query on the LLM path costs no more than the rules path
(a benchmark, not a CI test; it needs `make llm`).

For each query it runs, with the SQLite cache of ``--home``, the LLM path once (a plan-cache
miss: the LLM call, then the merged intent and plan stored) and then ``--repeat`` times (plan
-cache hits), and the rules path ``--repeat`` times, timing ``engine.search(query)`` after the
query vectors are forgotten. The result cache is bypassed on both paths (its lookups answer
nothing) so that a repeat measures the plan cache, not a cached response. Reports p50/p95 of
the hits, of the rules and of the misses.

    python benchmarks/llm/plan_cache.py --home HOME [--model GGUF] [--queries 8] [--repeat 3]

Writes ``plan_cache.json`` to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_local import DATA, ROOT, _pct


def _no_result_cache(engine) -> None:
    """Make the engine's cache answer only plan-cache keys (``plan:...``)."""
    cache = engine.deps.cache
    get = cache.get
    cache.get = lambda key: get(key) if key.startswith("plan:") else None


def _timed(engine, query: str) -> tuple[float, dict]:
    engine.deps.caches.clear_query_vectors()
    t = time.perf_counter()
    resp = engine.search(query)
    return (time.perf_counter() - t) * 1000.0, resp.paths.get("extractor") or {}


def main(argv: list[str] | None = None) -> int:
    """Entry point (see module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--model", type=Path, default=None, help="GGUF (default: the 1.5B there)")
    ap.add_argument("--queries", type=int, default=8, help="first N tuning queries")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "llm")
    args = ap.parse_args(argv)
    from agentic_search.config import Settings
    from agentic_search.service import SearchService

    queries = [json.loads(line) for line in (DATA / "queries.jsonl").read_text().splitlines()]
    texts = [q["text"] for q in queries if q["split"] == "tuning"][: args.queries]
    base = {"agentic_search_home": args.home, "cache_backend": "sqlite"}
    # One engine at a time: the Edge shard is opened by one engine of a process.
    llm = SearchService.create(
        Settings(llm="on", llm_provider="local", llm_gguf_path=args.model, **base), "tools"
    )
    _no_result_cache(llm)
    load = [round(x, 1) for x in os.getloadavg()]
    miss, hit, plain, paths = [], [], [], []
    for q in texts:
        ms, ex = _timed(llm, q)
        miss.append(ms)
        paths.append(ex.get("path"))
        for _ in range(args.repeat):
            ms, ex = _timed(llm, q)
            hit.append(ms)
            paths.append(ex.get("path"))
    llm.close()
    rules = SearchService.create(Settings(llm="off", **base), "tools")
    _no_result_cache(rules)
    rules.search(texts[0])  # warm-up, as the LLM engine's miss warmed it
    for q in texts:
        for _ in range(args.repeat):
            plain.append(_timed(rules, q)[0])
    rules.close()
    out = {
        "command": "python benchmarks/llm/plan_cache.py " + " ".join(argv or sys.argv[1:]),
        "measuredAt": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "loadAverageBefore": load,
        "loadAverageAfter": [round(x, 1) for x in os.getloadavg()],
        "queries": len(texts),
        "repeat": args.repeat,
        "missMs": {"p50": _pct(miss, 0.5), "p95": _pct(miss, 0.95)},
        "hitMs": {"p50": _pct(hit, 0.5), "p95": _pct(hit, 0.95)},
        "rulesMs": {"p50": _pct(plain, 0.5), "p95": _pct(plain, 0.95)},
        "hitOverRulesP50": round(statistics.median(hit) / statistics.median(plain), 3),
        "paths": {p: paths.count(p) for p in set(paths)},
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "plan_cache.json").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
