"""AWS in the tests: fake credentials, and moto tables laid out as template.yaml's."""

from __future__ import annotations

import time
from typing import Any

import pytest

REGION = "us-east-1"
ACCOUNT = "123456789012"


def fake_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials and a region: nothing can reach a real AWS account."""
    for var, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
    }.items():
        monkeypatch.setenv(var, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


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


def create_snapshot_table(client: Any, name: str = "snapshot-pointers") -> str:
    """The SnapshotTable of template.yaml (pk: the pointer and lease items of edge-s3)."""
    client.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
    )
    return name


class FakeContext:
    """The parts of a Lambda context Powertools reads."""

    function_name = "CatalogSyncFunction"
    function_version = "$LATEST"
    invoked_function_arn = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:CatalogSync"
    memory_limit_in_mb = 1024
    aws_request_id = "00000000-0000-0000-0000-000000000000"
    log_group_name = "/aws/lambda/test"
    log_stream_name = "test"

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


def wait_for_execution(client: Any, execution_arn: str, timeout_s: float = 120.0) -> dict:
    """``describe_execution`` once the execution has ended (or ``timeout_s`` passed).

    moto's Step Functions interpreter runs an execution in a thread and sets its status to
    SUCCEEDED one statement before it sets its output, so a poll can see SUCCEEDED with no
    ``output`` yet (seen on a loaded machine with a 240 KB final state): a succeeded
    execution counts as ended once its output is there."""
    deadline = time.monotonic() + timeout_s
    while True:
        out = client.describe_execution(executionArn=execution_arn)
        ended = out["status"] != "RUNNING" and (out["status"] != "SUCCEEDED" or "output" in out)
        if ended or time.monotonic() > deadline:
            return out
        time.sleep(0.05)
