"""Randomized operations (issue 25, "done when"): whatever runs, the index ends equal to the last
accepted state of the file, and no refused command is ever applied.

A seeded generator draws :data:`SEQUENCES` sequences of 1 to 3 operations over a catalog of
:data:`CATALOG` records (each in two versions), run back to back over one folder, each
sequence starting from the state the last one left:

* ``ingest`` of a random part of the catalog, some lines rejected (a NaN price or a line cut
  short, both naming their id; a line that names none), with ``prune`` (and ``force``) at
  random: refused when no line was accepted or when more than half of the index would go
  without ``force``;
* ``locked``: an ingest while another writer holds the shard lock, as ``serve`` does: refused,
  nothing journaled;
* ``kill`` (in :data:`KILLS` sequences): the ``ingest`` command in a subprocess, SIGKILLed at a
  random point after its journal appears; the next process completes it;
* ``serve`` (in :data:`SERVES` sequences): a real ``agentic-search serve`` subprocess runs over
  the folder for the whole sequence (it holds the shard lock; it starts on whatever the last
  sequence left, an index a prune emptied included, and must not seed it). Each ``ingest`` of
  the sequence is the CLI's own (``main(["ingest", ...])`` in this process), which finds the
  server through its serve-info file and hands the write over loopback: the same report and
  the same refusals (``--prune`` refused, ``--force`` honoured) as in-process, and no journal
  left behind by a refusal. One write of the sequence, at a random place, goes straight to the
  store instead: refused, since serve holds the lock, and nothing journaled. The store cannot
  be read while serve holds it, so the audit runs once serve stops; meanwhile each answer's
  report is checked against the model.

A model (a dict of id -> record) says what each accepted command makes of the index; after
every refused command and at the end of every sequence, :func:`~agentic_search.sync.audit.
audit` compares the store, the keyword index, the sync status and the journal with it.
Operations run in-process through the functions the CLI calls (``SearchService.ingest_file``,
``recover``); only the kills and ``serve`` use subprocesses. Embeddings are the real model's,
remembered per text (:class:`support.fakes.MemoEmbedder`): the same few texts are written
again and again (serve embeds with its own model).
"""

from __future__ import annotations

import json
import math
import os
import random
import signal
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from support.cli import serving_process
from support.fakes import MemoEmbedder

from agentic_search.adapters.edge.store import EdgeStore
from agentic_search.config import Settings
from agentic_search.ports import VectorStoreError
from agentic_search.service import SearchService
from agentic_search.sync.audit import audit
from agentic_search.sync.prune import PRUNE_MAX_SHARE, PruneRefused
from agentic_search_cli.main import main

SEED = 2511
SEQUENCES = 200
CATALOG = 6
KILLS = 2
SERVES = 5
#: The environment of ``serve`` and of the CLI run in this process (the tests' own defaults).
SERVE_ENV = {"VECTOR_STORE": "edge", "CACHE_BACKEND": "none"}


class Model:
    """What the index should hold: id -> validated record, and the ops' bookkeeping."""

    def __init__(self) -> None:
        self.expected: dict[str, dict[str, Any]] = {}

    def outcome(
        self, valid: dict[str, dict[str, Any]], rejected: set[str], prune: bool, force: bool
    ) -> tuple[bool, dict[str, dict[str, Any]], list[str], list[str]]:
        """(refused, the index after, stale ids, kept ids) of an ingest of a file holding
        ``valid`` records and lines rejected with the ids ``rejected``."""
        indexed = set(self.expected)
        stale = sorted(indexed - set(valid) - rejected)
        kept = sorted(indexed & (rejected - set(valid)))
        if prune and (not valid or (not force and len(stale) > PRUNE_MAX_SHARE * len(indexed))):
            return True, dict(self.expected), stale, kept
        after = {**self.expected, **valid}
        if prune:
            for rid in stale:
                del after[rid]
        return False, after, stale, kept


