"""One writer per Edge shard: a second writer gets a clear error naming the holder, and a
writer killed with SIGKILL loses nothing it had written (the WAL is replayed on open)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentic_search.adapters.edge.store import EdgeStore
from agentic_search.config import Settings
from agentic_search.logic.schema import load_schema
from agentic_search.ports import VectorStoreError
from agentic_search.wire import PointWrite

DOCS = load_schema("documents")

# A writer in another process: opens the store, writes ``n`` points (no flush, no close),
# says "ready" and waits to be killed.
WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from agentic_search.adapters.edge.store import EdgeStore
    from agentic_search.config import Settings
    from agentic_search.logic.schema import load_schema
    from agentic_search.wire import PointWrite

    schema = load_schema("documents")
    store = EdgeStore(Settings(), root=Path(sys.argv[1]))
    store.ensure_collection(schema, dim=2)
    n = int(sys.argv[2])
    for i in range(0, n, 50):
        store.upsert(schema, [
            PointWrite(f"d{j}", {a: [1.0, float(j)] for a in schema.aspect_names}, {"id": f"d{j}"})
            for j in range(i, min(n, i + 50))
        ])
    print("ready", flush=True)
    time.sleep(120)
    """
)


def _points(n: int) -> list[PointWrite]:
    return [
        PointWrite(f"d{i}", {a: [1.0, float(i)] for a in DOCS.aspect_names}, {"id": f"d{i}"})
        for i in range(n)
    ]


def test_a_second_store_in_the_same_process_is_refused(tmp_path: Path) -> None:
    """GIVEN a store holding a shard WHEN a second store opens the same shard THEN it gets a
    one-line VectorStoreError naming the shard and this process's pid; once the first closes,
    the second opens it and sees every write."""
    first = EdgeStore(Settings(), root=tmp_path)
    first.ensure_collection(DOCS, dim=2)
    first.upsert(DOCS, _points(10))
    second = EdgeStore(Settings(), root=tmp_path)
    with pytest.raises(VectorStoreError) as err:
        second.upsert(DOCS, _points(3))
    message = str(err.value)
    assert "\n" not in message
    assert f"pid {os.getpid()}" in message and str(tmp_path / DOCS.name) in message
    assert first.count(DOCS) == 10  # the first writer is unharmed
    first.close()
    assert second.count(DOCS) == 10
    second.close()


@pytest.fixture()
def killed_writer(tmp_path: Path):
    """A writer process that wrote 500 points, holds the shard, and is waiting."""
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(tmp_path), "500"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.strip() == "ready", proc.stderr.read() if proc.stderr else ""
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


def test_a_second_process_gets_the_holders_pid_and_sigkill_loses_nothing(
    tmp_path: Path, killed_writer: subprocess.Popen
) -> None:
    """GIVEN another process writing the shard WHEN this one opens it THEN the error names
    that process's pid; AFTER it is killed with SIGKILL (no flush, no close) the shard opens
    here with all 500 points it had written."""
    store = EdgeStore(Settings(), root=tmp_path)
    with pytest.raises(VectorStoreError, match=rf"pid {killed_writer.pid}\b"):
        store.count(DOCS)
    killed_writer.send_signal(signal.SIGKILL)
    killed_writer.wait(timeout=30)
    assert store.count(DOCS) == 500
    got = store.retrieve_records(DOCS, ["d0", "d499"], with_vectors=True)
    assert set(got) == {"d0", "d499"}
    store.close()
