"""Whole-process cost of ``agentic-search search`` on the bundled catalog: a result-cache hit
and an uncached search, each timed from outside as the shell would run it.

Usage: python benchmarks/cli_startup/cli_startup.py [--runs 7] [--home DIR] [--json]

Indexes the bundled catalog into ``--home`` (a temporary folder by default; an existing one is
used as it is), fills the result cache with one search, then runs, in turn, ``--runs`` times
each (after one warm-up each): ``python -c pass``, ``import agentic_search_cli.main``, the
cached search and the same search with ``CACHE_BACKEND=none`` (uncached). Each run is one child
process; its wall time (``time.perf_counter`` around it), CPU time (user + sys) and peak
resident memory come from the kernel's accounting of that child (``os.wait4``). Prints the
median and the min-max of each, and whether the cached run imported the engine or the model
(``-X importtime`` of one more run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERY = "free code editor"
#: What a cache hit has no use for: the engine and the model.
ENGINE_AND_MODEL = ("qdrant_edge", "onnxruntime", "tokenizers")


def run_once(argv: list[str], env: dict[str, str]) -> dict[str, float]:
    """One child process: wall s, cpu s (user + sys) and peak MiB (its ``ru_maxrss``).

    Raises:
        RuntimeError: when the command exits non-zero.
    """
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {err[-500:]}")
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_mib": usage.ru_maxrss / 1024.0,
    }


def summary(runs: list[dict[str, float]]) -> dict[str, list[float]]:
    """Per figure: [median, min, max]."""
    return {
        k: [
            round(statistics.median(r[k] for r in runs), 3),
            round(min(r[k] for r in runs), 3),
            round(max(r[k] for r in runs), 3),
        ]
        for k in runs[0]
    }


def imported_by(argv: list[str], env: dict[str, str]) -> list[str]:
    """Which of :data:`ENGINE_AND_MODEL` the command imports (``-X importtime``)."""
    done = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    names = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "cumulative" not in line
    }
    return sorted(names & set(ENGINE_AND_MODEL))


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--home", type=Path, default=None, help="AGENTIC_SEARCH_HOME to use")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    home = args.home or Path(tempfile.mkdtemp(prefix="cli-startup-"))
    env = {**os.environ, "AGENTIC_SEARCH_HOME": str(home), "CACHE_BACKEND": "sqlite"}
    # the warm-up writes the .pyc files, as an installed package has them: with
    # PYTHONDONTWRITEBYTECODE set, every run would compile the project's modules again
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    py = sys.executable
    search = [py, "-m", "agentic_search_cli.main", "search", QUERY]
    run_once(search, env)  # first use: indexes the bundled catalog, fills the cache
    commands = {
        "python -c pass": ([py, "-c", "pass"], env),
        "import the CLI": ([py, "-c", "import agentic_search_cli.main"], env),
        "search, cache hit": (search, env),
        "search, uncached": (search, {**env, "CACHE_BACKEND": "none"}),
    }
    for argv, cmd_env in commands.values():
        run_once(argv, cmd_env)  # warm-up: the page cache, the .pyc files
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in commands}
    for _ in range(args.runs):  # in turn, so a drift of the machine touches each alike
        for name, (argv, cmd_env) in commands.items():
            runs[name].append(run_once(argv, cmd_env))
    out = {
        "machine": f"{platform.machine()} {platform.processor() or ''} {os.cpu_count()} cpus",
        "load": os.getloadavg(),
        "runs": args.runs,
        "figures (median, min, max)": {name: summary(r) for name, r in runs.items()},
        "cache hit imports": imported_by(search, env),
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"{out['machine']}, load {out['load'][0]:.1f}, {args.runs} runs each, home {home}")
    for name, figs in out["figures (median, min, max)"].items():
        cells = "  ".join(f"{k} {v[0]:.3f} ({v[1]:.3f}-{v[2]:.3f})" for k, v in figs.items())
        print(f"{name:20s} {cells}")
    print(f"the cache hit imported: {', '.join(out['cache hit imports']) or 'neither'}")


if __name__ == "__main__":
    main()
