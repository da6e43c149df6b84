"""Crash consistency: SIGKILL ``ingest`` or ``sync`` at a random point, re-run it, and check that
the store (points and payloads), the keyword index, the sync status and the write journal equal
the catalog.

Each trial runs the real command line in a subprocess over its own working folder:

* ``ingest`` trials start from an empty folder and ingest a 40-record catalog in batches of 8;
* ``sync`` trials start from a copy of a folder holding those 40 records and apply 32 versioned
  changes (24 modify with new descriptions, so they re-embed; 8 remove) in batches of 4.

The process is killed after a delay drawn uniformly from ``[0.2, 8]`` s (start-up included, so
some kills land before the first write and some after the last), the same command is run again
to completion, and :func:`agentic_search.sync.audit.audit` compares everything with the catalog
the command describes. A kill point is recorded as the delay and what the folder held at the
kill: whether a write was journaled as in flight and how many points the store had.

    python benchmarks/reliability/crash.py --runs 100 --out benchmarks/reliability/crash.json

The test suite runs :func:`run_trials` with 4 trials (tests/e2e/test_crash_consistency.py).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

RECORDS = 40
MODIFIED = 24
REMOVED = 8
KILL_AFTER_S = (0.2, 8.0)


@dataclass
class Trial:
    """One kill-and-re-run: the command, the kill delay (s), whether the process had already
    exited at the kill, what the folder held then, and the audit after the re-run."""

    kind: str
    kill_after_s: float
    exited_before_kill: bool
    journaled_at_kill: bool
    points_at_kill: int | None
    rerun_code: int
    consistent: bool
    audit: dict[str, Any]


def cli(home: Path, *argv: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run the command line over ``home`` to completion."""
    return subprocess.run(
        [sys.executable, "-m", "agentic_search_cli.main", *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "AGENTIC_SEARCH_HOME": str(home)},
        timeout=timeout,
        check=False,
    )


def catalog() -> list[dict[str, Any]]:
    """The first :data:`RECORDS` records of the bundled catalog."""
    from agentic_search.sync.files import bundled_catalog_path

    lines = bundled_catalog_path().read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[:RECORDS]]


