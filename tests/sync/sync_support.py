"""Helpers of the sync tests: a counting wrapper around a real embedder, moto tables and
queues laid out like template.yaml's, and the handler modules of functions/."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "1")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "AgenticSearchTest")

REPO = Path(__file__).resolve().parents[2]
EVENTS = REPO / "events" / "sync"
REGION = "us-east-1"


class CountingEmbedder:
    """Wraps an embedder and counts the texts it embeds for documents (the real work goes to the
    wrapped one); ``fail_on`` texts containing a marker raise, to inject embedder faults."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.dim = inner.dim
        self.texts = 0
        self.calls = 0

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts += len(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def load_event(name: str) -> dict[str, Any]:
    """A fresh copy of ``events/sync/<name>``."""
    return copy.deepcopy(json.loads((EVENTS / name).read_text(encoding="utf-8")))


def load_function(directory: str) -> ModuleType:
    """``functions/<directory>/app.py`` as its own module."""
    path = REPO / "functions" / directory / "app.py"
    spec = importlib.util.spec_from_file_location(f"sync_fn_{directory}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def create_status_table(client: Any, name: str = "sync-status") -> str:
    """The SyncStatusTable of template.yaml (pk, GSI byStatus on statusKey/recordId)."""
    client.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "statusKey", "AttributeType": "S"},
            {"AttributeName": "recordId", "AttributeType": "S"},
        ],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "byStatus",
                "KeySchema": [
                    {"AttributeName": "statusKey", "KeyType": "HASH"},
                    {"AttributeName": "recordId", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
    )
    return name


def create_idempotency_table(client: Any, name: str = "sync-idempotency") -> str:
    """The IdempotencyTable of template.yaml (Powertools' layout: id, TTL expiration)."""
    client.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
    )
    return name


class FakeContext:
    """The parts of a Lambda context Powertools reads."""

    function_name = "CatalogSyncFunction"
    function_version = "$LATEST"
    invoked_function_arn = f"arn:aws:lambda:{REGION}:123456789012:function:CatalogSync"
    memory_limit_in_mb = 1024
    aws_request_id = "00000000-0000-0000-0000-000000000000"
    log_group_name = "/aws/lambda/test"
    log_stream_name = "test"

    def get_remaining_time_in_millis(self) -> int:
        return 60_000
