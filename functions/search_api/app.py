"""SearchApiFunction: the HTTP API (POST /search, GET /health, GET /openapi.json).

The handler lives in the layer so that ``agentic-search serve`` calls the very same function.
"""

from agentic_search_lambda.api import handler

__all__ = ["handler"]
