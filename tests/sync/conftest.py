"""Fixtures of the sync tests: a fresh engine over Qdrant local mode with the real MiniLM
embedder wrapped to count its calls, and the Lambda glue wired to it with DynamoDB (status and
idempotency tables) and SQS from moto."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

sys.path.insert(0, str(Path(__file__).parent))

from sync_support import (
    REGION,
    CountingEmbedder,
    create_idempotency_table,
    create_status_table,
)

from agentic_search.adapters.sync_status import DynamoDBSyncStatus
from agentic_search.config import Settings
from agentic_search.engine import SearchEngine


@pytest.fixture()
def counting(embedder) -> CountingEmbedder:
    """The session's real MiniLM embedder, counted."""
    return CountingEmbedder(embedder)


@pytest.fixture()
def sync_engine(
    tmp_path: Path, counting: CountingEmbedder, catalog_records
) -> Iterator[SearchEngine]:
    """An engine over a fresh local store holding 4 bundled records, cache in SQLite."""
    settings = Settings(agentic_search_home=tmp_path / "home", cache_backend="sqlite")
    engine = SearchEngine(settings, "tools", embedder=counting)
    engine.ingest_records(catalog_records[:4])
    counting.texts = counting.calls = 0
    yield engine
    engine.close()


@pytest.fixture()
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """moto for every AWS call, with fake credentials."""
    for var, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }.items():
        monkeypatch.setenv(var, value)
    with mock_aws():
        yield


@pytest.fixture()
def wired(aws, sync_engine: SearchEngine, monkeypatch: pytest.MonkeyPatch):
    """The Lambda glue over ``sync_engine``, a moto status table and idempotency table."""
    from agentic_search_lambda import sync as glue

    ddb = boto3.client("dynamodb", region_name=REGION)
    status = DynamoDBSyncStatus(create_status_table(ddb), client=ddb)
    monkeypatch.setenv("IDEMPOTENCY_TABLE", create_idempotency_table(ddb))
    monkeypatch.setattr(glue, "engine", lambda: sync_engine)
    monkeypatch.setattr(glue, "status_store", lambda: status)
    glue._idempotency.cache_clear()
    glue._applier.cache_clear()
    yield glue, status
    glue._idempotency.cache_clear()
    glue._applier.cache_clear()
