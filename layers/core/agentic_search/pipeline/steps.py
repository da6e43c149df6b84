"""The search's step functions: one per state of ``statemachine/search.asl.json``.

Each step takes the search state and returns it, updated (Retrieve takes and returns one
sub-query's result). The typed methods of :class:`SearchSteps` work on :class:`SearchState`
objects (what the local runner calls); :meth:`SearchSteps.invoke` is the JSON edge the Lambda
handlers call: a dict in (the Step Functions state), a JSON-able dict out. The contract, with
the state's shape and each Catch, is ``docs/state-machine.md``.

Nothing here knows about Lambda or Step Functions: a failed step is just an exception, and the
fields a Catch adds (``intentError``, ``fuseError``, ...) are plain inputs the next step reads.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from agentic_search.adapters.caches import CacheError, ResultCache, cache_key, plan_cache_key
from agentic_search.adapters.llm import Budget, LLMFallback, LLMIntentPlanner
from agentic_search.domain.planner import validate_plan
from agentic_search.engine import SearchEngine
from agentic_search.state import (
    CacheInfo,
    ExecutorCaps,
    ExecutorState,
    ExtractorInfo,
    IntentState,
    QueryPlan,
    RetrievedList,
    RetrieveEvent,
    RoundWork,
    RunConfig,
    SearchRequest,
    SearchResponse,
    SearchState,
    StepError,
    error_message,
)


def _ms(t: float) -> float:
    return round((time.perf_counter() - t) * 1000.0, 2)


class SearchSteps:
    """The step functions over the engines of the bundled domains.

    ``engines`` maps a domain name to its :class:`SearchEngine` (created on first use; the
    Lambda handlers keep it for the container's life). ``cache`` defaults to each engine's.
    """

    def __init__(
        self,
        engines: Callable[[str], SearchEngine],
        cache: ResultCache | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._engines = engines
        self._cache = cache
        self._clock = clock

    def engine(self, domain: str) -> SearchEngine:
        """The engine of ``domain``.

        Raises:
            ValueError: for an unknown domain.
        """
        return self._engines(domain)

    def cache_of(self, engine: SearchEngine) -> ResultCache:
        """The cache in use (the steps' own, else the engine's)."""
        return self._cache if self._cache is not None else engine.cache

    # ----- the states ------------------------------------------------------------------------

    def cache_check(self, state: SearchState) -> SearchState:
        """CacheCheck: look the request up; a hit puts the cached response in the state.
        A failing cache is a miss with ``cache.error`` set (never a failed search)."""
        req = state.request
        engine = self.engine(req.domain)
        info = CacheInfo()
        try:
            cache = self.cache_of(engine)
            info.backend = cache.name
            info.key = cache_key(
                req.query,
                limit=req.limit,
                rounds=req.rounds,
                domain=req.domain,
                schema_version=engine.schema.version,
                catalog_version=cache.catalog_version(req.domain),
            )
            hit = cache.get(info.key)
        except CacheError as exc:
            info.error = str(exc)
            hit = None
        if hit is not None:
            info.hit = True
            hit["cache"] = info.wire()
            state.response = hit
        state.cache = info
        return state

    def extract_intent(self, state: SearchState) -> SearchState:
        """ExtractIntent (and ExtractIntentRules after a failure).

        With an LLM configured, the plan cache is looked up first (a hit brings the intent and
        the plan, and no LLM call is made), then the LLM extractor runs; any
        :class:`~agentic_search.adapters.llm.LLMFallback` runs the rule-based extractor instead,
        with the reason recorded in ``state.extractor``. Without an LLM, or after a Catch
        (``intentError``), the rules run.

        Raises:
            ValueError: for an empty or over-long query.
        """
        t = time.perf_counter()
        req = state.request
        engine = self.engine(req.domain)
        llm = engine.llm if state.intent_error is None else None
        if state.intent_error is not None:
            reason = f"fallback after {state.intent_error.Error}: {state.intent_error.Cause}"
            info = ExtractorInfo(path="rules", reason=reason[:300])
        elif llm is None:
            why = "LLM off" if engine.settings.llm == "off" else "no LLM configured"
            info = ExtractorInfo(
                path="rules", reason=f"{why}: rule-based extractor over the schema vocabularies"
            )
        else:
            info = self._intent_by_llm(state, engine, llm)
        if info.path == "rules":
            state.intent = engine.extract(req.query)
        state.extractor = info
        state.stage_ms["intent"] = _ms(t)
        return state

    def _intent_by_llm(
        self, state: SearchState, engine: SearchEngine, llm: LLMIntentPlanner
    ) -> ExtractorInfo:
        """Plan cache lookup, then the LLM extractor; sets ``state.intent`` (and
        ``state.plan`` on a hit) and returns how the intent was made."""
        req = state.request
        cached = self._plan_cache_get(state, engine, llm)
        if cached is not None:
            state.intent, state.plan = cached
            key = state.plan_cache.key[:17] if state.plan_cache else ""
            return ExtractorInfo(path="cache", reason=f"plan cache hit ({key}...)")
        intent, info = self._ask_llm(
            state, llm, lambda budget: llm.extract(req.query, budget), "answer within the schema"
        )
        if intent is not None:
            state.intent = intent
        return info

    @staticmethod
    def _ask_llm(
        state: SearchState,
        llm: LLMIntentPlanner,
        call: Callable[[Budget], Any],
        success: str,
    ) -> tuple[Any, ExtractorInfo]:
        """Run one LLM step on what is left of the request's budget (``state.llm_ms`` carries
        it from step to step): its result and the path info, or None and the fallback's info."""
        budget = Budget(llm.settings.llm_budget_s, (state.llm_ms or 0.0) / 1000.0)
        result = None
        try:
            result = call(budget)
            info = ExtractorInfo(path="llm", reason=f"{llm.name}: {success}")
        except LLMFallback as exc:
            info = ExtractorInfo(
                path="rules",
                reason=f"LLM fallback ({exc.kind}): {exc.reason}"[:300],
                fallback=exc.kind,
                transient=exc.transient,
            )
        info.llm_ms = round((budget.spent_s * 1000.0) - (state.llm_ms or 0.0), 2)
        state.llm_ms = round(budget.spent_s * 1000.0, 2)
        return result, info

    def _plan_cache_get(
        self, state: SearchState, engine: SearchEngine, llm: LLMIntentPlanner
    ) -> tuple[IntentState, QueryPlan] | None:
        req = state.request
        info = CacheInfo()
        try:
            cache = self.cache_of(engine)
            info.backend = cache.name
            info.key = plan_cache_key(
                req.query,
                domain=req.domain,
                limit=req.limit,
                schema_version=engine.schema.version,
                catalog_version=cache.catalog_version(req.domain),
                planner=llm.name,
            )
            hit = cache.get(info.key)
            found = None
            if hit is not None:
                found = (
                    IntentState.model_validate(hit["intent"]),
                    QueryPlan.model_validate(hit["plan"]),
                )
                validate_plan(found[1], engine.schema)
        except CacheError as exc:
            info.error = str(exc)
            found = None
        except (ValueError, KeyError, TypeError) as exc:  # an entry that no longer parses
            info.error = f"unusable plan cache entry: {str(exc)[:200]}"
            found = None
        info.hit = found is not None
        state.plan_cache = info
        return found

    def plan_query(self, state: SearchState) -> SearchState:
        """PlanQuery (and PlanQueryRules): the plan, then the executor's gate.

        The plan comes from the plan cache (a hit in ExtractIntent), else the LLM planner when
        one is configured and budget remains, else the rule-based planner (also after a Catch,
        ``planError``, and after any LLM fallback, whose reason lands in ``state.planner``).
        An LLM-path plan is stored in the plan cache unless a transient failure (timeout,
        connection) shaped it.

        Raises:
            ValueError: when there is no intent in the state.
            PlanError: when the rule-based plan is invalid.
        """
        if state.intent is None:
            raise ValueError("PlanQuery needs an intent in the state")
        t = time.perf_counter()
        req = state.request
        engine = self.engine(req.domain)
        llm = engine.llm if state.plan_error is None else None
        plan: QueryPlan | None = None
        if state.plan_error is not None:
            reason = f"fallback after {state.plan_error.Error}: {state.plan_error.Cause}"
            info = ExtractorInfo(path="rules", reason=reason[:300])
        elif state.plan is not None:
            plan = state.plan
            info = ExtractorInfo(path="cache", reason="plan cache hit")
        elif llm is None:
            info = ExtractorInfo(path="rules", reason="rule-based planner")
        else:
            intent = state.intent
            plan, info = self._ask_llm(
                state,
                llm,
                lambda budget: llm.plan(intent, req.limit, budget),
                "plan within the rules",
            )
        if plan is None:
            plan = engine.planner.plan(state.intent, limit=req.limit)
        state.planner = info
        if llm is not None and info.path != "cache":
            self._plan_cache_put(state, engine, plan)
        rounds = req.rounds or engine.settings.max_rounds
        caps = ExecutorCaps(max_rounds=rounds, max_total_docs=min(req.limit, 100))
        state.executor = engine.multi_round.start(plan, state.intent, caps)
        state.plan = None  # the executor state holds it now
        state.stage_ms["plan"] = _ms(t)
        return state

    def _plan_cache_put(self, state: SearchState, engine: SearchEngine, plan: QueryPlan) -> None:
        info = state.plan_cache
        transient = any(
            step is not None and step.transient for step in (state.extractor, state.planner)
        )
        if info is None or not info.key or info.hit or transient or state.intent is None:
            return
        try:
            cache = self.cache_of(engine)
            value = {
                "intent": state.intent.wire(),
                "plan": plan.wire(),
                "extractor": state.extractor.wire() if state.extractor else None,
                "planner": state.planner.wire() if state.planner else None,
            }
            cache.put(info.key, value, engine.settings.plan_cache_ttl_s)
        except CacheError as exc:
            info.error = str(exc)

    def prepare_round(self, state: SearchState) -> SearchState:
        """PrepareRound: the next round's sub-queries, or ``continueSearch`` false."""
        ex = self._executor(state)
        state.round = self.engine(state.request.domain).multi_round.prepare_round(ex)
        return state

    def retrieve(self, event: RetrieveEvent) -> RetrievedList:
        """Retrieve (one Map item): run one sub-query's source; errors are in the result."""
        return self.engine(event.domain).multi_round.retrieve(event.sub_query)

    def fuse_rerank(self, state: SearchState) -> SearchState:
        """FuseRerank: fuse the Map's results, relax, rerank, select evidence."""
        ex, work = self._executor(state), self._round(state)
        for res in work.results:  # a RetrieveFailed result carries the Lambda error's cause
            if res.error is not None:
                res.error.message = error_message(res.error.message)
        self.engine(state.request.domain).multi_round.fuse_rerank(ex, work)
        return state

    def grade_round(self, state: SearchState) -> SearchState:
        """GradeRound: coverage, the stopping decision, the round's report."""
        ex, work = self._executor(state), self._round(state)
        self.engine(state.request.domain).multi_round.grade_round(ex, work)
        state.round = None
        return state

    def finalize(self, state: SearchState) -> SearchState:
        """Finalize: the response (candidates, evidence pack, report). A state that already
        has a response (a cache hit) passes through. Errors of failed steps (``roundError``,
        ``fuseError``, ``gradeError``) are listed; what earlier rounds found is returned.

        Raises:
            ValueError: when there is neither a response nor an executor state.
        """
        if state.response is not None:
            return state
        ex = self._executor(state)
        req = state.request
        engine = self.engine(req.domain)
        errors = [
            err.source_error(step)
            for step, err in (
                ("PrepareRound", state.round_error),
                ("FuseRerank", state.fuse_error),
                ("GradeRound", state.grade_error),
            )
            if err is not None
        ]
        if errors:
            ex.continue_search = False
            ex.report.stop_reason = f"{errors[0].source} failed: {errors[0].error}"
        output, pack = engine.multi_round.finalize(ex, errors)
        stage = output.execution_stats.stage_ms
        stage.update(state.stage_ms)
        stage["pipeline_total"] = round(
            (self._clock() - ex.started_at) * 1000.0 + sum(state.stage_ms.values()), 2
        )
        assert state.intent is not None  # the executor state exists only after ExtractIntent
        resp = SearchResponse(
            query=req.query,
            domain=engine.schema.name,
            intent=state.intent,
            plan=ex.plan,
            output=output,
            evidence=pack,
        )
        wire = resp.wire()
        wire["cache"] = (state.cache or CacheInfo()).wire()
        if state.extractor is not None:
            wire["extractor"] = state.extractor.wire()
        if state.planner is not None:
            wire["planner"] = state.planner.wire()
        if state.plan_cache is not None:
            wire["planCache"] = state.plan_cache.wire()
        state.response = wire
        state._built = resp
        state.executor = None  # the response holds what is left of it
        state.round = None
        return state

    def cache_store(self, state: SearchState) -> SearchState:
        """CacheStore: keep the response unless it came from the cache, has no key, or lists
        errors (a partial answer is not cached). A cache failure is noted, never raised."""
        info, resp = state.cache, state.response
        if info is None or resp is None or info.hit or not info.key or resp.get("errors"):
            return state
        engine = self.engine(state.request.domain)
        try:
            self.cache_of(engine).put(info.key, resp, engine.settings.cache_ttl_s)
        except CacheError as exc:
            info.error = str(exc)
            resp["cache"] = info.wire()
        return state

    # ----- the JSON edge ---------------------------------------------------------------------

    def invoke(self, step: str, event: dict[str, Any]) -> dict[str, Any]:
        """Run ``step`` (a state name of the ASL, e.g. ``"FuseRerank"``) on a JSON event and
        return the JSON result.

        Raises:
            KeyError: for an unknown step.
            pydantic.ValidationError: for an event that does not parse.
        """
        if step == "Retrieve":
            return self.retrieve(RetrieveEvent.model_validate(event)).wire()
        fn = self.STATE_METHODS[step]
        state = SearchState.model_validate(event)
        return getattr(self, fn)(state).wire()

    STATE_METHODS: dict[str, str] = {  # noqa: RUF012 - a constant table
        "CacheCheck": "cache_check",
        "ExtractIntent": "extract_intent",
        "ExtractIntentRules": "extract_intent",
        "PlanQuery": "plan_query",
        "PlanQueryRules": "plan_query",
        "PrepareRound": "prepare_round",
        "FuseRerank": "fuse_rerank",
        "GradeRound": "grade_round",
        "Finalize": "finalize",
        "CacheStore": "cache_store",
    }

    # ----- helpers ---------------------------------------------------------------------------

    @staticmethod
    def _executor(state: SearchState) -> ExecutorState:
        if state.executor is None:
            raise ValueError("this step needs the executor state (run PlanQuery first)")
        return state.executor

    @staticmethod
    def _round(state: SearchState) -> RoundWork:
        if state.round is None:
            raise ValueError("this step needs a round in the state (run PrepareRound first)")
        return state.round


__all__ = [
    "CacheInfo",
    "ExtractorInfo",
    "RetrieveEvent",
    "RunConfig",
    "SearchRequest",
    "SearchState",
    "SearchSteps",
    "StepError",
    "error_message",
]
