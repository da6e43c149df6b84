"""The process's worker threads for sources: every sub-query's sources run on one shared pool.

A pool made and shut down per sub-query started a thread per source every time (about five
per search, each start a hand-over of the GIL): measured in a ``serve`` worker, starting and
joining them cost as much CPU as the Qdrant Edge queries they ran. The shared pool keeps its
threads (made on demand, up to :data:`MAX_THREADS`; idle ones are reused).

What a per-call pool gave is kept:

- each call still runs at most ``max_parallel_sources`` of its sources at once (a semaphore
  per call, :func:`bounded`): a bound on the load one search puts on a remote system;
- a source that misses its deadline is abandoned, not waited for: its thread keeps running,
  so the caller :meth:`SourcePool.discard` s the pool and later calls get a new one (a hung
  remote call never takes a shared thread from the requests after it).
"""

from __future__ import annotations

import concurrent.futures as cf
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: Threads the shared pool may hold (made only when none is idle): enough that calls running
#: side by side (the Map's sub-queries, a threaded server's requests) rarely queue.
MAX_THREADS = 64


class SourcePool:
    """A process-wide :class:`~concurrent.futures.ThreadPoolExecutor` that is replaced, not
    shut down, when one of its tasks is abandoned. Thread-safe."""

    def __init__(self, max_threads: int = MAX_THREADS) -> None:
        self.max_threads = max_threads
        self._lock = threading.Lock()
        self._pool: cf.ThreadPoolExecutor | None = None

    def executor(self) -> cf.ThreadPoolExecutor:
        """The current pool (made on first use)."""
        with self._lock:
            if self._pool is None:
                self._pool = cf.ThreadPoolExecutor(self.max_threads, thread_name_prefix="source")
            return self._pool

    def discard(self, pool: cf.ThreadPoolExecutor) -> None:
        """Stop handing out ``pool`` (a task of it missed its deadline and still runs): its
        threads end when their tasks do; the next :meth:`executor` call makes a new pool."""
        with self._lock:
            if self._pool is pool:
                self._pool = None
        pool.shutdown(wait=False)


#: The pool :func:`~agentic_search.pipeline.sources.run_sources` uses.
SOURCES = SourcePool()


def bounded(fn: Callable[[], T], gate: threading.Semaphore) -> Callable[[], T]:
    """``fn`` run while holding ``gate`` (one of a call's ``max_parallel_sources`` slots)."""

    def run() -> T:
        with gate:
            return fn()

    return run


def runs_in_process(adapter: object) -> bool:
    """Whether ``adapter``'s calls are work in this process rather than waits on a network:
    its class sets ``in_process = True`` (the Qdrant Edge adapters, the local ONNX embedder).
    Threads only overlap waits: an Edge query holds the GIL (a thread gives it no
    parallelism, only GIL hand-overs, measured in a ``serve`` worker at as much CPU as the
    queries themselves, and no deadline either: a stuck call holding the GIL stops every
    thread); a query embedding releases it but is a few ms on one core (cold searches were
    no slower in one thread). So sources on such adapters run in the calling thread
    (:func:`~agentic_search.pipeline.sources.run_sources`), and so does the local runner's
    Map when every adapter is. Default False: a remote system (a Qdrant server, MongoDB, an
    HTTP API)."""
    return getattr(adapter, "in_process", False) is True


__all__ = ["MAX_THREADS", "SOURCES", "SourcePool", "bounded", "runs_in_process"]
