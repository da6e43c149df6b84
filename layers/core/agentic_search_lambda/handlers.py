"""The state handlers' one decorator: Powertools around a pipeline step.

``functions/<step>/app.py`` is::

    @step_handler
    def handler(state: SearchState, components: Components) -> SearchState:
        return fuse_rerank(state, components)

:func:`step_handler` gives it the correlation id in every log line (the state's
``correlationId``), the X-Ray segment, the metrics flush, the
event parsed into the step's pydantic model (``SearchState``, or ``RetrieveEvent`` for the
Map's items), the domain's components from the container's runtime
(:func:`agentic_search_lambda.runtime.runtime`), and the result back as JSON.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext

from agentic_search.components import Components
from agentic_search.state import RetrieveEvent, SearchState, WireModel
from agentic_search_lambda.observability import logger, metrics, tracer
from agentic_search_lambda.runtime import runtime

Step = Callable[[Any, Components], WireModel]


def step_handler(fn: Step | None = None, *, model: type[Any] = SearchState) -> Any:
    """Decorate ``fn(event, components) -> model`` as a Lambda handler ``(event, context) ->
    dict``; ``model`` is what the event parses into (``SearchState`` by default).

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
            domain = parsed.domain if isinstance(parsed, RetrieveEvent) else parsed.request.domain
            return step(parsed, runtime().components(domain)).wire()

        return handler

    return wrap(fn) if fn is not None else wrap


__all__ = ["step_handler"]
