"""The pure parts of agentic_search.sync.core: event parsing (both shapes, typed DynamoDB values),
the backoff schedule, and the two status stores behaving alike."""

from __future__ import annotations

from decimal import Decimal

import boto3
import pytest
from support import lambdas
from support.aws import REGION, create_status_table

from agentic_search.adapters.sync_status import DynamoDBSyncStatus, SqliteSyncStatus
from agentic_search.logic.schema import load_schema
from agentic_search.sync.changes import ChangeError, ChangeOp
from agentic_search.sync.events import parse_change
from agentic_search.sync.redrive import MAX_ATTEMPTS, backoff_minutes, dlq_message_items
from agentic_search.sync.stream_records import deserialize_image, plain_value
from agentic_search.wire.sync import SyncEntry

SCHEMA = load_schema("tools")


def test_backoff_is_1_2_4_8_minutes_capped_at_an_hour():
    assert [backoff_minutes(n) for n in range(1, 9)] == [1, 2, 4, 8, 16, 32, 60, 60]
    assert MAX_ATTEMPTS == 5
    with pytest.raises(ValueError):
        backoff_minutes(0)


def test_dynamodb_typed_values_become_plain_json():
    image = {
        "price": {"N": "20"},
        "ratio": {"N": "0.5"},
        "tags": {"SS": ["b", "a"]},
        "nested": {"M": {"n": {"N": "3"}, "l": {"L": [{"S": "x"}, {"BOOL": True}]}}},
        "none": {"NULL": True},
    }
    assert deserialize_image(image) == {
        "price": 20,
        "ratio": 0.5,
        "tags": ["a", "b"],
        "nested": {"n": 3, "l": ["x", True]},
        "none": None,
    }
    assert isinstance(plain_value(Decimal("20")), int)
    with pytest.raises(ChangeError, match="binary"):
        deserialize_image({"blob": {"B": b"\x00"}})


def test_both_event_shapes_parse_into_the_same_change():
    stream = parse_change(load_event("stream_modify_aspect.json")["Records"][0], SCHEMA)
    event = load_event("eventbridge_modify.json")
    bridge = parse_change(event, SCHEMA)
    assert (stream.op, bridge.op) == (ChangeOp.MODIFY, ChangeOp.MODIFY)
    assert stream.record == bridge.record
    assert (stream.version, bridge.version) == (300, 500)
    assert stream.dedupe_key == "tools:syncdemo-notes@300"


def test_a_mongodb_atlas_trigger_shape_is_understood():
    event = load_event("eventbridge_modify.json")
    record = event["detail"].pop("record")
    event["detail"] = {
        "operationType": "replace",
        "documentKey": {"_id": record["id"]},
        "fullDocument": {k: v for k, v in record.items() if k != "id"},
        "version": 9,
    }
    change = parse_change(event, SCHEMA)
    assert change.op is ChangeOp.MODIFY and change.record["id"] == record["id"]
    event["detail"] = {"operationType": "delete", "documentKey": {"_id": "gone"}, "version": 10}
    assert parse_change(event, SCHEMA).op is ChangeOp.REMOVE


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda e: e["detail"].update(operation="explode"), "unknown operation"),
        (lambda e: e["detail"].update(version="7"), "not an integer"),
        (lambda e: e["detail"].update(domain="documents"), "domain"),
        (lambda e: e["detail"].update(recordId="other"), "differs"),
        (lambda e: e["detail"]["record"].pop("name"), "name: Field required"),
    ],
)
def test_bad_events_are_refused_with_the_reason(mutate, message):
    event = load_event("eventbridge_modify.json")
    mutate(event)
    with pytest.raises(ChangeError, match=message):
        parse_change(event, SCHEMA)


def test_dead_letter_messages_of_each_shape():
    items, rng, error = dlq_message_items(load_event("dlq_stream_batch_failure.json"))
    assert items == [] and rng is not None and rng.size == 3 and "RetryAttemptsExhausted" in error
    items, rng, error = dlq_message_items(load_event("dlq_async_failure.json"))
    assert rng is None and items[0]["detail-type"] == "catalog.changed"
    assert "EmbedderError: timeout" in error
    event = load_event("eventbridge_modify.json")
    assert dlq_message_items(event) == ([event], None, "event delivery failed")


@pytest.fixture(params=["sqlite", "dynamodb"])
def store(request, tmp_path, aws):
    if request.param == "sqlite":
        return SqliteSyncStatus(tmp_path / "s.sqlite")
    ddb = boto3.client("dynamodb", region_name=REGION)
    return DynamoDBSyncStatus(create_status_table(ddb), client=ddb)


def test_status_stores_get_put_list_and_count_alike(store):
    entries = [
        SyncEntry(domain="tools", record_id=f"r{i:03d}", status=s)
        for i, s in enumerate(["synced"] * 120 + ["pending"] * 3 + ["failed"] * 2)
    ]
    entries.append(SyncEntry(domain="documents", record_id="r000", status="failed"))
    # tombstones (deleted records) are synced entries, counted apart: not in the index
    entries += [
        SyncEntry(domain="tools", record_id=f"t{i}", deleted=True, expires_at=2_000_000_000)
        for i in range(4)
    ]
    store.put(entries)
    assert store.counts("tools") == {"synced": 120, "pending": 3, "failed": 2, "deleted": 4}
    assert [e.record_id for e in store.list("tools", "failed")] == ["r123", "r124"]
    assert len(store.list("tools", "synced", limit=50)) == 50
    got = store.get("tools", [f"r{i:03d}" for i in range(125)] + ["missing"])
    assert len(got) == 125 and got["r120"].status == "pending"
    got["r120"].status = "synced"
    store.put([got["r120"]])
    assert store.counts("tools")["pending"] == 2


def test_a_newer_dead_letter_gets_fresh_attempts_an_older_one_is_ignored(tmp_path):
    from agentic_search.sync.changes import CatalogChange
    from agentic_search.sync.redrive import enqueue_failed

    status = SqliteSyncStatus(tmp_path / "s.sqlite")
    old = CatalogChange(op=ChangeOp.REMOVE, record_id="r", version=5)
    assert enqueue_failed(status, [old], "boom", clock=lambda: 100.0) == 1
    entry = status.get("tools", ["r"])["r"]
    entry.status, entry.retry_count, entry.next_attempt_at = "failed", 5, None
    status.put([entry])
    newer = CatalogChange(op=ChangeOp.REMOVE, record_id="r", version=7)
    assert enqueue_failed(status, [newer, old], "boom", clock=lambda: 200.0) == 1
    entry = status.get("tools", ["r"])["r"]
    assert (entry.status, entry.retry_count, entry.change["version"]) == ("pending", 0, 7)
    assert entry.next_attempt_at == 200.0


def load_event(name: str) -> dict:
    """A fresh copy of ``events/sync/<name>``."""
    return lambdas.load_event(f"sync/{name}")
