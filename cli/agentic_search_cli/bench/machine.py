"""The machine the figures were taken on, and handler import times.

**Handler import time**: ``python -c "import agentic_search.service"`` and, for every
``functions/*/app.py``, ``python -c "import app"`` run in that folder, each in a fresh
subprocess, ``import_runs`` times (median reported, with the bare interpreter start
``python -c pass`` as the baseline). The subprocess also prints the in-process import time.
"""

from __future__ import annotations

import os
import platform
import re
import statistics
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_search_cli.bench.config import DEFAULT_IMPORT_RUNS, Tracker, _no_track

if TYPE_CHECKING:
    pass


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def machine_info() -> dict[str, Any]:
    """Cores, CPU model (``/proc/cpuinfo``), RAM (``/proc/meminfo``), OS, Python, runtimes."""
    cpuinfo = _read("/proc/cpuinfo")
    model = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.M)
    cores = re.search(r"^cpu cores\s*:\s*(\d+)$", cpuinfo, re.M)
    mem = re.search(r"^MemTotal:\s*(\d+)\s*kB", _read("/proc/meminfo"), re.M)
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count()
    versions: dict[str, str] = {}
    for module in ("onnxruntime", "fastembed", "qdrant_client", "numpy"):
        with suppress(Exception):
            from importlib.metadata import version

            versions[module] = version(module.replace("_", "-"))
    return {
        "cpu_model": model.group(1).strip() if model else platform.processor() or "unknown",
        "logical_cpus": os.cpu_count(),
        "usable_cpus": usable,
        "physical_cores_per_socket": int(cores.group(1)) if cores else None,
        "ram_bytes": int(mem.group(1)) * 1024 if mem else None,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "versions": versions,
        "loadavg_at_start": loadavg(),
    }


def loadavg() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (2 decimals), or None where the OS has none."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


# ----- imports -----------------------------------------------------------------------------------

_IMPORT_CODE = (
    "import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
)


def import_targets(root: Path) -> list[tuple[str, str, Path | None]]:
    """(label, module, working folder) of every import to time: the engine, then each
    ``functions/*/app.py`` under ``root`` (none when ``functions/`` does not exist)."""
    targets: list[tuple[str, str, Path | None]] = [
        ("agentic_search.service", "agentic_search.service", None)
    ]
    functions = root / "functions"
    if functions.is_dir():
        for app in sorted(functions.glob("*/app.py")):
            targets.append((f"functions/{app.parent.name}/app.py", "app", app.parent))
    return targets


def _time_subprocess(code: str, cwd: Path | None, env: dict[str, str]) -> tuple[float, str, str]:
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    wall = time.perf_counter() - t
    err = proc.stderr.strip().splitlines()[-1] if proc.returncode and proc.stderr.strip() else ""
    if proc.returncode and not err:
        err = f"exit code {proc.returncode}"
    return wall, proc.stdout.strip(), err


def measure_imports(
    root: Path, runs: int = DEFAULT_IMPORT_RUNS, track: Tracker = _no_track
) -> dict[str, Any]:
    """Median wall time (ms) of fresh ``python -c "import X"`` subprocesses, per target."""
    runs = max(1, runs)
    targets = import_targets(root)
    advance = track("timing imports (fresh interpreters)", (len(targets) + 1) * runs)
    env = dict(os.environ)
    handler_env = {"AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1", **env}
    baseline = []
    for _ in range(runs):
        baseline.append(_time_subprocess("pass", None, env)[0] * 1000)
        advance(1)
    out: dict[str, Any] = {
        "python": sys.executable,
        "runs": runs,
        "pythondontwritebytecode": bool(env.get("PYTHONDONTWRITEBYTECODE")),
        "functions_dir": str(root / "functions"),
        "functions_found": (root / "functions").is_dir(),
        "interpreter_start_ms": round(statistics.median(baseline), 1),
        "targets": {},
    }
    for label, module, cwd in targets:
        walls: list[float] = []
        inner: list[float] = []
        error = ""
        for _ in range(runs):
            wall, stdout, err = _time_subprocess(
                _IMPORT_CODE.format(module=module), cwd, handler_env if cwd else env
            )
            advance(1)
            if err:
                error = err
                break
            walls.append(wall * 1000)
            with suppress(ValueError, IndexError):
                inner.append(float(stdout.splitlines()[-1]) * 1000)
        row: dict[str, Any] = {"command": f'python -c "import {module}"'}
        if cwd is not None:
            row["cwd"] = str(cwd)
        if error:
            row["error"] = error
        else:
            row["wall_ms_median"] = round(statistics.median(walls), 1)
            row["wall_ms_min"] = round(min(walls), 1)
            row["wall_ms_max"] = round(max(walls), 1)
            if inner:
                row["import_ms_median"] = round(statistics.median(inner), 1)
        out["targets"][label] = row
    if not out["functions_found"]:
        out["note"] = "no functions/ folder: only the engine import was timed"
    return out
