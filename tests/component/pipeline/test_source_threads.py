"""Where a search's sources run (the bundled catalog on Qdrant Edge and the local model).

On the embedded defaults every source and the Map's items run in the calling thread (an Edge
query holds the GIL: a thread only hands it over); a source on a remote system runs on the
shared source threads under its deadline, and a source that misses it retires that pool.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from agentic_search.pipeline import runner as runner_module
from agentic_search.pipeline.runner import LocalRunner
from agentic_search.pipeline.source_pool import SOURCES, SourcePool
from agentic_search.pipeline.sources import run_sources
from agentic_search.service import SearchService
from agentic_search.wire import QueryPlan, SearchRequest, VectorSource


class Recording:
    """The real store, recording the thread each dense query ran on; ``in_process`` says
    what the store claims to be; with ``stall`` each dense query waits until ``release`` is
    set (a server that stopped answering; at most 60 s) and counts itself in ``finished``."""

    def __init__(self, inner: Any, in_process: bool, stall: bool = False) -> None:
        self._inner = inner
        self.in_process = in_process
        self.stall = stall
        self.release = threading.Event()
        self.finished = 0
        self.threads: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def query_dense(self, *args: Any, **kwargs: Any) -> Any:
        self.threads.append(threading.current_thread().name)
        if self.stall:
            self.release.wait(60.0)
        try:
            return self._inner.query_dense(*args, **kwargs)
        finally:
            self.finished += 1


def _plan(*aspects: str) -> QueryPlan:
    return QueryPlan(
        domain="tools",
        strategy="capability-focused",
        vector_sources=[
            VectorSource(aspect=a, top_k=20, text="self-hosted vector database") for a in aspects
        ],
        fusion="rrf",
    )


def test_edge_sources_run_in_the_calling_thread_a_server_on_the_source_threads(
    tools_engine: SearchService,
):
    c = tools_engine.deps
    plan = _plan("identity", "functionality")
    # GIVEN the same Edge store, once as itself and once claiming to be a remote server
    edge = Recording(c.store, in_process=True)
    remote = Recording(c.store, in_process=False)
    # WHEN one plan runs against each
    got_edge, _ = run_sources(c.derive(store=edge), plan)
    got_remote, _ = run_sources(c.derive(store=remote), plan)
    # THEN Edge's queries ran here, the server's on the source threads, with the same answer
    assert edge.threads == [threading.current_thread().name] * 2
    assert len(remote.threads) == 2 and all(t.startswith("source") for t in remote.threads)
    assert [[h.id for h in r.hits] for r in got_edge] == [
        [h.id for h in r.hits] for r in got_remote
    ]
    assert all(r.error is None and r.hits for r in got_edge)


def test_the_map_runs_in_the_calling_thread_only_when_every_adapter_is_in_process(
    tools_engine: SearchService,
):
    c = tools_engine.deps
    request = SearchRequest(query="open source vector database I can self-host", limit=5)
    # GIVEN the embedded defaults, and the same with a store claiming to be remote
    assert runner_module._all_in_process(c)
    for in_process, expect_here in ((True, True), (False, False)):
        store = Recording(c.store, in_process=in_process)
        derived = c.derive(store=store)
        assert runner_module._all_in_process(derived) is in_process
        runner = LocalRunner(lambda _, d=derived: d)
        try:
            # WHEN a search runs (several sub-queries in round 1)
            result = runner.run(request)
        finally:
            runner.close()
        # THEN its dense queries ran in this thread, or on the Map's and source threads
        assert result.state.response is not None and result.state.response["candidates"]
        assert len(store.threads) >= 2
        here = {t == threading.current_thread().name for t in store.threads}
        assert here == {expect_here}, store.threads


def test_a_source_past_its_deadline_retires_the_shared_pool(tools_engine: SearchService):
    c = tools_engine.deps
    # GIVEN a remote store whose dense queries do not answer (until the test lets them) and
    # a 0.05 s source deadline
    settings = c.settings.model_copy(update={"source_timeout_s": 0.05})
    slow = Recording(c.store, in_process=False, stall=True)
    derived = c.derive(store=slow)
    derived.settings = settings
    before = SOURCES.executor()
    try:
        # WHEN a plan runs
        [res], _ = run_sources(derived, _plan("identity"))
        # THEN it answered with a SourceTimeout while the query was still waiting (the
        # search did not wait for it), and later calls get a new pool (the abandoned query
        # still holds a thread of the old one)
        assert slow.threads and slow.finished == 0
        assert res.error is not None and res.error.error == "SourceTimeout"
        assert SOURCES.executor() is not before
    finally:
        slow.release.set()


def test_a_discarded_pool_lets_its_running_task_finish():
    pool = SourcePool(max_threads=2)
    first = pool.executor()
    done = threading.Event()
    fut = first.submit(lambda: (time.sleep(0.1), done.set()))
    pool.discard(first)
    assert pool.executor() is not first
    fut.result(timeout=60)
    assert done.is_set()
