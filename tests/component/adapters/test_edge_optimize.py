"""``optimize()`` of an Edge shard in a worker process (issue 18): the store answers, exactly,
while the worker runs; after the swap it answers the same; a killed worker, or a write during
the optimize, leaves the store on its unoptimized shard, which still answers.

The worker is paused with SIGSTOP where a test needs "while it runs" to be certain (a small
shard optimizes in well under a second)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from agentic_search.adapters.edge.maintenance import EdgeMaintenance
from agentic_search.adapters.edge.optimize import ShardOptimizer
from agentic_search.adapters.edge.store import EdgeStore
from agentic_search.config import Settings
from agentic_search.logic.schema import load_schema
from agentic_search.wire import PointWrite

DOCS = load_schema("documents")
ASPECT = DOCS.aspect_names[0]
N, DIM = 400, 8


def _vectors(seed: int, n: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


VECTORS = _vectors(7, N)
QUERIES = _vectors(8, 12)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EdgeStore]:
    s = EdgeStore(Settings(), root=tmp_path / "edge")
    s.ensure_collection(DOCS, dim=DIM)
    s.upsert(
        DOCS,
        [
            PointWrite(
                f"d{i}", {a: VECTORS[i].tolist() for a in DOCS.aspect_names}, {"id": f"d{i}"}
            )
            for i in range(N)
        ],
    )
    yield s
    s.close()


def _answers(store: EdgeStore) -> list[list[str]]:
    return [[r.id for r in store.query_dense(DOCS, ASPECT, q, 10)] for q in QUERIES]


def _exact() -> list[list[str]]:
    """Brute-force top 10 by cosine (the vectors are unit length)."""
    return [[f"d{i}" for i in np.argsort(-(VECTORS @ q), kind="stable")[:10]] for q in QUERIES]


def _leftovers(store: EdgeStore) -> list[Path]:
    return list(store.root.glob(".*optimizing*"))


def test_the_store_answers_while_the_worker_optimizes_and_the_same_after(store) -> None:
    """GIVEN an optimize running in a worker process (paused, so it certainly runs) WHEN the
    store is searched THEN it answers the exact top 10; AND after the optimized copy is
    swapped in it answers the same, the copy is gone and every point is there."""
    job = ShardOptimizer(store, DOCS)
    job.start()
    assert job.pid is not None and job.pid != os.getpid()
    os.kill(job.pid, signal.SIGSTOP)
    try:
        assert job.wait(0.2) is None  # still running
        during = _answers(store)
    finally:
        os.kill(job.pid, signal.SIGCONT)
    result = job.wait()
    assert result is not None and result.swapped, result
    assert result.points == N and result.reason == ""
    assert during == _exact()
    assert _answers(store) == during
    assert store.count(DOCS) == N
    assert _leftovers(store) == []


def test_a_killed_worker_leaves_the_unoptimized_shard_answering(store) -> None:
    """GIVEN an optimize worker WHEN it is killed (SIGKILL) THEN the result says it failed and
    nothing was swapped, its copy is deleted, and the store answers as before, and takes
    writes."""
    before = _answers(store)
    job = ShardOptimizer(store, DOCS)
    job.start()
    assert job.pid is not None
    os.kill(job.pid, signal.SIGKILL)
    result = job.wait()
    assert result is not None and not result.swapped
    assert "failed" in result.reason and "signal 9" in result.reason
    assert _leftovers(store) == []
    assert _answers(store) == before == _exact()
    store.upsert(
        DOCS, [PointWrite("new", {a: [1.0] + [0.0] * 7 for a in DOCS.aspect_names}, {"id": "new"})]
    )
    assert store.count(DOCS) == N + 1


def test_a_write_during_the_optimize_discards_the_stale_copy(store) -> None:
    """GIVEN an optimize running WHEN the shard takes a write meanwhile THEN the optimized copy
    (without that write) is not swapped in, the reason says why, and the write is kept."""
    job = ShardOptimizer(store, DOCS)
    job.start()
    assert job.pid is not None
    os.kill(job.pid, signal.SIGSTOP)
    try:
        store.delete(DOCS, ["d0"])
    finally:
        os.kill(job.pid, signal.SIGCONT)
    result = job.wait()
    assert result is not None and not result.swapped
    assert "written while it was optimized" in result.reason
    assert store.count(DOCS) == N - 1
    assert _leftovers(store) == []


def test_the_optimized_shard_survives_close_and_reopen(store, tmp_path: Path) -> None:
    """GIVEN an optimize swapped in through EdgeMaintenance, with a progress callback WHEN the
    store is closed and opened again THEN it holds every point and answers the same."""
    ticks: list[float] = []
    result = EdgeMaintenance(store).optimize(DOCS, on_tick=ticks.append)
    assert result.swapped
    assert all(t >= 0 for t in ticks)
    store.close()
    again = EdgeStore(Settings(), root=tmp_path / "edge")
    try:
        assert again.count(DOCS) == N
        assert _answers(again) == _exact()
    finally:
        again.close()


def test_needs_optimize_counts_points_and_unindexed_vectors(store) -> None:
    """A shard with fewer points outside an HNSW index than the threshold is left alone; a
    fresh ingest over it (none indexed) needs an optimize; a missing shard does not; an
    optimized shard does not until it changes."""
    m = EdgeMaintenance(store)
    assert not m.needs_optimize(DOCS, min_points=N + 1)
    assert m.needs_optimize(DOCS, min_points=N)
    assert not m.needs_optimize(load_schema("tools"), min_points=1)
    # AND once optimized (these small segments stay unindexed: under Edge's threshold), it
    # is not optimized again until the shard changes
    assert m.optimize(DOCS).swapped
    assert not m.needs_optimize(DOCS, min_points=N)
    store.delete(DOCS, ["d0"])
    assert m.needs_optimize(DOCS, min_points=N - 1)
