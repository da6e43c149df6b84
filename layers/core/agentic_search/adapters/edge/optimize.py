"""``optimize()`` of an Edge shard in a worker process, never inside a request, while the
store keeps answering.

Qdrant Edge builds a segment's HNSW index only in ``EdgeShard.optimize()``, which blocks and
holds the GIL for minutes on a large shard (benchmarks/README.md); until then a
segment is searched exactly, by brute force. And a shard directory can be open in one process
only (:mod:`~agentic_search.adapters.edge.replica`). So :class:`ShardOptimizer`:

1. copies the shard while the writer holds its writes off for the copy (flushed, consistent);
2. runs ``optimize()`` on the copy in a child process (``python -m
   agentic_search.adapters.edge.optimize_child <copy>``, niced; it dies with its parent), while the
   writer's own shard, untouched, keeps answering reads (brute force) in the parent;
3. when the child is done, checks that the shard took no write meanwhile (its segment versions
   are those of the copy), closes it, swaps the optimized copy in with one atomic exchange of
   the two directories, and deletes the old one; the next read loads the optimized shard.

A child that fails or is killed leaves only its copy behind, which is deleted: the store goes
on with its unoptimized shard. A write during the optimize makes the copy stale: it is
discarded, and the result says so (optimize again later).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentic_search.adapters.edge.replica import copy_dir, exchange
from agentic_search.adapters.edge.store import EdgeStore
from agentic_search.logic.schema import DomainSchema

#: A shard with fewer points is not worth optimizing after an ingest (Edge's default indexing
#: threshold, 20,000 KB of vectors, is ~13,000 points of 384 floats: smaller segments keep
#: brute force anyway).
MIN_POINTS = 10_000
#: The module the optimize worker runs (``python -m``).
CHILD = "agentic_search.adapters.edge.optimize_child"


@dataclass(frozen=True)
class OptimizeResult:
    """What an optimize did: ``swapped`` when the optimized copy replaced the shard,
    ``optimized`` when the engine changed anything, the wall time (s), the points and indexed
    vectors after it, and ``reason`` when nothing was swapped."""

    collection: str
    swapped: bool
    optimized: bool
    seconds: float
    points: int = 0
    indexed_vectors: int = 0
    reason: str = ""


def _versions(shard: Any) -> dict[str, int]:
    return {k: v["segment_version"] for k, v in shard.snapshot_manifest().items()}


class ShardOptimizer:
    """One optimize of one domain's shard in a child process (see the module docstring):
    :meth:`start`, then :meth:`wait` (or :meth:`cancel`)."""

    def __init__(self, store: EdgeStore, schema: DomainSchema) -> None:
        self.store = store
        self.schema = schema
        self.collection = store.collection(schema)
        self.staging: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._out: Any = None
        self._versions: dict[str, int] = {}
        self._started = 0.0
        self._result: OptimizeResult | None = None

    def start(self) -> None:
        """Copy the shard (writes held off meanwhile) and start the child on the copy.

        Raises:
            VectorStoreError: when the shard does not exist or cannot be opened.
            OSError: when the copy or the child cannot be made.
        """
        shard_dir = self.store.shard_dir(self.schema)
        for stale in shard_dir.parent.glob(f".{shard_dir.name}.optimizing-*"):
            shutil.rmtree(stale, ignore_errors=True)  # a parent killed mid-optimize
        self.staging = shard_dir.with_name(
            f".{shard_dir.name}.optimizing-{os.getpid()}-{time.monotonic_ns()}"
        )
        self._started = time.monotonic()
        with self.store.writes_paused(self.schema) as shard:
            self._versions = _versions(shard)
            copy_dir(shard_dir, self.staging)
        self._out = tempfile.TemporaryFile()  # noqa: SIM115 - closed by wait() or cancel()
        self._proc = subprocess.Popen(
            [sys.executable, "-m", CHILD, str(self.staging), str(os.getpid())],
            stdout=self._out,
            stderr=subprocess.STDOUT,
        )

    @property
    def pid(self) -> int | None:
        """The child's pid (None before :meth:`start`)."""
        return self._proc.pid if self._proc else None

    def wait(self, timeout: float | None = None) -> OptimizeResult | None:
        """Wait up to ``timeout`` s (None: until done) for the child; when it is done, swap
        the optimized copy in (or discard it) and return the result (the same one on every
        later call); None while it runs.

        Raises:
            OSError: when the directories cannot be exchanged (the shard stays as it was).
        """
        assert self._proc is not None and self.staging is not None, "start() first"
        if self._result is None:
            try:
                code = self._proc.wait(timeout)
            except subprocess.TimeoutExpired:
                return None
            self._result = self._finish(code)
        return self._result

    def _finish(self, code: int) -> OptimizeResult:
        assert self.staging is not None
        self._out.seek(0)
        lines = self._out.read().decode(errors="replace").strip().splitlines()
        self._out.close()
        seconds = time.monotonic() - self._started
        if code != 0:
            self._discard()
            last = lines[-1] if lines else f"killed by signal {-code}" if code < 0 else ""
            return self._failed(seconds, f"the optimize worker failed (exit {code}): {last}")
        report = json.loads(lines[-1])
        shard_dir = self.store.shard_dir(self.schema)
        with self.store.writes_paused(self.schema) as shard:
            if _versions(shard) != self._versions:
                self._discard()
                return self._failed(
                    seconds, "the shard was written while it was optimized; optimize again"
                )
            self.store.unload(self.schema)
            exchange(self.staging, shard_dir)
        self._discard()  # the old, unoptimized shard now
        _record(self.store, self.schema)
        return OptimizeResult(
            self.collection,
            swapped=True,
            optimized=report["optimized"],
            seconds=seconds,
            points=report["points"],
            indexed_vectors=report["indexed_vectors"],
        )

    def cancel(self) -> None:
        """Kill the child (if running) and delete its copy; the shard stays as it was."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        if self._out is not None and not self._out.closed:
            self._out.close()
        self._discard()

    def _failed(self, seconds: float, reason: str) -> OptimizeResult:
        return OptimizeResult(self.collection, False, False, seconds, reason=reason)

    def _discard(self) -> None:
        if self.staging is not None:
            shutil.rmtree(self.staging, ignore_errors=True)


def _state(info: Any) -> list[int]:
    return [info.points_count, info.indexed_vectors_count, info.segments_count]


def _record_path(store: EdgeStore, schema: DomainSchema) -> Path:
    shard = store.shard_dir(schema)
    return shard.with_name(shard.name + ".optimize.json")


def _record(store: EdgeStore, schema: DomainSchema) -> None:
    """Keep the optimized shard's counts beside it (``<shard>.optimize.json``): while they
    stay the same, another optimize would change nothing (segments under Edge's indexing
    threshold stay unindexed however often it runs)."""
    info = store.info(schema)
    if info is not None:
        _record_path(store, schema).write_text(json.dumps({"state": _state(info)}))


def needs_optimize(store: EdgeStore, schema: DomainSchema, min_points: int = MIN_POINTS) -> bool:
    """Whether at least ``min_points`` points of the shard are outside an HNSW index (a
    bulk ingest; a few changed records in a small new segment are cheap to scan)."""
    info = store.info(schema)
    if info is None:
        return False
    try:
        if json.loads(_record_path(store, schema).read_text())["state"] == _state(info):
            return False  # nothing changed since the last optimize
    except (OSError, ValueError, KeyError):
        pass
    # indexed_vectors_count counts the sparse bm25 vectors too (always indexed)
    dense = max(1, len(schema.aspect_names))
    indexed_dense = max(0, info.indexed_vectors_count - info.points_count)
    return info.points_count - indexed_dense // dense >= min_points


def optimize_in_worker(
    store: EdgeStore,
    schema: DomainSchema,
    on_tick: Callable[[float], None] | None = None,
    tick_s: float = 0.5,
) -> OptimizeResult:
    """Optimize the domain's shard in a child process and swap it in, calling ``on_tick``
    with the seconds elapsed every ``tick_s`` s meanwhile; Ctrl-C cancels (the shard stays
    unoptimized) and re-raises.

    Raises:
        VectorStoreError: when the shard does not exist or cannot be opened.
        OSError: when the copy, the child or the swap fails.
    """
    job = ShardOptimizer(store, schema)
    job.start()
    started = time.monotonic()
    try:
        while (result := job.wait(tick_s)) is None:
            if on_tick is not None:
                on_tick(time.monotonic() - started)
    except BaseException:
        job.cancel()
        raise
    return result


__all__ = [
    "MIN_POINTS",
    "OptimizeResult",
    "ShardOptimizer",
    "needs_optimize",
    "optimize_in_worker",
]
