#!/usr/bin/env python3
"""Benchmark (not a test): ``agentic-search ingest`` of 1,000 new records while ``serve`` answers
50 clients (issue 25 item 5).

One closed-loop load (``scripts/loadtest.py``'s clients and queries: each of ``--clients``
threads POSTs /search, waits, sends the next) runs against ``serve`` over a fresh home (the
bundled catalog); after ``--before`` seconds ``agentic-search ingest`` of 1,000 new records
(each a bundled record under a new id and a made-up one-word name) is run while the load goes
on; the load stops when the command returns. Each request is counted by when it was sent:
before the ingest, or during it. Then every new record is searched by its name, round after
round, until each is found in the top 10: "searchable after" is the time from the command's
return to the end of the round that found the last one (an upper bound: a round searches the
records one after the other).

    .venv/bin/python benchmarks/sync/ingest_while_serving.py --clients 50

Writes benchmarks/sync/ingest_while_serving.json (quoted in benchmarks/sync/README.md).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
from loadtest import QUERIES, percentile, spawn_serve  # noqa: E402

SYLLABLES = ["ka", "zo", "ri", "mu", "te", "vo", "lu", "xa", "pe", "qui"]


def made_up_name(i: int) -> str:
    """A one-word name no bundled record holds: i spelled in syllables, e.g. 'Zokarimu'."""
    digits = f"{i:04d}"
    return "Zy" + "".join(SYLLABLES[int(d)] for d in digits)


def new_records(n: int) -> list[dict[str, Any]]:
    """``n`` records: bundled records (cycled) under new ids and made-up names."""
    from agentic_search.logic.schema import load_schema
    from agentic_search.sync.files import bundled_catalog_path, read_catalog

    base = read_catalog(bundled_catalog_path(), load_schema("tools")).records
    return [
        dict(base[i % len(base)], id=f"bench-new-{i:04d}", name=made_up_name(i)) for i in range(n)
    ]


def _post(port: int, query: str, timeout: float = 120.0) -> tuple[int | None, list[str]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        body = json.dumps({"query": query, "limit": 10}).encode()
        conn.request("POST", "/search", body, {"content-type": "application/json"})
        resp = conn.getresponse()
        raw = resp.read()
        ids = [c["id"] for c in json.loads(raw).get("candidates", [])] if resp.status == 200 else []
        return resp.status, ids
    finally:
        conn.close()


class Load:
    """``clients`` closed-loop clients; each request is kept as (sent at, ms, status)."""

    def __init__(self, port: int, clients: int) -> None:
        self.port = port
        self.samples: list[tuple[float, float, str]] = []
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.threads = [
            threading.Thread(target=self._client, args=(i,), daemon=True) for i in range(clients)
        ]

    def _client(self, idx: int) -> None:
        i = idx
        while not self.stop.is_set():
            sent = time.monotonic()
            try:
                status, _ = _post(self.port, QUERIES[i % len(QUERIES)])
                outcome = str(status)
            except (OSError, http.client.HTTPException) as exc:
                outcome = type(exc).__name__
            ms = (time.monotonic() - sent) * 1000
            with self.lock:
                self.samples.append((sent, ms, outcome))
            i += 1

    def window(self, start: float, end: float) -> dict[str, Any]:
        """Figures of the requests sent in [start, end)."""
        rows = [s for s in self.samples if start <= s[0] < end]
        ok = [ms for _, ms, o in rows if o == "200"]
        errors: dict[str, int] = {}
        for _, _, o in rows:
            if o != "200":
                errors[o] = errors.get(o, 0) + 1
        return {
            "seconds": round(end - start, 1),
            "requests": len(rows),
            "errors": sum(errors.values()),
            "error_kinds": errors,
            "requests_per_s": round(len(rows) / (end - start), 1) if end > start else 0,
            "p50_ms": round(percentile(ok, 50), 1),
            "p95_ms": round(percentile(ok, 95), 1),
            "max_ms": round(max(ok), 1) if ok else 0,
        }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--records", type=int, default=1000)
    p.add_argument("--before", type=float, default=30.0, help="seconds of load before the ingest")
    p.add_argument("--out", type=Path, default=REPO / "benchmarks" / "sync")
    args = p.parse_args()

    home = Path(tempfile.mkdtemp(prefix="ingest-while-serving-"))
    os.environ.update({"VECTOR_STORE": "edge", "AGENTIC_SEARCH_HOME": str(home)})
    catalog = home / "new.jsonl"
    records = new_records(args.records)
    catalog.write_text("".join(json.dumps(r) + "\n" for r in records))
    proc, url = spawn_serve("none", str(home))  # default --workers: the CPU count
    port = int(url.rsplit(":", 1)[1])
    try:
        load = Load(port, args.clients)
        load_at_start = os.getloadavg()
        t0 = time.monotonic()
        for t in load.threads:
            t.start()
        time.sleep(args.before)
        exe = Path(sys.executable).with_name("agentic-search")
        t_ingest = time.monotonic()
        done = subprocess.run(
            [str(exe), "ingest", str(catalog)],
            capture_output=True,
            text=True,
            env={**os.environ, "CACHE_BACKEND": "none"},
            check=False,
        )
        t_return = time.monotonic()
        load.stop.set()
        for t in load.threads:
            t.join()
        load_at_end = os.getloadavg()
        before, during = load.window(t0, t_ingest), load.window(t_ingest, t_return)

        missing = {r["id"]: r["name"] for r in records}
        rounds = 0
        while missing and time.monotonic() - t_return < 600:
            rounds += 1
            with ThreadPoolExecutor(8) as ex:
                found = list(ex.map(lambda kv: kv[0] in _post(port, kv[1])[1], missing.items()))
            missing = {k: v for (k, v), hit in zip(missing.items(), found, strict=True) if not hit}
        searchable_after = time.monotonic() - t_return
    finally:
        proc.terminate()
        proc.wait(timeout=120)

    summary = {
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "benchmarks/sync/ingest_while_serving.py "
        f"--clients {args.clients} --records {args.records} --before {args.before:g}",
        "cpus": os.cpu_count(),
        "machine": f"{platform.machine()} {platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "load_avg_start": [round(x, 2) for x in load_at_start],
        "load_avg_end": [round(x, 2) for x in load_at_end],
        "clients": args.clients,
        "ingest_rc": done.returncode,
        "ingest_seconds": round(t_return - t_ingest, 1),
        "ingest_stdout": done.stdout.strip().splitlines()[:2],
        "before": before,
        "during": during,
        "probe_rounds": rounds,
        "not_found": sorted(missing),
        "searchable_after_return_s_upper_bound": round(searchable_after, 1),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "ingest_while_serving.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 0 if done.returncode == 0 and not missing and not during["errors"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