def _versions(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each record in two versions (the second's description changed: it re-embeds)."""
    return {
        r["id"]: [r, {**r, "description": f"{r['description']} Revised in a second edition."}]
        for r in records
    }


def _draw_file(
    rng: random.Random, versions: dict[str, list[dict[str, Any]]], path: Path
) -> tuple[dict[str, dict[str, Any]], set[str]]:
    """A catalog file of random records and rejected lines; (valid by id, rejected ids)."""
    ids = list(versions)
    rng.shuffle(ids)
    n_valid = rng.choice([0, 1, 2, 3, 4, 5, 6, 6])
    valid = {rid: rng.choice(versions[rid]) for rid in ids[:n_valid]}
    lines = [json.dumps(rec) for rec in valid.values()]
    rejected: set[str] = set()
    for rid in ids[n_valid:]:
        kind = rng.choice(["none", "none", "nan", "cut"])
        rec = rng.choice(versions[rid])
        if kind == "nan":
            lines.append(json.dumps({**rec, "price_monthly_usd": math.nan}))
            rejected.add(rid)
        elif kind == "cut":
            lines.append(json.dumps({"id": rid, **rec})[:40])  # cut short, its id readable
            rejected.add(rid)
    if rng.random() < 0.3:
        lines.append("not json at all")
    rng.shuffle(lines)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return valid, rejected


class Runner:
    """The folder, the in-process service over it (reopened around the lock and kill
    operations) and the model."""

    def __init__(self, home: Path, work: Path, embedder: Any, capsys: Any) -> None:
        self.home, self.work, self.embedder, self.capsys = home, work, embedder, capsys
        self.journal = home / "journal" / "tools.json"
        self.served: subprocess.Popen[str] | None = None
        self._serving = ExitStack()
        self.settings = Settings(agentic_search_home=home)
        self.service = self.open()
        self.model = Model()
        self.files = 0
        self.counts: dict[str, int] = {}

    def open(self) -> SearchService:
        return SearchService.create(self.settings, "tools", embedder=self.embedder)

    def file(self) -> Path:
        self.files += 1
        return self.work / f"f{self.files}.jsonl"

    def check(self, why: str) -> None:
        result = audit(self.service.deps, list(self.model.expected.values()))
        assert result.consistent, (why, result.wire())

    def count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    def ingest(self, rng: random.Random, versions: dict[str, list[dict[str, Any]]]) -> None:
        path = self.file()
        valid, rejected = _draw_file(rng, versions, path)
        prune = rng.random() < 0.5
        force = prune and rng.random() < 0.3
        refused, after, stale, kept = self.model.outcome(valid, rejected, prune, force)
        if refused:
            with pytest.raises(PruneRefused):
                self.service.ingest_file(path, prune=prune, force=force)
            assert self.service.pending_write() is None
            self.count("prune refused")
            self.check(f"refused prune of {path}")
            return
        report = self.service.ingest_file(path, prune=prune, force=force)
        assert report.kept == kept, path
        assert report.stale == stale, path
        assert (report.pruned > 0) == (prune and bool(stale)), path
        self.model.expected = after
        self.count("ingest" + (" prune" if prune else ""))

    def locked(self, rng: random.Random, versions: dict[str, list[dict[str, Any]]]) -> None:
        self.service.close()
        writer = EdgeStore(self.settings)  # another writer, holding the lock as serve does
        writer.acquire_writer(self.service.schema)
        refused = self.open()
        try:
            path = self.file()
            _draw_file(rng, versions, path)
            with pytest.raises(VectorStoreError, match="open for writing by another process"):
                refused.ingest_file(path, prune=rng.random() < 0.5)
            assert refused.pending_write() is None
        finally:
            refused.close()
            writer.close()
        self.service = self.open()
        assert self.service.recover() is None  # nothing left behind to apply
        self.count("locked")
        self.check("refused while locked")

    def kill(self, rng: random.Random, versions: dict[str, list[dict[str, Any]]]) -> None:
        path = self.file()
        while True:  # a file the prune rules accept: the kill lands in a write
            valid, rejected = _draw_file(rng, versions, path)
            refused, after, _, _ = self.model.outcome(valid, rejected, True, False)
            if not refused:
                break
        self.service.close()
        journal = self.journal
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentic_search_cli.main", "ingest", str(path), "--prune"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "AGENTIC_SEARCH_HOME": str(self.home)},
        )
        while proc.poll() is None and not journal.exists():
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, 1.5))  # a random point of the write (or after it)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.returncode in (0, -signal.SIGKILL), proc.stderr.read() if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
        # the next command completes the journal (or finds the ingest done)
        self.service = self.open()
        self.service.recover()
        self.model.expected = after
        self.count("killed" if proc.returncode else "kill missed")

    # ----- serve running over the folder ---------------------------------------------------

    def serve_start(self) -> None:
        """Close this process's service and start ``serve`` over the folder (it takes the
        lock); the CLI's writes go to it until :meth:`serve_stop`."""
        self.service.close()
        self.served, _ = self._serving.enter_context(
            serving_process(self.home, "--workers", "0", **SERVE_ENV)
        )

    def serve_stop(self) -> None:
        """Stop ``serve`` (SIGTERM: exit 0), reopen the folder here and audit it."""
        assert self.served is not None
        self._serving.close()
        assert self.served.returncode == 0, "".join(self.served.stderr_lines)  # type: ignore[attr-defined]
        seeded = [ln for ln in self.served.stderr_lines if "first use" in ln]  # type: ignore[attr-defined]
        assert not seeded, seeded  # a folder once written (a prune emptied it) is never seeded
        self.served = None
        self.service = self.open()
        assert self.service.recover() is None  # the server left nothing half done
        self.check("after serve stopped")

    def _cli(self, *argv: str) -> tuple[int, str, str]:
        """``agentic-search *argv`` in this process: (exit code, stdout, stderr)."""
        self.capsys.readouterr()
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        out, err = self.capsys.readouterr()
        return code, out, err

    def ingest_served(self, rng: random.Random, versions: dict[str, list[dict[str, Any]]]) -> None:
        """An ``ingest`` (``--prune``, ``--force`` at random) by the CLI while serve runs:
        handed to serve, with the report or the refusal the in-process ingest gives."""
        assert self.served is not None
        path = self.file()
        valid, rejected = _draw_file(rng, versions, path)
        prune = rng.random() < 0.5
        force = prune and rng.random() < 0.3
        refused, after, stale, kept = self.model.outcome(valid, rejected, prune, force)
        argv = ["ingest", str(path), "--json", *(["--prune"] if prune else [])]
        code, out, err = self._cli(*argv, *(["--force"] if force else []))
        assert f"serve (pid {self.served.pid}" in err, err  # handed over, not refused
        assert not self.journal.exists(), path  # done, or refused: nothing left to apply
        if refused:
            last = err.strip().splitlines()[-1]
            assert code == 1, (path, err)
            assert last.startswith("agentic-search: error: ") and "PruneRefused" not in last
            assert "--force" in last or "no line of the file was accepted" in last, last
            self.count("serve prune refused")
            return
        assert code == 0, (path, err)
        report = json.loads(out)
        assert report["keptRejected"] == kept, (path, report)
        assert report["notInFile"] == stale, (path, report)
        assert (report["pruned"] > 0) == (prune and bool(stale)), (path, report)
        self.model.expected = after
        self.count("serve ingest" + (" prune" if prune else ""))

    def locked_served(self, rng: random.Random, versions: dict[str, list[dict[str, Any]]]) -> None:
        """A write straight to the store while serve holds its lock: refused, naming the
        server's pid, nothing journaled."""
        assert self.served is not None
        refused = self.open()
        try:
            path = self.file()
            _draw_file(rng, versions, path)
            holder = rf"open for writing by another process \(pid {self.served.pid}\)"
            with pytest.raises(VectorStoreError, match=holder):
                refused.ingest_file(path, prune=rng.random() < 0.5)
            assert refused.pending_write() is None
        finally:
            refused.close()
        self.count("serve locked")


