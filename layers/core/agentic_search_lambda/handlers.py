"""The state handlers' one decorator: Powertools around a pipeline step.

``functions/<step>/app.py`` is::

    @step_handler
    def handler(state: SearchState, deps: Dependencies) -> SearchState:
        return fuse_rerank(state, deps)

:func:`step_handler` gives it the correlation id in every log line (the state's
``correlationId``), the X-Ray segment, the metrics flush, the
event parsed into the step's pydantic model (``SearchState``, or ``RetrieveEvent`` for the
Map's items), the domain's dependencies from the container's runtime
(:func:`agentic_search_lambda.runtime.runtime`), and the result back as JSON, kept under Step
Functions' 256 KB state limit (:func:`fit`: trimmed in a defined order and reported in the
state's ``retrievalReport.trimmed`` rather than failing with ``States.DataLimitExceeded``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext

from agentic_search.dependencies import Dependencies
from agentic_search.sync.published import refresh_published
from agentic_search.wire import RetrieveEvent, SearchState, WireModel
from agentic_search.wire.budget import STATE_BUDGET_BYTES, fit_state, map_reserve
from agentic_search_lambda.observability import count, logger, metrics, tracer
from agentic_search_lambda.runtime import runtime

Step = Callable[[Any, Dependencies], WireModel]


def step_handler(
    fn: Step | None = None, *, model: type[Any] = SearchState, before_map: bool = False
) -> Any:
    """Decorate ``fn(event, deps) -> model`` as a Lambda handler ``(event, context) ->
    dict``; ``model`` is what the event parses into (``SearchState`` by default). A
    SearchState result is kept under the state limit by :func:`fit` (``before_map``: the
    state machine's Map adds the round's Retrieve results to it next, PrepareRound).

    Raises (from the handler):
        pydantic.ValidationError: for an event that does not parse (a Task failure the
            state machine's Catch routes).
    """

    def wrap(step: Step) -> Callable[[dict[str, Any], LambdaContext], dict[str, Any]]:
        @logger.inject_lambda_context(correlation_id_path="correlationId")
        @tracer.capture_lambda_handler(capture_response=False)
        @metrics.log_metrics
        @functools.wraps(step)
        def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
            parsed = parse(event=event, model=model)
            if isinstance(parsed, RetrieveEvent):  # one Map item: bounded by its topK
                return step(parsed, fresh(parsed.domain)).wire()
            out = step(parsed, fresh(parsed.request.domain)).wire()
            return fit(out, before_map=before_map)

        return handler

    return wrap(fn) if fn is not None else wrap


def fresh(domain: str) -> Dependencies:
    """The domain's dependencies, a newer published snapshot swapped in first when the
    pointer moved (``VECTOR_STORE=edge-s3``, between requests): a swap is logged and counted
    (``SnapshotSwapped``), a snapshot that cannot be opened is logged as an error naming it
    and counted (``SnapshotRefreshFailed``) while the open one keeps serving."""
    deps = runtime().deps(domain)
    for r in refresh_published(deps):
        pointer = r.pointer
        where = {"collection": r.collection, "snapshot": pointer.key if pointer else None}
        if r.error:
            logger.error("snapshot refresh failed", extra={**where, "error": r.error})
            count("SnapshotRefreshFailed")
        elif r.swapped:
            logger.info("snapshot swapped in", extra={**where, "version": pointer.version})
            count("SnapshotSwapped")
    return deps


#: The least a state is allowed before the Map's results (a floor under :func:`map_reserve`).
MIN_BUDGET_BYTES = 64 * 1024


def fit(state: dict[str, Any], *, before_map: bool = False) -> dict[str, Any]:
    """``state`` (a SearchState's wire dict) trimmed to Step Functions' budget
    (:func:`~agentic_search.wire.budget.fit_state`); ``before_map``: less what the Map's
    Retrieve results will add (:func:`~agentic_search.wire.budget.map_reserve`). A trim is
    logged as a warning and counted (metric ``StatesTrimmed``)."""
    reserve = map_reserve(state) if before_map else 0
    budget = max(MIN_BUDGET_BYTES, STATE_BUDGET_BYTES - reserve)
    notes = fit_state(state, budget)
    if notes:
        logger.warning(
            "state trimmed to stay under Step Functions' 256 KB", extra={"trimmed": notes}
        )
        count("StatesTrimmed")
    return state


__all__ = ["fit", "fresh", "step_handler"]
