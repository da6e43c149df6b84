"""Logger, Tracer and Metrics (Powertools for AWS Lambda), one instance each per process.

Service name and metrics namespace come from ``POWERTOOLS_SERVICE_NAME`` and
``POWERTOOLS_METRICS_NAMESPACE`` (set in template.yaml's Globals).
"""

from __future__ import annotations

import os

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit

SERVICE = os.environ.get("POWERTOOLS_SERVICE_NAME", "agentic-search")
NAMESPACE = os.environ.get("POWERTOOLS_METRICS_NAMESPACE", "AgenticSearch")

#: Modules X-Ray patches: only the AWS SDK. Tracer's default patches every supported module it
#: finds installed (pymongo, requests, httpx ...), importing each at cold start.
TRACED_MODULES = ("botocore",)

logger = Logger(service=SERVICE)
tracer = Tracer(service=SERVICE, patch_modules=TRACED_MODULES)
metrics = Metrics(service=SERVICE, namespace=NAMESPACE)


def count(name: str, value: int = 1) -> None:
    """Add ``value`` to the Count metric ``name`` (published when the handler returns)."""
    metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)


__all__ = ["count", "logger", "metrics", "tracer"]