def test_random_operations_leave_the_index_equal_to_the_last_accepted_file(
    tmp_path, embedder, catalog_records, capsys, monkeypatch
):
    home = tmp_path / "home"
    for name, value in {**SERVE_ENV, "AGENTIC_SEARCH_HOME": str(home)}.items():
        monkeypatch.setenv(name, value)  # the CLI run in this process: the same folder
    rng = random.Random(SEED)
    versions = _versions([dict(r) for r in catalog_records[:CATALOG]])
    runner = Runner(home, tmp_path, MemoEmbedder(embedder), capsys)
    kills = set(rng.sample(range(SEQUENCES), KILLS))
    serves = set(rng.sample(sorted(set(range(1, SEQUENCES)) - kills), SERVES))
    try:
        for n in range(SEQUENCES):
            if n in serves:
                ops = [runner.ingest_served] * rng.randint(1, 3) + [runner.locked_served]
                rng.shuffle(ops)
                runner.serve_start()
                for op in ops:
                    op(rng, versions)
                runner.serve_stop()
                continue
            for _ in range(rng.randint(1, 3)):
                op = runner.locked if rng.random() < 0.1 else runner.ingest
                op(rng, versions)
            if n in kills:
                runner.kill(rng, versions)
            runner.check(f"sequence {n}")
    finally:
        runner._serving.close()
        runner.service.close()
    # every kind of operation ran, refusals included, and serve's
    assert {"ingest", "ingest prune", "prune refused", "locked"} <= set(runner.counts)
    assert {"serve ingest", "serve locked"} <= set(runner.counts), runner.counts
    assert runner.counts.get("killed", 0) + runner.counts.get("kill missed", 0) == KILLS
