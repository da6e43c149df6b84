"""The agentic-search command line: search, ingest, sync, eval, bench, serve.

Installed with the package, never shipped in the Lambda layer.
"""
