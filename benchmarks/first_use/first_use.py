"""First use: the first ``agentic-search search`` in a fresh ``AGENTIC_SEARCH_HOME`` indexes the
bundled catalog (284 tools) and then answers; this times that command as a new user meets it.

Each run is one fresh process (``python -m agentic_search_cli.main search QUERY``) over a new
empty temporary home, with the embedded defaults (Qdrant Edge, int8 MiniLM ONNX, no cache, no
LLM): wall seconds, and CPU seconds (user + sys of the child, getrusage), median and range over
``--runs``. A second search over the same home, now indexed, is timed the same way (the CLI's
start-up plus one search). The load average is read before and after: figures taken while other
jobs run are indicative only; the README's "first search" figure wants a quiet machine.

Usage (from the repository root, virtualenv active):
    python benchmarks/first_use/first_use.py                # 3 runs, a table
    python benchmarks/first_use/first_use.py --runs 5 --json > first_use.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

QUERY = "AI code completion tools that work locally"
#: The environment of every run: the embedded defaults, whatever the caller's says.
ENV = {
    "VECTOR_STORE": "edge",
    "CACHE_BACKEND": "none",
    "QDRANT_URL": "",
    "QDRANT_PATH": "",
    "QDRANT_EDGE_PATH": "",
    "LLM_MODEL": "",
    "OPENAI_BASE_URL": "",
    "EMBEDDING_MODEL": "",
}


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall s, CPU s, stderr) of one run of ``cmd``.

    Raises:
        RuntimeError: when it exits non-zero (its stderr's tail).
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr[-1000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stderr


def one_run(query: str) -> dict[str, float]:
    """First search (indexing) and second search over one fresh home."""
    with tempfile.TemporaryDirectory(prefix="first-use-") as tmp:
        env = {k: v for k, v in os.environ.items() if k not in ENV}
        env.update({k: v for k, v in ENV.items() if v})
        env["AGENTIC_SEARCH_HOME"] = str(Path(tmp) / "home")
        cmd = [sys.executable, "-m", "agentic_search_cli.main", "search", query]
        wall, cpu, err = timed(cmd, env)
        if "indexed" not in err:  # the first search must have indexed the catalog
            raise RuntimeError(f"the first search indexed nothing: {err[-500:]}")
        wall2, cpu2, _ = timed(cmd, env)
    return {"first_wall_s": wall, "first_cpu_s": cpu, "second_wall_s": wall2, "second_cpu_s": cpu2}


def summary(runs: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    """Median, min and max of each figure over the runs."""
    return {
        key: {
            "median": round(statistics.median(r[key] for r in runs), 2),
            "min": round(min(r[key] for r in runs), 2),
            "max": round(max(r[key] for r in runs), 2),
        }
        for key in runs[0]
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="fresh homes to time (default 3)")
    ap.add_argument("--query", default=QUERY, help=f"the search (default {QUERY!r})")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    load_before = os.getloadavg()
    runs = [one_run(args.query) for _ in range(args.runs)]
    result: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} logical CPUs, {platform.system()}",
        "python": platform.python_version(),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "query": args.query,
        "runs": [{k: round(v, 2) for k, v in r.items()} for r in runs],
        "summary": summary(runs),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{result['date']}  {result['machine']}  python {result['python']}")
    print(f"load average before {result['loadavg_before']}, after {result['loadavg_after']}")
    print(f"{'figure':<16} {'median':>8} {'min':>8} {'max':>8}")
    for key, s in result["summary"].items():
        print(f"{key:<16} {s['median']:>8.2f} {s['min']:>8.2f} {s['max']:>8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
