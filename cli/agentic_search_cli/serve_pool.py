"""The worker processes of ``agentic-search serve --workers N``: concurrent searches on N cores.

Qdrant Edge holds the GIL during a query, and most of a search is Python (intent, planning,
fusion, evidence, JSON), so threads of one process serve one search at a time. The pool runs
the deployed handler in N spawned processes (:class:`concurrent.futures.ProcessPoolExecutor`):
the HTTP server (:mod:`~agentic_search_cli.local_server`) turns each request into its API
Gateway event and hands it to a free worker, which answers the event as Lambda would.

The store: the serving process stays the one writer (it holds the shard locks). An Edge shard
directory can be open in one process only (:mod:`agentic_search.adapters.edge.replica`), so the
server copies its shards (flushed, writes held off) once per worker, and each worker opens its
own copy: readers never open the writer's directory, so they cannot break its flush. A Qdrant
server (``QDRANT_URL``) needs no copy. Workers ignore SIGINT (the server decides when to stop),
die with the server (Linux), and delete their copy when they exit; the server deletes what is
left of the run dir.

A worker that dies fails the requests it held (500) and the pool is made anew for the next
requests.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import shutil
import signal
import threading
import warnings
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

#: Seconds the server waits for the workers to start (import, copy, model load) before failing.
START_TIMEOUT_S = 180.0


class WorkerPool:
    """``workers`` processes answering API Gateway events with the deployed handler over
    ``settings``; with ``make_copy`` (a new copy of the Edge shards, as a folder, per call),
    each worker's ``QDRANT_EDGE_PATH`` is a copy of its own (``run_dir``, deleted by
    :meth:`close`, is where the copies are). :meth:`start` waits until every worker is
    ready."""

    def __init__(
        self,
        workers: int,
        settings: Any,
        make_copy: Callable[[], Path] | None = None,
        run_dir: Path | None = None,
    ) -> None:
        self.workers = workers
        self.settings = settings
        self.make_copy = make_copy
        self.run_dir = run_dir
        self._ctx = multiprocessing.get_context("spawn")
        self._lock = threading.Lock()
        self._executor: ProcessPoolExecutor | None = None
        # Workers are spawned by this one long-lived thread: a worker's PR_SET_PDEATHSIG
        # fires when the *thread* that spawned it exits, and a request's thread is short-lived
        self._keeper = ThreadPoolExecutor(1, thread_name_prefix="serve-pool")

    def _new_executor(self) -> ProcessPoolExecutor:
        """A pool whose workers each take one of ``workers`` fresh copies from a queue."""
        copies = self._ctx.Queue()
        for _ in range(self.workers):
            copies.put(self.make_copy() if self.make_copy else None)
        return ProcessPoolExecutor(
            self.workers,
            mp_context=self._ctx,
            initializer=_init_worker,
            initargs=(self.settings, copies, os.getpid()),
        )

    def start(self) -> list[int]:
        """Start the workers and wait until each has its copy open and its model loaded;
        returns their pids.

        Raises:
            RuntimeError: when a worker fails to start (its reason) or they take longer than
                :data:`START_TIMEOUT_S`.
        """
        try:
            self._executor, pids = self._keeper.submit(self._started).result()
        except RuntimeError:
            self.close()
            raise
        return pids

    def refresh(self) -> list[int]:
        """Replace the workers by new ones, each on a new copy of the index (taken now: the
        writer's committed state), without failing a request: the old workers answer until
        the new ones are ready, then finish what they hold and exit. Returns the new pids.

        Raises:
            RuntimeError: when the new workers do not start (the old ones go on serving).
        """
        executor, pids = self._keeper.submit(self._started).result()
        with self._lock:
            old, self._executor = self._executor, executor
        if old is not None:
            # the requests it holds finish; a request that picked it just before the swap is
            # sent again to the new pool (handle)
            old.shutdown(wait=True)
        return pids

    def _started(self) -> tuple[ProcessPoolExecutor, list[int]]:
        """A new pool (:meth:`_new_executor`) whose workers have all started, and their pids.

        Raises:
            RuntimeError: when a worker fails to start (its reason) or they take longer than
                :data:`START_TIMEOUT_S` (the new pool is shut down).
        """
        executor = self._new_executor()
        manager = self._ctx.Manager() if self.workers > 1 else None
        barrier = manager.Barrier(self.workers) if manager is not None else None
        futures = [executor.submit(_ready, barrier) for _ in range(self.workers)]
        try:
            return executor, [f.result(timeout=START_TIMEOUT_S) for f in futures]
        except Exception as exc:
            executor.shutdown(wait=False, cancel_futures=True)
            raise RuntimeError(f"the serve workers did not start: {exc}") from exc
        finally:
            if manager is not None:
                manager.shutdown()

    def handle(self, event: dict[str, Any], request_id: str) -> dict[str, Any]:
        """The handler's answer to ``event``, computed by a free worker.

        Raises:
            BrokenProcessPool: when the worker died meanwhile (the pool is made anew).
        """
        while True:
            with self._lock:
                executor = self._executor
            assert executor is not None, "start() first"
            try:
                future = executor.submit(_handle, event, request_id)
            except BrokenProcessPool:
                self._renew(executor)
                raise
            except RuntimeError:  # shut down by a refresh since: the new pool answers
                with self._lock:
                    if self._executor is not executor:
                        continue
                raise
            break
        try:
            return future.result()
        except BrokenProcessPool:
            self._renew(executor)
            raise

    def _renew(self, broken: ProcessPoolExecutor) -> None:
        """Make a new pool in place of ``broken`` (the first to notice it does; the requests
        meanwhile wait for it)."""
        with self._lock:
            if self._executor is broken:
                with contextlib.suppress(RuntimeError):  # else the next request tries again
                    self._executor = self._keeper.submit(self._started).result()[0]

    def close(self) -> None:
        """Stop the workers (those in the middle of a request are not waited for: drain
        first); each deletes its copy, and ``run_dir`` (when given) is deleted."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
        self._keeper.shutdown(wait=False)
        if self.run_dir is not None:
            shutil.rmtree(self.run_dir, ignore_errors=True)


# ----- in the worker process --------------------------------------------------------------------


def _init_worker(settings: Any, copies: Any, parent: int) -> None:
    """A worker's start: ignore SIGINT, die with the server, take its own copy of the shards,
    build the runtime over it and warm the model up."""
    from multiprocessing import util

    from agentic_search.service import SearchService
    from agentic_search_lambda.observability import outside_lambda
    from agentic_search_lambda.runtime import Runtime, use

    outside_lambda()  # no Powertools metric JSON on serve's stdout
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent)
    warnings.filterwarnings("ignore", category=UserWarning)  # as main() does
    own = copies.get(timeout=START_TIMEOUT_S)
    if own is not None:
        settings = settings.model_copy(update={"qdrant_edge_path": own})
    rt = Runtime(settings)
    use(rt)
    SearchService(rt.deps("tools")).warm_up()
    util.Finalize(rt, _close_worker, args=(rt, own), exitpriority=10)


def _close_worker(rt: Any, own: Path | None) -> None:
    rt.deps.close()
    if own is not None:
        shutil.rmtree(own, ignore_errors=True)


def _ready(barrier: Any) -> int:
    """Answered once every worker has started (each holds the barrier until all have), so
    that each of the start-up calls lands on a different worker."""
    if barrier is not None:
        barrier.wait(timeout=START_TIMEOUT_S)
    return os.getpid()


def _handle(event: dict[str, Any], request_id: str) -> dict[str, Any]:
    from agentic_search_cli.local_events import answer_event

    return answer_event(event, request_id)


def _die_with_parent(parent: int) -> None:
    """Linux: SIGKILL when the server dies (``PR_SET_PDEATHSIG``)."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass
    if os.getppid() != parent:
        os._exit(3)


__all__ = ["START_TIMEOUT_S", "WorkerPool"]
