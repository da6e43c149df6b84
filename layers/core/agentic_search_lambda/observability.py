"""Logger, Tracer and Metrics (Powertools for AWS Lambda), one instance each per process.

Service name and metrics namespace come from ``POWERTOOLS_SERVICE_NAME`` and
``POWERTOOLS_METRICS_NAMESPACE`` (set in template.yaml's Globals).
"""

from __future__ import annotations

import os

import wrapt  # aws-xray-sdk's own dependency (Powertools' tracer patches through it)
from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit

SERVICE = os.environ.get("POWERTOOLS_SERVICE_NAME", "agentic-search")
NAMESPACE = os.environ.get("POWERTOOLS_METRICS_NAMESPACE", "AgenticSearch")

#: Modules X-Ray patches: only the AWS SDK. Tracer's default patches every supported module it
#: finds installed (pymongo, requests, httpx ...), importing each at cold start.
TRACED_MODULES = ("botocore",)

logger = Logger(service=SERVICE)
tracer = Tracer(service=SERVICE, auto_patch=False)
metrics = Metrics(service=SERVICE, namespace=NAMESPACE)


def _patch_traced(_module: object) -> None:
    tracer.patch(modules=TRACED_MODULES)  # a no-op where tracing is disabled


# Patched when the function first imports botocore's session module (boto3 does, for its
# first client or a secret read), not at cold start: patching imports botocore's client
# machinery (with urllib3), which a function that makes no AWS call never needs
# (Powertools imports only the light ``botocore`` package itself). The hook runs once the
# module is loaded (``botocore.client`` is complete by then); already imported: right away.
wrapt.register_post_import_hook(_patch_traced, "botocore.session")


def outside_lambda() -> None:
    """Quiet Powertools in a process that is not a Lambda function (``serve`` and its worker
    processes): metrics and tracing off unless ``POWERTOOLS_METRICS_DISABLED`` /
    ``POWERTOOLS_TRACE_DISABLED`` say otherwise, and, with metrics off, no ``ColdStart``
    metric either. Powertools writes that one with ``single_metric``, which prints its JSON
    to stdout even when metrics are disabled; marking the cold start as taken skips it."""
    from aws_lambda_powertools.metrics.functions import is_metrics_disabled
    from aws_lambda_powertools.metrics.provider import cold_start

    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    if is_metrics_disabled():
        cold_start.is_cold_start = False


def count(name: str, value: int = 1) -> None:
    """Add ``value`` to the Count metric ``name`` (published when the handler returns)."""
    metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)


__all__ = ["count", "logger", "metrics", "outside_lambda", "tracer"]
