"""The local runner: the search state machine's graph, run in-process.

It calls the same steps (:data:`agentic_search.pipeline.steps.STATES`) in the same order as
``statemachine/search.asl.json``, with the same Catch routes (see docs/state-machine.md):

* CacheCheck fails -> a miss (``cacheError``);
* ExtractIntent / PlanQuery fail -> ExtractIntentRules / PlanQueryRules (the same steps with the
  error set); a second failure fails the search (:class:`SearchFailed`);
* a Retrieve fails -> that sub-query's result carries the error, the others go on (the Map's
  ``RetrieveFailed`` state);
* PrepareRound / FuseRerank / GradeRound fail -> Finalize answers from the state as it was
  before the failed step (a Catch keeps the step's input), listing the error;
* CacheStore fails -> the answer is returned anyway.

The Map runs the round's sub-queries in a thread pool of ``map_max_concurrency`` workers, or one
after the other when every adapter runs in this process (the embedded defaults: see
:func:`~agentic_search.pipeline.source_pool.runs_in_process`).
"""

from __future__ import annotations

import concurrent.futures as cf
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from agentic_search.components import Components
from agentic_search.pipeline.retrieve import retrieve
from agentic_search.pipeline.source_pool import runs_in_process
from agentic_search.pipeline.steps import STATES, Step
from agentic_search.state import (
    RetrievedList,
    RetrieveEvent,
    RunConfig,
    SearchRequest,
    SearchState,
    SourceError,
    StepError,
    SubQuery,
)
from agentic_search.state.errors import SearchFailed


def _going_on(state: SearchState) -> bool:
    """The Choice states' test: ``executor.continueSearch``."""
    return state.executor is not None and state.executor.continue_search


def _error(exc: BaseException) -> StepError:
    return StepError(Error=type(exc).__name__, Cause=str(exc)[:1000])


@dataclass
class RunResult:
    """The final state and the states visited, in order."""

    state: SearchState
    trace: list[str] = field(default_factory=list)


class LocalRunner:
    """Runs the search graph in-process; ``components`` gives a domain's components.

    Raises (from ``components``):
        ValueError: for a domain that has no schema.
    """

    def __init__(
        self, components: Callable[[str], Components], map_max_concurrency: int = 8
    ) -> None:
        self.components = components
        self.map_max_concurrency = map_max_concurrency
        self._pool: cf.ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def close(self) -> None:
        """Stop the Map's worker threads."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def run(self, request: SearchRequest) -> RunResult:
        """Run the graph for ``request``; the response is ``result.state.response``.

        Raises:
            SearchFailed: when intent, plan or finalize fail on their fallback paths too.
        """
        cfg = RunConfig(map_max_concurrency=self.map_max_concurrency)
        state = SearchState(request=request, config=cfg)
        trace: list[str] = []
        c = self.components(request.domain)

        try:
            trace.append("CacheCheck")
            state = STATES["CacheCheck"](state, c)
        except Exception as exc:
            state.cache_error = _error(exc)
        if not (state.cache is not None and state.cache.hit):
            state = self._with_fallback(state, c, trace, "ExtractIntent", "intent_error")
            state = self._with_fallback(state, c, trace, "PlanQuery", "plan_error")
            state = self._rounds(state, c, trace)
        try:
            trace.append("Finalize")
            state = STATES["Finalize"](state, c)
        except Exception as exc:
            trace.append("SearchFailed")
            raise SearchFailed(type(exc).__name__, str(exc)) from exc
        try:
            trace.append("CacheStore")
            state = STATES["CacheStore"](state, c)
        except Exception:
            trace.append("CacheStoreFailed")
        trace.append("Respond")
        return RunResult(state, trace)

    @staticmethod
    def _caught(
        state: SearchState, c: Components, trace: list[str], name: str, error_field: str
    ) -> tuple[SearchState, bool]:
        """Run one catchable state: on failure, the state as it was before the step (what a
        Catch hands on) with the error at ``error_field``; the flag says whether it failed."""
        # The step's input as JSON (a deep copy, much faster than model_copy(deep=True) on a
        # state with evidence and hits), parsed back only when the step fails: parsing was
        # two thirds of the snapshot's cost, paid before every step.
        snapshot = state.model_dump_json(by_alias=True)
        trace.append(name)
        step: Step = STATES[name]
        try:
            return step(state, c), False
        except Exception as exc:
            restored = SearchState.model_validate_json(snapshot)
            setattr(restored, error_field, _error(exc))
            return restored, True

    def _with_fallback(
        self, state: SearchState, c: Components, trace: list[str], name: str, error_field: str
    ) -> SearchState:
        state, failed = self._caught(state, c, trace, name, error_field)
        if not failed:
            return state
        trace.append(f"{name}Rules")
        try:
            return STATES[f"{name}Rules"](state, c)
        except Exception as exc:
            trace.append("SearchFailed")
            raise SearchFailed(type(exc).__name__, str(exc)) from exc

    def _rounds(self, state: SearchState, c: Components, trace: list[str]) -> SearchState:
        while True:
            state, failed = self._caught(state, c, trace, "PrepareRound", "round_error")
            if failed or state.round is None or not _going_on(state):
                return state
            trace.append("RetrieveAll")
            state.round.results = self._map(c, state.request.domain, state.round.sub_queries)
            state, failed = self._caught(state, c, trace, "FuseRerank", "fuse_error")
            if failed:
                return state
            state, failed = self._caught(state, c, trace, "GradeRound", "grade_error")
            if failed or not _going_on(state):
                return state

    def _map(self, c: Components, domain: str, subs: list[SubQuery]) -> list[RetrievedList]:
        """The Map state: one Retrieve per sub-query, bounded concurrency, results in order;
        a failing Retrieve becomes an error result (the ``RetrieveFailed`` state). When every
        adapter runs in this process (:func:`_all_in_process`), the items run one after the
        other in the calling thread: threads would only hand the GIL over."""

        def one(sub: SubQuery) -> RetrievedList:
            try:
                return retrieve(RetrieveEvent(domain=domain, sub_query=sub), c)
            except Exception as exc:
                err = SourceError(source=sub.name, error=type(exc).__name__, message=str(exc))
                return RetrievedList(name=sub.name, error=err)

        if len(subs) <= 1 or _all_in_process(c):
            return [one(s) for s in subs]
        with self._pool_lock:
            if self._pool is None:
                self._pool = cf.ThreadPoolExecutor(
                    max_workers=self.map_max_concurrency, thread_name_prefix="map"
                )
            pool = self._pool
        return list(pool.map(one, subs))


def _all_in_process(c: Components) -> bool:
    """Whether the store, keyword index, structured store and embedder of ``c`` all run in
    this process (:func:`~agentic_search.pipeline.source_pool.runs_in_process`: Qdrant Edge
    and the local
    model, the embedded defaults)."""
    return all(runs_in_process(a) for a in (c.store, c.keyword, c.structured, c.embedder))


__all__ = ["LocalRunner", "RunResult", "SearchFailed"]
