"""The local runner: the search state machine's ASL, interpreted in this process.

There is one description of the search graph, ``statemachine/search.asl.json`` (in this
package; Step Functions deploys the same file). :class:`LocalRunner` runs it with
:func:`agentic_search.pipeline.asl.interpret`: each Task runs the step registered for its function
(:data:`agentic_search.pipeline.steps.FUNCTIONS`), each Choice, Map, Pass and Catch does what
the ASL says, so the same states run in the same order with the same Catch routes as in AWS
(docs/state-machine.md):

* CacheCheck fails -> a miss (``cacheError``);
* ExtractIntent / PlanQuery fail -> ExtractIntentRules / PlanQueryRules (the same functions with
  the error set); a second failure fails the search (:class:`SearchFailed`);
* a Retrieve fails -> that sub-query's result carries the error (the Map's ``RetrieveFailed``
  Pass state), the others go on;
* PrepareRound / FuseRerank / GradeRound fail -> Finalize answers from the state as it was
  before the failed step (a Catch hands on the step's input), listing the error;
* CacheStore fails -> the answer is returned anyway.

By default the states pass the steps' own objects (a :class:`SearchState`, no JSON between
states, for speed); a Task whose Catch hands its input on keeps a JSON copy of that input to
restore when it fails (the response, which no step changes but for its top-level cache
note, the executor state's :data:`SHARED` collections and the round's sub-queries and Map's
results, whose items no step changes in place, by shallow copies). ``wire=True`` makes every
Task's input and output cross JSON, exactly what the Lambda functions receive and return.
:class:`RunOptions` start the run at a given state (what warm-up and tests do with a plan in
hand: :func:`from_plan`) or switch the result cache off (its functions pass their input
through).

The Map runs the round's sub-queries in a thread pool of ``map_max_concurrency`` workers, or one
after the other when every adapter runs in this process (the embedded defaults: see
:func:`~agentic_search.pipeline.source_pool.runs_in_process`).
"""

from __future__ import annotations

import concurrent.futures as cf
import copy
import json
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentic_search.dependencies import Dependencies
from agentic_search.pipeline import asl
from agentic_search.pipeline.plan_query import start_executor
from agentic_search.pipeline.source_pool import runs_in_process
from agentic_search.pipeline.steps import FUNCTIONS, call_function, search_definition
from agentic_search.wire import (
    CacheInfo,
    Caller,
    ExecutorCaps,
    IntentState,
    QueryPlan,
    RetrieveEvent,
    RunConfig,
    SearchRequest,
    SearchState,
)
from agentic_search.wire.errors import SearchFailed

#: The Choice after CacheCheck (a hit goes to Finalize): where a run starts whose request
#: the cache was already asked about (``LocalRunner.run(checked=...)``).
AFTER_CACHE_CHECK = "CacheHit"

#: The result cache's functions (``RunOptions(cache=False)`` passes their input through).
CACHE_FUNCTIONS = frozenset({"CacheCheckFunction", "CacheStoreFunction"})

#: The executor state's collections a Task's kept input holds by shallow copies, not as JSON:
#: no step changes their items in place, only the collections (the evidence pool is replaced,
#: a round's pruned results, rankings and relevances are appended or added; an evidence taken
#: again is a ``model_copy``; a fused entry is never changed; the coverage targets are set
#: when the executor starts and only read after), so a copy of the collection is the
#: collection as it was.
SHARED = (
    "pool",
    "first_fused",
    "retrieved",
    "round_rankings",
    "relevance",
    "word_relevance",
    "targets",
)


@dataclass(frozen=True)
class RunOptions:
    """How one run of the ASL goes.

    ``start_at``: the ASL state to start from (default the ASL's ``StartAt``, CacheCheck);
    ``cache``: False passes the result cache's functions' input through (no lookup, nothing
    stored).
    """

    start_at: str | None = None
    cache: bool = True


