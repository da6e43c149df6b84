"""McpFunction: the MCP server over stateless streamable HTTP (``/mcp``).

The handler lives in the layer so that ``agentic-search serve`` calls the very same function.
"""

from agentic_search_lambda.mcp_http import handler

__all__ = ["handler"]
