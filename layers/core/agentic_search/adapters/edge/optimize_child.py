"""The optimize worker (``python -m agentic_search.adapters.edge.optimize_child <shard copy>
<parent pid>``, started by :class:`~agentic_search.adapters.edge.optimize.ShardOptimizer`):
load the copy, ``optimize()``, flush, close, and print the result as one JSON line."""

from __future__ import annotations

import json
import os
import signal
import sys
import time

#: Niceness of the optimize worker: requests served meanwhile come first.
WORKER_NICE = 10


def _die_with_parent(parent: int) -> None:
    """Linux: be killed when the parent dies (``PR_SET_PDEATHSIG``), so that a killed writer
    leaves no optimize running on a copy nobody will swap in."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass
    if os.getppid() != parent:
        sys.exit(3)


def main(argv: list[str]) -> int:
    """The child: load the copy ``argv[0]``, optimize, flush, close; print the result as one
    JSON line (``optimized``, ``points``, ``indexed_vectors``, ``seconds``)."""
    import qdrant_edge as qe

    _die_with_parent(int(argv[1]))
    os.nice(WORKER_NICE)
    started = time.monotonic()
    shard = qe.EdgeShard.load(argv[0])
    optimized = bool(shard.optimize())
    info = shard.info()
    shard.flush()
    shard.close()
    report = {
        "optimized": optimized,
        "points": info.points_count,
        "indexed_vectors": info.indexed_vectors_count,
        "seconds": round(time.monotonic() - started, 3),
    }
    sys.stdout.write(json.dumps(report) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
