"""SyncApi: the /sync/* routes of the HTTP API (the same resolver as SearchApi, its own role)."""

from agentic_search_lambda.api import handler

__all__ = ["handler"]