@dataclass
class RunResult:
    """The final state and the ASL states entered, in order (a Map's items in item order)."""

    state: SearchState
    trace: list[str] = field(default_factory=list)


class LocalRunner:
    """Interprets the search ASL in-process; ``deps`` gives a domain's dependencies; ``wire``:
    every Task's input and output cross JSON, as in Lambda.

    Raises (from ``deps``):
        ValueError: for a domain that has no schema.
    """

    def __init__(
        self,
        deps: Callable[[str], Dependencies],
        map_max_concurrency: int = 8,
        *,
        wire: bool = False,
    ) -> None:
        self.deps = deps
        self.map_max_concurrency = map_max_concurrency
        self.wire = wire
        self._pool: cf.ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def close(self) -> None:
        """Stop the Map's worker threads."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def run(
        self,
        request: SearchRequest,
        options: RunOptions | None = None,
        correlation_id: str | None = None,
        checked: CacheInfo | None = None,
        caller: Caller | None = None,
    ) -> RunResult:
        """Run the graph for ``request`` asked by ``caller`` (its verified principals; None:
        anonymous, public records only); the response is ``result.state.response``.
        ``correlation_id`` (a fresh one by default) is the state's ``correlationId``, which
        the Map hands each Retrieve as the orchestrator in AWS does. ``checked``: the result
        cache was already looked up for ``request`` and missed (what CacheCheck would have
        noted): the run starts at the Choice after CacheCheck, not asking the cache again.

        Raises:
            SearchFailed: when the run reaches the SearchFailed state (intent, plan or
                finalize failed on their fallback paths too).
        """
        cfg = RunConfig(map_max_concurrency=self.map_max_concurrency)
        cid = correlation_id or uuid.uuid4().hex
        state = SearchState(
            request=request, config=cfg, correlation_id=cid, caller=caller or Caller()
        )
        if checked is not None and (options is None or options.start_at is None):
            state.cache = checked
            options = RunOptions(start_at=AFTER_CACHE_CHECK, cache=(options or RunOptions()).cache)
        return self.run_asl(state, options)

    def run_asl(self, state: SearchState, options: RunOptions | None = None) -> RunResult:
        """Interpret the ASL from ``state`` (see :class:`RunOptions`).

        Raises:
            SearchFailed: as :meth:`run`.
        """
        opts = options or RunOptions()
        if state.correlation_id is None:
            state.correlation_id = uuid.uuid4().hex
        tasks = _Tasks(self, self.deps(state.request.domain), opts)
        data: Any = state.wire() if self.wire else state
        tasks.last = data
        try:
            done = asl.interpret(search_definition(), data, tasks, start_at=opts.start_at)
        except asl.ExecutionFailed as exc:
            raise SearchFailed(exc.error, exc.cause) from exc
        except asl.ASLError as exc:
            raise SearchFailed("States.Runtime", str(exc)) from exc
        final = tasks.last
        if not isinstance(final, SearchState):
            final = SearchState.model_validate(final)
        return RunResult(final, done.trace)

    def _map(self, deps: Dependencies, run: Callable[[Any], Any], items: Sequence[Any]) -> list:
        """The Map's items: in this thread when every adapter runs in this process
        (:func:`_all_in_process`: threads would only hand the GIL over), else on the pool."""
        if len(items) <= 1 or _all_in_process(deps):
            return [run(i) for i in items]
        with self._pool_lock:
            if self._pool is None:
                self._pool = cf.ThreadPoolExecutor(
                    max_workers=self.map_max_concurrency, thread_name_prefix="map"
                )
            pool = self._pool
        return list(pool.map(run, items))


class _Tasks:
    """The interpreter's Task adapter (:class:`agentic_search.pipeline.asl.Tasks`): a function name
    -> its step on this domain's dependencies; ``last`` is the last search state seen."""

    def __init__(self, runner: LocalRunner, deps: Dependencies, options: RunOptions) -> None:
        self.runner = runner
        self.deps = deps
        self.options = options
        self.last: Any = None

    def call(self, function: str, payload: Any) -> Any:
        if function in CACHE_FUNCTIONS and not self.options.cache:
            return payload
        if self.runner.wire:
            out = call_function(function, json.loads(json.dumps(payload)), lambda _: self.deps)
        elif function == "RetrieveFunction":
            out = FUNCTIONS[function](RetrieveEvent.model_validate(payload), self.deps)
        else:
            out = FUNCTIONS[function](payload, self.deps)
        if function != "RetrieveFunction":
            self.last = out
        return out

    def keep(self, data: Any) -> Any:
        if isinstance(data, SearchState):
            # The response (CacheStore's input: 100 candidates with provenance, most of the
            # state's JSON) is kept by a shallow copy: no step changes it but for its
            # top-level ``cache`` note, which the copy keeps as it was. So are the executor
            # state's SHARED collections (the rest of its JSON, 85% of it after a round).
            response = dict(data.response) if data.response is not None else None
            ex, rnd = data.executor, data.round
            shared = {name: copy.copy(getattr(ex, name)) for name in SHARED} if ex else {}
            exclude: dict[str, Any] = {"response": True}
            if ex is not None:
                exclude["executor"] = set(SHARED)
            # FuseRerank's input: the Map's results (every hit of every source, 60% of what
            # was still serialized), each kept by a shallow copy (a step replaces a result's
            # fields, never changes its hits); the round's sub-queries (what PrepareRound
            # made for the Map, never changed after) by a copy of the list
            results = [r.model_copy() for r in rnd.results] if rnd is not None else None
            subs = list(rnd.sub_queries) if rnd is not None else None
            if rnd is not None:
                exclude["round"] = {"results", "sub_queries"}
            text = data.model_dump_json(by_alias=True, exclude=exclude)
            return text, response, data._built, shared, results, subs
        return dict(data) if isinstance(data, dict) and not self.runner.wire else data

    def restore(self, kept: Any) -> Any:
        if isinstance(kept, tuple):
            text, response, built, shared, results, subs = kept
            kept = SearchState.model_validate_json(text)
            kept.response = response
            kept._built = built
            for name, value in shared.items():
                setattr(kept.executor, name, value)
            if results is not None:
                kept.round.results = results
                kept.round.sub_queries = subs
        if isinstance(kept, SearchState) or "request" in kept:
            self.last = kept
        return kept

    def map(self, run: Callable[[Any], Any], items: Sequence[Any], concurrency: int) -> list:
        return self.runner._map(self.deps, run, list(items))


def from_plan(
    deps: Dependencies, plan: QueryPlan, intent: IntentState, caps: ExecutorCaps | None = None
) -> SearchState:
    """The state PlanQuery leaves for ``plan`` and ``intent`` (the executor's gate passed),
    to run from ``RunOptions(start_at="PrepareRound")``: what warm-up and the tests of the
    executor's rounds run.

    Raises:
        PlanError: when the plan is invalid.
    """
    request = SearchRequest(query=intent.query, limit=plan.limit, domain=deps.schema.name)
    return SearchState(
        request=request, intent=intent, executor=start_executor(deps, plan, intent, caps)
    )


def _all_in_process(deps: Dependencies) -> bool:
    """Whether the store, keyword index, structured store and embedder of ``deps`` all run in
    this process (:func:`~agentic_search.pipeline.source_pool.runs_in_process`: Qdrant Edge
    and the local
    model, the embedded defaults)."""
    return all(
        runs_in_process(a) for a in (deps.store, deps.keyword, deps.structured, deps.embedder)
    )


__all__ = [
    "AFTER_CACHE_CHECK",
    "CACHE_FUNCTIONS",
    "LocalRunner",
    "RunOptions",
    "RunResult",
    "SearchFailed",
    "from_plan",
]