def changes(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The sync trials' events (catalog.changed, versions 1..) and the catalog after them."""
    events, after = [], {r["id"]: dict(r) for r in records}
    for n, rec in enumerate(records[:MODIFIED], start=1):
        new = {**rec, "description": f"{rec['description']} Revised edition {n} of the notes."}
        after[rec["id"]] = new
        detail = {"operation": "modify", "recordId": rec["id"], "version": n, "record": new}
        events.append({"detail-type": "catalog.changed", "detail": detail})
    for n, rec in enumerate(records[MODIFIED : MODIFIED + REMOVED], start=MODIFIED + 1):
        del after[rec["id"]]
        detail = {"operation": "remove", "recordId": rec["id"], "version": n}
        events.append({"detail-type": "catalog.changed", "detail": detail})
    return events, list(after.values())


def points(home: Path) -> int | None:
    """Points in the tools collection's SQLite file (None while it does not exist/parse)."""
    files = sorted((home / "qdrant").rglob("storage.sqlite"))
    if not files:
        return None
    try:
        with sqlite3.connect(f"file:{files[0]}?mode=ro", uri=True, timeout=1) as db:
            return int(db.execute("select count(*) from points").fetchone()[0])
    except sqlite3.Error:
        return None


def audit_home(home: Path, records: list[dict[str, Any]]) -> dict[str, Any]:
    """:func:`agentic_search.sync.audit.audit` of ``home``'s tools domain (read in-process)."""
    from agentic_search.config import Settings
    from agentic_search.logic.schema import load_schema
    from agentic_search.service import SearchService
    from agentic_search.sync.audit import audit

    schema = load_schema("tools")
    valid = [schema.validate_record(r) for r in records]
    service = SearchService.create(Settings(agentic_search_home=home), "tools")
    try:
        return audit(service.deps, valid).wire()
    finally:
        service.close()


def kill_and_rerun(
    home: Path, argv: list[str], delay: float, after_write_starts: bool = False
) -> tuple[bool, bool, int | None, int]:
    """Start ``argv``, SIGKILL it after ``delay`` s (counted from the first journaled write
    with ``after_write_starts``: a kill mid-write whatever the start-up takes), note what the
    folder holds, re-run it to the end; (exited before the kill, journaled at the kill,
    points at the kill, the re-run's exit code)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentic_search_cli.main", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "AGENTIC_SEARCH_HOME": str(home)},
    )
    if after_write_starts:
        while proc.poll() is None and not any((home / "journal").glob("*.json")):
            time.sleep(0.01)
    try:
        proc.wait(timeout=delay)
        exited = True
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        exited = False
    journaled = any((home / "journal").glob("*.json"))
    held = points(home)
    rerun = cli(home, *argv)
    return exited, journaled, held, rerun.returncode


def run_trials(
    runs: int, work: Path, seed: int = 7, after_write_starts: bool | None = None
) -> list[Trial]:
    """``runs`` trials, alternating ingest and sync, in folders under ``work``; the kill
    delay counts from the process start, or from its first journaled write on every other
    pair of trials (always / never with ``after_write_starts`` True / False), those drawn
    from ``[0, 2]`` s."""
    from agentic_search.adapters.edge.replica import copy_dir

    rng = random.Random(seed)
    records = catalog()
    cat = work / "catalog.jsonl"
    cat.write_text("".join(json.dumps(r) + "\n" for r in records))
    events, after = changes(records)
    ev = work / "changes.jsonl"
    ev.write_text("".join(json.dumps(e) + "\n" for e in events))
    base = work / "base"
    built = cli(base, "ingest", str(cat), "--batch-size", "8")
    if built.returncode != 0:
        raise RuntimeError(f"base ingest failed: {built.stderr[-500:]}")
    trials = []
    for n in range(runs):
        home = work / f"t{n}"
        mid = (n // 2) % 2 == 1 if after_write_starts is None else after_write_starts
        delay = rng.uniform(0.0, 2.0) if mid else rng.uniform(*KILL_AFTER_S)
        if n % 2 == 0:
            kind, argv, want = "ingest", ["ingest", str(cat), "--batch-size", "8"], records
        else:
            copy_dir(base, home)  # sparse: the engine preallocates 32 MiB pages
            for lock in [*home.rglob("*.lock"), *home.rglob(".lock")]:
                lock.unlink()
            kind, argv, want = "sync", ["sync", str(ev), "--batch-size", "4"], after
        exited, journaled, held, code = kill_and_rerun(home, argv, delay, mid)
        result = audit_home(home, want)
        trials.append(
            Trial(
                kind, round(delay, 3), exited, journaled, held, code, result["consistent"], result
            )
        )
        shutil.rmtree(home, ignore_errors=True)
    return trials


def summary(trials: list[Trial]) -> dict[str, Any]:
    """Counts of runs, kill points and consistent outcomes, by command."""
    out: dict[str, Any] = {"runs": len(trials), "consistent": sum(t.consistent for t in trials)}
    for kind in ("ingest", "sync"):
        ts = [t for t in trials if t.kind == kind]
        out[kind] = {
            "runs": len(ts),
            "consistent": sum(t.consistent for t in ts),
            "killedMidWrite": sum(t.journaled_at_kill for t in ts),
            "killedOutsideAWrite": sum(
                not t.exited_before_kill and not t.journaled_at_kill for t in ts
            ),
            "exitedBeforeKill": sum(t.exited_before_kill for t in ts),
            "distinctKillPoints": len({(t.journaled_at_kill, t.points_at_kill) for t in ts}),
        }
    return out


def main() -> int:
    """Run the trials and write the figures (``--out``) with the machine and date."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="crash-") as tmp:
        trials = run_trials(args.runs, Path(tmp), args.seed)
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        "loadavg_at_start": os.getloadavg(),
        "minutes": round((time.time() - started) / 60, 1),
        "summary": summary(trials),
        "trials": [asdict(t) for t in trials],
    }
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(json.dumps(result["summary"], indent=2))
    return 0 if result["summary"]["consistent"] == len(trials) else 1


if __name__ == "__main__":
    raise SystemExit(main())
