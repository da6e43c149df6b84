"""Lambda glue for ``agentic_search``: observability, cold-start wiring, the HTTP API.

The core package never imports this one; the handlers under ``functions/`` and the local
``serve`` command do.
"""
