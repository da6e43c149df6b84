"""Logger, Tracer and Metrics (Powertools for AWS Lambda), one instance each per process.

Service name and metrics namespace come from ``POWERTOOLS_SERVICE_NAME`` and
``POWERTOOLS_METRICS_NAMESPACE`` (set in template.yaml's Globals).
"""

from __future__ import annotations

import os

from aws_lambda_powertools import Logger, Metrics, Tracer

SERVICE = os.environ.get("POWERTOOLS_SERVICE_NAME", "agentic-search")
NAMESPACE = os.environ.get("POWERTOOLS_METRICS_NAMESPACE", "AgenticSearch")

logger = Logger(service=SERVICE)
tracer = Tracer(service=SERVICE)
metrics = Metrics(service=SERVICE, namespace=NAMESPACE)

__all__ = ["logger", "metrics", "tracer"]
