"""Why a search gave no answer: one hierarchy for every front door (the HTTP API, the CLI, the
local runner and the state machine's execution).

- :class:`SearchFailed` (502): no path of the graph could answer (the state machine's
  ``SearchFailed`` state, or an execution that ended FAILED);
- :class:`SearchTimedOut` (504): the execution ran out of time (TIMED_OUT);
- :class:`SourcesUnavailable` (503): the graph answered, but every retrieval source failed
  (nothing could be asked).

Each carries ``error`` (the name in the error body) and ``cause`` (one line for people).
"""

from __future__ import annotations

from typing import Any, ClassVar


class SearchError(RuntimeError):
    """A search gave no answer; ``status`` is the HTTP status it answers as."""

    status: ClassVar[int] = 502

    def __init__(self, error: str, cause: str) -> None:
        super().__init__(f"{error}: {cause}")
        self.error = error
        self.cause = cause


class SearchFailed(SearchError):
    """No path of the graph could answer (the state machine's ``SearchFailed`` state, or an
    execution that ended FAILED): ``error`` names the failure, ``cause`` says why."""


class SearchTimedOut(SearchError):
    """The search execution ran out of time (Step Functions ``TIMED_OUT``)."""

    status: ClassVar[int] = 504


class SourcesUnavailable(SearchError):
    """Every retrieval source failed: answered as 503 naming them (``failed``), with the
    response's ``errors``."""

    status: ClassVar[int] = 503

    def __init__(self, failed: list[str], errors: list[dict[str, Any]]) -> None:
        super().__init__("SourcesUnavailable", f"no source answered: {', '.join(failed)}")
        self.failed = failed
        self.errors = errors


__all__ = ["SearchError", "SearchFailed", "SearchTimedOut", "SourcesUnavailable"]
