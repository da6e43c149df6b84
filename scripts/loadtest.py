#!/usr/bin/env python3
"""Load test of ``agentic-search serve``: N concurrent clients POST /search for D seconds.

A bounded load generator with the standard library only (threads + http.client): each client
sends one request at a time, waits for the answer, and sends the next (a closed loop, so the
offered load adapts to the server). Queries cycle through a fixed list of realistic searches,
each client starting at a different one. Reported: requests/s, latency p50/p95/p99/max (ms),
status counts and errors (anything but 200, timeouts, connection errors), with the machine's
load average before and after (latency on a shared machine is inflated; compare runs only at
similar load).

Without ``--url`` the script starts ``agentic-search serve`` on a free loopback port itself
(the console script next to this interpreter), waits for ``/health``, and stops it at the end.

Examples:
  python scripts/loadtest.py --clients 50 --duration 60                  # spawn serve, cache off
  python scripts/loadtest.py --clients 50 --duration 60 --cache sqlite   # repeated queries cached
  python scripts/loadtest.py --url http://127.0.0.1:8080 --clients 10 --duration 5
Exit code: 0 when every request got a 200, 1 otherwise, 2 for usage errors.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

QUERIES = [
    "free code editor",
    "AI code completion tools that work locally",
    "free alternative to Cursor",
    "open source vector database I can self-host",
    "text to speech under $20",
    "chatbot for healthcare",
    "image generation like Midjourney",
    "self-hosted LLM inference server for Linux",
    "note taking app with AI summaries",
    "transcription API cheaper than $10",
    "AI pair programmer for VS Code",
    "open source observability for LLM apps",
    "video editing with AI for YouTube creators",
    "translation tool that works offline",
    "agent framework in Python",
    "local speech recognition",
]


@dataclass
class Results:
    latencies_ms: list[float] = field(default_factory=list)
    statuses: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of ``values`` (0 when empty)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


def _client(url: str, idx: int, stop_at: float, timeout: float, limit: int, out: Results) -> None:
    parts = urlsplit(url)
    i = idx
    while time.monotonic() < stop_at:
        body = json.dumps({"query": QUERIES[i % len(QUERIES)], "limit": limit}).encode()
        i += 1
        t = time.perf_counter()
        status, error = None, None
        try:
            conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
            conn.request("POST", "/search", body, {"content-type": "application/json"})
            resp = conn.getresponse()
            resp.read()
            status = resp.status
            conn.close()
        except TimeoutError:
            error = "timeout"
        except (OSError, http.client.HTTPException) as exc:
            error = type(exc).__name__
        ms = (time.perf_counter() - t) * 1000.0
        with out.lock:
            if status is not None:
                out.statuses[str(status)] += 1
                if status != 200:
                    out.errors[f"http_{status}"] += 1
                out.latencies_ms.append(ms)
            else:
                out.errors[error or "unknown"] += 1


def run_load(
    url: str, clients: int, duration: float, timeout: float = 120.0, limit: int = 10
) -> dict[str, Any]:
    """Run the load and return the summary (see the module docstring)."""
    out = Results()
    load_before = os.getloadavg()
    start = time.monotonic()
    stop_at = start + duration
    threads = [
        threading.Thread(target=_client, args=(url, i, stop_at, timeout, limit, out), daemon=True)
        for i in range(clients)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start  # includes the last in-flight requests
    lat = out.latencies_ms
    requests = sum(out.statuses.values()) + sum(
        v for k, v in out.errors.items() if not k.startswith("http_")
    )
    return {
        "url": url,
        "clients": clients,
        "duration_s": duration,
        "elapsed_s": round(elapsed, 2),
        "requests": requests,
        "ok": out.statuses.get("200", 0),
        "errors": sum(out.errors.values()),
        "error_kinds": dict(out.errors),
        "statuses": dict(out.statuses),
        "requests_per_s": round(requests / elapsed, 2) if elapsed else 0.0,
        "latency_ms": {
            "p50": round(percentile(lat, 50), 1),
            "p95": round(percentile(lat, 95), 1),
            "p99": round(percentile(lat, 99), 1),
            "max": round(max(lat), 1) if lat else 0.0,
            "mean": round(sum(lat) / len(lat), 1) if lat else 0.0,
        },
        "load_avg_before": [round(x, 2) for x in load_before],
        "load_avg_after": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "limit": limit,
        "queries": len(QUERIES),
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn_serve(
    cache: str, home: str | None, workers: int | None = None, extra: Sequence[str] = ()
) -> tuple[subprocess.Popen, str]:
    """Start ``agentic-search serve`` on a free port (``--workers`` when given, then the
    ``extra`` arguments); returns the process and its URL once ``/health`` answers 200.

    Raises:
        SystemExit: when serve exits or does not answer within 300 s.
    """
    exe = Path(sys.executable).with_name("agentic-search")
    cmd = [str(exe)] if exe.is_file() else [shutil.which("agentic-search") or "agentic-search"]
    port = _free_port()
    env = {**os.environ, "CACHE_BACKEND": cache}
    if home:
        env["AGENTIC_SEARCH_HOME"] = home
    proc = subprocess.Popen(
        [*cmd, "serve", "--port", str(port)]
        + ([] if workers is None else ["--workers", str(workers)])
        + list(extra),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300  # first use indexes the bundled catalog
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"serve exited with {proc.returncode}: {proc.stderr.read()[-2000:]}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                conn.close()
                return proc, url
        except OSError:
            pass
        time.sleep(0.5)
    proc.terminate()
    raise SystemExit("serve did not answer /health within 300 s")


def write_report(summary: dict[str, Any], out_dir: Path, name: str) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{name}.json").write_text(json.dumps(summary, indent=2) + "\n")
    lat = summary["latency_ms"]
    lines = [
        f"# Load: {summary['clients']} clients x {summary['duration_s']:.0f} s on {summary['url']}",
        "",
        f"Measured {summary.get('measured_at', '')} with `scripts/loadtest.py` "
        f"({summary.get('mode', '')}); {summary['cpus']} CPUs, load average (1/5/15 min) "
        f"before {summary['load_avg_before']}, after {summary['load_avg_after']}.",
        "",
        "| requests | req/s | p50 ms | p95 ms | p99 ms | max ms | errors |",
        "|---:|---:|---:|---:|---:|---:|---:|",
        f"| {summary['requests']} | {summary['requests_per_s']} | {lat['p50']} | {lat['p95']} "
        f"| {lat['p99']} | {lat['max']} | {summary['errors']} |",
        "",
        f"Statuses: {summary['statuses']}; error kinds: {summary['error_kinds'] or 'none'}.",
        "",
    ]
    (out_dir / f"{name}.md").write_text("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--url", help="a running server (default: start `agentic-search serve`)")
    p.add_argument("--clients", type=int, default=50, help="concurrent clients (default 50)")
    p.add_argument("--duration", type=float, default=60.0, help="seconds (default 60)")
    p.add_argument("--timeout", type=float, default=120.0, help="per request (default 120 s)")
    p.add_argument("--limit", type=int, default=10, help="results per search (default 10)")
    p.add_argument(
        "--cache",
        default="none",
        choices=["none", "sqlite"],
        help="result cache of the spawned server (default none: every request searches)",
    )
    p.add_argument("--home", help="AGENTIC_SEARCH_HOME of the spawned server")
    p.add_argument(
        "--workers",
        type=int,
        help="the spawned server's --workers (default: serve's own, the CPU count; 0: one process)",
    )
    p.add_argument("--out", type=Path, default=Path("benchmarks/load"), help="report folder")
    p.add_argument("--name", default="load", help="report file name (NAME.json, NAME.md)")
    args = p.parse_args(argv)
    if args.clients < 1 or args.duration <= 0:
        p.error("--clients must be >= 1 and --duration > 0")
    proc = None
    url = args.url
    if not url:
        proc, url = spawn_serve(args.cache, args.home, args.workers)
    try:
        # one warm-up request (model load, first query) outside the measurement
        run_load(url, 1, 0.01, args.timeout, args.limit)
        summary = run_load(url, args.clients, args.duration, args.timeout, args.limit)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
    summary["mode"] = f"serve spawned, cache {args.cache}" if proc else "external server"
    summary["workers"] = args.workers if proc else None
    summary["vector_store"] = os.environ.get("VECTOR_STORE", "local")
    summary["measured_at"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    write_report(summary, args.out, args.name)
    print(json.dumps(summary, indent=2))
    return 0 if summary["errors"] == 0 and summary["ok"] > 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
