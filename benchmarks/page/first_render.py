"""First render of the search page, measured in the browser (issue 30: under 300 ms on the bundled
catalog, quiet machine).

Starts ``agentic-search serve --workers 0`` over a working folder (``--home``; default a fresh
temporary one, whose first use indexes the bundled catalog before serving), then opens the page
with a query in its URL ``--loads`` times per query in headless Chromium (Debian's ``chromium``
and ``chromium-driver``, driven by selenium) and reads the browser's own clocks:

* ``first_render_ms``: navigation start to the page's ``as:first-render`` mark (the results
  drawn; Navigation Timing and ``performance.mark``);
* ``search_ms``: the page's ``as:search`` measure (the ``POST /search`` round trip and drawing);
* ``dom_content_loaded_ms``: navigation start to DOMContentLoaded (the page itself).

Median, min and max per query, with the load average before and after: figures taken while
other jobs run are indicative only. ``--cache`` serves with the SQLite result cache (the loads
after the first are answered from it).

Usage (from the repository root, virtualenv active; apt-get install -y chromium chromium-driver):
    python benchmarks/page/first_render.py                      # fresh home, 8 loads, a table
    python benchmarks/page/first_render.py --home ~/.agentic-search --loads 8 --json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

QUERIES = ("free code editor", "free open source code editor released after 2020 like vscode")


def start_serve(home: Path, cache: bool) -> tuple[subprocess.Popen[str], str]:
    """``serve --port 0 --workers 0`` over ``home``: the process and its base URL.

    Raises:
        RuntimeError: when it exits before it listens.
    """
    env = {
        **os.environ,
        "AGENTIC_SEARCH_HOME": str(home),
        "VECTOR_STORE": "edge",
        "CACHE_BACKEND": "sqlite" if cache else "none",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentic_search_cli.main", "serve", "--port", "0", "--workers", "0"],
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if m := re.search(r"serving on (http://[\d.]+:\d+)", line):
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return proc, m.group(1)
    raise RuntimeError(f"serve did not start (exit {proc.wait()})")


def browser() -> Any:
    """Headless Chromium through chromedriver.

    Raises:
        SystemExit: naming the install command when either is missing.
    """
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        raise SystemExit(
            "needs Chromium and its driver: apt-get install -y chromium chromium-driver"
        )
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        opts.add_argument(arg)
    opts.add_argument("--window-size=1280,1000")
    return webdriver.Chrome(service=Service(executable_path=driver), options=opts)


def one_load(drv: Any, url: str) -> dict[str, float]:
    """Open ``url`` and read the page's clocks once it has drawn the results."""
    from selenium.webdriver.support.ui import WebDriverWait

    drv.get(url)
    WebDriverWait(drv, 120).until(
        lambda d: d.execute_script("return performance.getEntriesByName('as:first-render').length")
    )
    return drv.execute_script(
        "const nav = performance.getEntriesByType('navigation')[0];"
        "return {first_render_ms: performance.getEntriesByName('as:first-render')[0].startTime,"
        " search_ms: performance.getEntriesByName('as:search')[0].duration,"
        " dom_content_loaded_ms: nav.domContentLoadedEventEnd};"
    )


def stats(values: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 1),
        "min": round(min(values), 1),
        "max": round(max(values), 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path, default=None, help="working folder (default: a fresh one)")
    ap.add_argument("--loads", type=int, default=8, help="page loads per query (default 8)")
    ap.add_argument("--query", action="append", default=None, help="a query (repeatable)")
    ap.add_argument("--cache", action="store_true", help="serve with the SQLite result cache")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = ap.parse_args(argv)
    if args.loads < 1:
        ap.error("--loads must be at least 1")
    queries = args.query or list(QUERIES)
    with tempfile.TemporaryDirectory(prefix="first-render-") as tmp:
        home = args.home or Path(tmp) / "home"
        proc, base = start_serve(home, args.cache)
        drv = None
        try:
            drv = browser()
            one_load(drv, f"{base}/?q=warm+up")  # the browser's and the server's first use
            load_before = os.getloadavg()
            per_query: dict[str, dict[str, Any]] = {}
            for q in queries:
                url = f"{base}/?{urllib.parse.urlencode({'q': q})}"
                loads = [one_load(drv, url) for _ in range(args.loads)]
                per_query[q] = {key: stats([load[key] for load in loads]) for key in loads[0]} | {
                    "loads": len(loads)
                }
            load_after = os.getloadavg()
        finally:
            if drv is not None:
                drv.quit()
            proc.terminate()
            proc.wait(timeout=60)
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} logical CPUs, {platform.system()}",
        "cache": "sqlite" if args.cache else "none",
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in load_after],
        "queries": per_query,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{result['date']}  {result['machine']}  result cache: {result['cache']}")
    print(f"load average before {result['loadavg_before']}, after {result['loadavg_after']}")
    for q, figures in per_query.items():
        print(f"\n{q!r} ({figures['loads']} loads)")
        print(f"  {'figure':<22} {'median':>8} {'min':>8} {'max':>8}")
        for key in ("first_render_ms", "search_ms", "dom_content_loaded_ms"):
            s = figures[key]
            print(f"  {key:<22} {s['median']:>8.1f} {s['min']:>8.1f} {s['max']:>8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
