"""Search speed on the npm domain: the CLI uncached, and ``serve`` under sequential requests.

Usage:
  python benchmarks/npm_queries/speed.py cli   [--runs 5] [--domain npm] [--out FILE.json]
  python benchmarks/npm_queries/speed.py serve [--url URL] [--domain npm] [--out FILE.json]

The npm domain must be ingested (and so registered) in ``$AGENTIC_SEARCH_HOME`` first:
``agentic-search ingest npm.jsonl --domain benchmarks/npm_queries/npm.yaml``.

* ``cli``: runs ``agentic-search search QUERY --domain DOMAIN --json`` ``--runs`` times for
  each of :data:`CLI_QUERIES` with the result cache off (``CACHE_BACKEND=none``) and no
  ``serve`` running (a running ``serve`` would answer instead), after one untimed run that
  writes the ``.pyc`` files (PYTHONDONTWRITEBYTECODE is dropped for the runs, as an installed
  package has its bytecode): the wall time of the whole
  command (start-up, model load, search, print) per run in seconds, its median per query and
  over all runs, and the median of the engine's own ``latency_ms`` and ``stage_ms`` from the
  printed JSON.
* ``serve``: without ``--url`` starts ``agentic-search serve`` on a free loopback port with
  ``CACHE_BACKEND=none`` (stopped at the end), then POSTs each of :data:`SERVE_QUERIES`
  (distinct, so nothing repeats) to ``/search`` one after the other after ``--warmup``
  requests of other text: per request the client's wall time in ms, and p50/p95/max; the
  median of the server's ``latency_ms`` and of each ``stage_ms`` entry of the answers.

Both print one JSON object (written to ``--out`` too when given) with the load average
(1/5/15 min) before and after and the CPU count: latency on a shared machine is inflated by
the other jobs, so compare runs only at similar load. Exit 1 when any search failed.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
# the load test's serve launcher and percentile, one definition each
import loadtest
from loadtest import percentile

CLI_QUERIES = ["yaml parser", "make my CLI output colorful", "alternative to moment for dates"]

SERVE_QUERIES = [
    "parse toml files",
    "terminal progress bar",
    "deep clone an object",
    "debounce a function",
    "syntax highlighting for code blocks",
    "read a file line by line",
    "kill a process on a port",
    "copy text to the clipboard",
    "open a url in the browser",
    "pretty print json in the terminal",
    "compare two semver versions",
    "convert html to markdown",
    "sanitize html input",
    "rate limit an express api",
    "upload files to s3",
    "connect to postgres",
    "mongodb object modeling",
    "redis client",
    "graphql server",
    "react state management",
    "react form library",
    "virtualized list for react",
    "drag and drop for react",
    "charting library",
    "3d graphics in the browser",
    "internationalization for react apps",
    "logging library for node",
    "structured json logger",
    "cron jobs in node",
    "job queue backed by redis",
    "mock http requests in tests",
    "end to end browser testing",
    "lint typescript code",
    "format code automatically",
    "bundle a typescript library",
    "polyfill for fetch",
    "detect the mime type of a file",
    "glob file matching",
    "delete files recursively",
    "create directories recursively",
    "hash files with sha256",
    "encrypt data with aes",
    "oauth login for node",
    "parse cookies",
    "cors middleware",
    "serve static files",
    "websocket client for the browser",
    "compress responses with gzip",
    "generate qr codes",
    "parse query strings",
]

WARMUP_QUERIES = ["warm up the model", "first request of the run"]


def stage_medians(answers: list[dict]) -> dict[str, float]:
    """{stage: median ms} over the ``executionStats.stageMs`` (or ``execution_stats.stage_ms``)
    of ``answers``, plus ``latency_ms`` (the engine's own total)."""
    stages: dict[str, list[float]] = {}
    for a in answers:
        stats = a.get("executionStats") or a.get("execution_stats") or {}
        for k, v in (stats.get("stageMs") or stats.get("stage_ms") or {}).items():
            stages.setdefault(k, []).append(float(v))
        total = stats.get("latencyMs", stats.get("latency_ms"))
        if total is not None:
            stages.setdefault("latency_ms", []).append(float(total))
    return {k: round(statistics.median(v), 1) for k, v in stages.items()}


def _exe() -> list[str]:
    exe = Path(sys.executable).with_name("agentic-search")
    return [str(exe)] if exe.is_file() else [shutil.which("agentic-search") or "agentic-search"]


def run_cli(domain: str, runs: int) -> dict[str, Any]:
    """The ``cli`` measurement (see the module docstring)."""
    env = {**os.environ, "CACHE_BACKEND": "none"}
    # as an installed package runs: the .pyc files written (by the untimed warm-up run below);
    # with PYTHONDONTWRITEBYTECODE set, every run would compile the project's modules again
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    per_query: dict[str, list[float]] = {}
    answers: list[dict] = []
    failures = 0

    def search(query: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*_exe(), "search", query, "--domain", domain, "--json", "--no-llm"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )

    search(WARMUP_QUERIES[0])  # untimed: the page cache and the .pyc files
    for query in CLI_QUERIES:
        for _ in range(runs):
            start = time.perf_counter()
            proc = search(query)
            wall = time.perf_counter() - start
            if proc.returncode != 0:
                failures += 1
                sys.stderr.write(proc.stderr[-2000:])
                continue
            per_query.setdefault(query, []).append(round(wall, 3))
            answers.append(json.loads(proc.stdout))
    walls = [w for ws in per_query.values() for w in ws]
    return {
        "mode": "cli",
        "domain": domain,
        "runs_per_query": runs,
        "wall_s": {q: ws for q, ws in per_query.items()},
        "median_s_per_query": {q: round(statistics.median(ws), 3) for q, ws in per_query.items()},
        "median_s": round(statistics.median(walls), 3) if walls else None,
        "max_s": max(walls) if walls else None,
        "engine_ms_median": stage_medians(answers),
        "failures": failures,
    }


def spawn_serve() -> tuple[subprocess.Popen, str]:
    """``agentic-search serve`` on a free loopback port with the result cache off and no LLM
    (``scripts/loadtest.py``'s launcher); returns the process and its URL once ``/health``
    answers 200.

    Raises:
        SystemExit: when serve exits or does not answer within 300 s.
    """
    return loadtest.spawn_serve("none", None, extra=["--no-llm"])


def post_search(url: str, query: str, domain: str) -> tuple[int, float, dict]:
    """POST ``{"query", "domain"}`` to ``URL/search``: (status, wall ms, decoded answer)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
    body = json.dumps({"query": query, "domain": domain})
    start = time.perf_counter()
    conn.request("POST", "/search", body=body, headers={"content-type": "application/json"})
    resp = conn.getresponse()
    raw = resp.read()
    ms = (time.perf_counter() - start) * 1000
    conn.close()
    try:
        answer = json.loads(raw)
    except json.JSONDecodeError:
        answer = {}
    return resp.status, ms, answer


def run_serve(url: str, domain: str) -> dict[str, Any]:
    """The ``serve`` measurement (see the module docstring)."""
    for q in WARMUP_QUERIES:
        post_search(url, q, domain)
    lat: list[float] = []
    answers: list[dict] = []
    failures = 0
    for q in SERVE_QUERIES:
        status, ms, answer = post_search(url, q, domain)
        if status != 200:
            failures += 1
            continue
        lat.append(ms)
        answers.append(answer)
    return {
        "mode": "serve",
        "url": url,
        "domain": domain,
        "requests": len(SERVE_QUERIES),
        "ok": len(lat),
        "latency_ms": {
            "p50": round(percentile(lat, 50), 1),
            "p95": round(percentile(lat, 95), 1),
            "max": round(max(lat), 1) if lat else 0.0,
        },
        "engine_ms_median": stage_medians(answers),
        "results_median": statistics.median(len(a.get("candidates") or []) for a in answers)
        if answers
        else 0,
        "first_results": {
            q: [c.get("name") or c.get("id") for c in (a.get("candidates") or [])[:3]]
            for q, a in list(zip(SERVE_QUERIES, answers, strict=False))[:3]
        },
        "failures": failures,
    }


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("mode", choices=["cli", "serve"])
    ap.add_argument("--domain", default="npm", help="the registered domain (default npm)")
    ap.add_argument("--runs", type=int, default=5, help="cli: runs per query (default 5)")
    ap.add_argument("--url", help="serve: a running server (default: start one)")
    ap.add_argument("--out", type=Path, help="also write the JSON here")
    args = ap.parse_args()
    before = [round(x, 2) for x in os.getloadavg()]
    proc = None
    if args.mode == "cli":
        result = run_cli(args.domain, args.runs)
    else:
        url = args.url
        if url is None:
            proc, url = spawn_serve()
        try:
            result = run_serve(url, args.domain)
        finally:
            if proc is not None:
                proc.terminate()
                proc.wait(timeout=60)
    result.update(
        {
            "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "load_avg_before": before,
            "load_avg_after": [round(x, 2) for x in os.getloadavg()],
            "cpus": os.cpu_count(),
        }
    )
    text = json.dumps(result, indent=2, ensure_ascii=False)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
