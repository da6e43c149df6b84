"""How ``POST /search`` runs a search: :class:`StepFunctionsOrchestrator` in AWS
(``StartSyncExecution`` on the Express state machine) or :class:`LocalOrchestrator` (the local
runner; what ``agentic-search serve`` uses).

A failed or timed-out synchronous execution still returns HTTP 200 from the Step Functions API
with ``status`` FAILED / TIMED_OUT: the orchestrator turns it into
:class:`~agentic_search.wire.errors.SearchFailed` (FAILED, a 502) or
:class:`~agentic_search.wire.errors.SearchTimedOut` (TIMED_OUT, a 504) with the error name.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from agentic_search.dependencies import Dependencies
from agentic_search.wire import Caller, RunConfig, SearchRequest, SearchState, error_message
from agentic_search.wire.errors import SearchFailed, SearchTimedOut
from agentic_search_lambda.settings import LambdaSettings

if TYPE_CHECKING:  # the local runner only where it runs (serve): SearchApi in AWS never loads it
    from agentic_search.pipeline.runner import LocalRunner


class Orchestrator(Protocol):
    """Runs one search request end to end and returns the response dict."""

    def search(
        self, request: SearchRequest, correlation_id: str, caller: Caller | None = None
    ) -> dict[str, Any]:
        """The search response, as ``caller`` (None: anonymous) may read it.

        Raises:
            SearchError: :class:`~agentic_search.wire.errors.SearchFailed` or
                :class:`~agentic_search.wire.errors.SearchTimedOut`.
        """
        ...


class LocalOrchestrator:
    """The local runner in place of the state machine."""

    def __init__(self, runner: LocalRunner) -> None:
        self.runner = runner

    def search(
        self, request: SearchRequest, correlation_id: str, caller: Caller | None = None
    ) -> dict[str, Any]:
        """Run the graph in-process as ``caller`` (a :class:`SearchFailed` passes: a 502).

        Raises:
            SearchFailed: when no path of the graph could answer.
        """
        result = self.runner.run(request, correlation_id=correlation_id, caller=caller)
        assert result.state.response is not None
        return result.state.response


def stepfunctions_client() -> Any:
    """boto3's Step Functions client; with an endpoint URL set (``AWS_ENDPOINT_URL_SFN`` or
    ``AWS_ENDPOINT_URL``: an emulator, moto, Step Functions Local) without host prefix
    injection, which would send ``StartSyncExecution`` to ``sync-<host>`` (a name that does not
    resolve for ``127.0.0.1`` or ``localhost``)."""
    import os

    import boto3
    from botocore.config import Config

    endpoint = os.environ.get("AWS_ENDPOINT_URL_SFN") or os.environ.get("AWS_ENDPOINT_URL")
    if endpoint:
        return boto3.client("stepfunctions", config=Config(inject_host_prefix=False))
    return boto3.client("stepfunctions")


class StepFunctionsOrchestrator:
    """``StartSyncExecution`` on the Express state machine ``state_machine_arn``."""

    def __init__(self, state_machine_arn: str, client: Any | None = None, concurrency: int = 8):
        if client is None:
            client = stepfunctions_client()
        self.arn = state_machine_arn
        self.client = client
        self.concurrency = concurrency

    def execution_input(
        self, request: SearchRequest, correlation_id: str, caller: Caller | None = None
    ) -> dict[str, Any]:
        """The state machine's input: a fresh :class:`SearchState` with ``caller``."""
        state = SearchState(
            request=request,
            config=RunConfig(map_max_concurrency=self.concurrency),
            correlation_id=correlation_id,
            caller=caller or Caller(),
        )
        return state.wire()

    def search(
        self, request: SearchRequest, correlation_id: str, caller: Caller | None = None
    ) -> dict[str, Any]:
        """Start, wait, and map the execution's status (the execution runs as ``caller``).

        Raises:
            SearchFailed: for FAILED (with the Fail state's error name; a 502).
            SearchTimedOut: for TIMED_OUT (a 504).
        """
        out = self.client.start_sync_execution(
            stateMachineArn=self.arn,
            name=correlation_id,
            input=json.dumps(self.execution_input(request, correlation_id, caller)),
        )
        status = out.get("status")
        if status == "SUCCEEDED":
            return json.loads(out["output"])
        error = out.get("error") or f"Execution{str(status).title().replace('_', '')}"
        cause = error_message(out.get("cause")) or f"the search execution ended {status}"
        raise (SearchTimedOut if status == "TIMED_OUT" else SearchFailed)(error, cause)


def from_settings(settings: LambdaSettings, deps: Callable[[str], Dependencies]) -> Orchestrator:
    """Step Functions when ``STATE_MACHINE_ARN`` is set, else the local runner over
    ``deps``."""
    if settings.state_machine_arn:
        return StepFunctionsOrchestrator(
            settings.state_machine_arn, concurrency=settings.map_max_concurrency
        )
    from agentic_search.pipeline.runner import LocalRunner

    return LocalOrchestrator(LocalRunner(deps, settings.map_max_concurrency))


__all__ = [
    "LocalOrchestrator",
    "Orchestrator",
    "StepFunctionsOrchestrator",
    "from_settings",
    "stepfunctions_client",
]
