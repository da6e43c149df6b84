"""events/sync/* replayed through functions/catalog_sync (and sync_redrive) against Qdrant local
mode with the real MiniLM embedder (counted, not replaced), DynamoDB and SQS from moto.

GIVEN a catalog change event, WHEN the CatalogSync handler receives it, THEN the index holds
exactly the new image (payload and the vectors of the changed aspects only), the sync status
says synced per aspect, and replaying it changes nothing.
"""

from __future__ import annotations

import json

import boto3
import pytest
from support import lambdas
from support.aws import REGION, FakeContext
from support.lambdas import load_function

from agentic_search.logic.text import aspect_text
from agentic_search.sync.indexer import content_hashes
from agentic_search.sync.redrive import redrive_due
from agentic_search.wire import INTERNAL_KEYS

RID = "syncdemo-notes"


@pytest.fixture(scope="module")
def catalog_sync():
    return load_function("catalog_sync")


def point(engine, rid=RID, vectors=False):
    return engine.deps.store.retrieve_records(engine.schema, [rid], with_vectors=vectors).get(rid)


def payload(engine, rid=RID) -> dict:
    return {k: v for k, v in point(engine, rid).payload.items() if k not in INTERNAL_KEYS}


def stream_images(name: str) -> list[dict]:
    from agentic_search.sync.stream_records import deserialize_image

    return [deserialize_image(r["dynamodb"]["NewImage"]) for r in load_event(name)["Records"]]


def vectored(schema) -> list[str]:
    """The aspects a record without enrichment has a vector for (not the needs)."""
    return [a for a in schema.aspect_names if a not in schema.enriched_aspects]


def test_insert_embeds_every_aspect_and_marks_each_synced(
    wired, sync_engine, counting, catalog_sync
):
    _, status = wired
    version_before = sync_engine.deps.cache.catalog_version("tools")
    out = catalog_sync.handler(load_event("stream_insert.json"), FakeContext())
    assert out == {"batchItemFailures": []}
    [record] = stream_images("stream_insert.json")
    assert payload(sync_engine) == sync_engine.schema.validate_record(record)
    assert counting.texts == len(vectored(sync_engine.schema))
    entry = status.get("tools", [RID])[RID]
    assert entry.status == "synced" and entry.applied_version == 100
    hashes = content_hashes(sync_engine.schema, sync_engine.schema.validate_record(record))
    assert {a: s.content_hash for a, s in entry.aspects.items()} == {
        a: hashes[a] for a in sync_engine.schema.aspect_names
    }
    assert sync_engine.deps.cache.catalog_version("tools") == version_before + 1
    # the keyword index sees the new record
    hits = sync_engine.deps.keyword.search(sync_engine.schema, "SyncDemo meeting summaries", 5)
    assert RID in [h.id for h in hits]


def test_payload_only_modify_embeds_nothing(wired, sync_engine, counting, catalog_sync):
    catalog_sync.handler(load_event("stream_insert.json"), FakeContext())
    before = point(sync_engine, vectors=True).vectors
    counting.texts = 0
    out = catalog_sync.handler(load_event("stream_modify_payload.json"), FakeContext())
    assert out == {"batchItemFailures": []}
    assert counting.texts == 0
    assert payload(sync_engine)["price_monthly_usd"] == 12
    assert payload(sync_engine)["pricing_model"] == "Paid"
    after = point(sync_engine, vectors=True).vectors
    assert {k: after[k] for k in vectored(sync_engine.schema)} == {
        k: before[k] for k in vectored(sync_engine.schema)
    }


def test_aspect_modify_re_embeds_only_that_aspect(wired, sync_engine, counting, catalog_sync):
    _, status = wired
    for name in ("stream_insert.json", "stream_modify_payload.json"):
        catalog_sync.handler(load_event(name), FakeContext())
    before = point(sync_engine, vectors=True).vectors
    counting.texts = 0
    catalog_sync.handler(load_event("stream_modify_aspect.json"), FakeContext())
    # features changed: the aspects that read it alone (functionality and the whole record)
    reading = {a.name for a in sync_engine.schema.aspects if "features" in a.fields}
    assert "functionality" in reading and "identity" not in reading
    assert counting.texts == len(reading)
    after = point(sync_engine, vectors=True).vectors
    changed = {a for a in vectored(sync_engine.schema) if after[a] != before[a]}
    assert changed == reading
    [record] = stream_images("stream_modify_aspect.json")
    expected = sync_engine.deps.embedder.inner.embed_documents(
        [
            aspect_text(
                sync_engine.schema, "functionality", sync_engine.schema.validate_record(record)
            )
        ]
    )[0]
    assert after["functionality"] == pytest.approx(expected.tolist(), abs=1e-6)
    assert status.get("tools", [RID])[RID].applied_version == 300


def test_remove_deletes_the_point_and_keeps_a_tombstone(wired, sync_engine, catalog_sync):
    _, status = wired
    catalog_sync.handler(load_event("stream_insert.json"), FakeContext())
    out = catalog_sync.handler(load_event("stream_remove.json"), FakeContext())
    assert out == {"batchItemFailures": []}
    assert point(sync_engine) is None
    entry = status.get("tools", [RID])[RID]
    assert entry.deleted and entry.status == "synced" and entry.expires_at is not None
    # a late, older modify (redelivered out of order) does not bring it back
    catalog_sync.handler(load_event("stream_modify_aspect.json"), FakeContext())
    assert point(sync_engine) is None


def test_replaying_a_batch_changes_nothing(wired, sync_engine, counting, catalog_sync):
    event = load_event("stream_mixed_batch.json")
    catalog_sync.handler(event, FakeContext())
    snapshot = point(sync_engine, vectors=True)
    version = sync_engine.deps.cache.catalog_version("tools")
    counting.texts = 0
    out = catalog_sync.handler(load_event("stream_mixed_batch.json"), FakeContext())
    assert out == {"batchItemFailures": []}
    assert counting.texts == 0
    assert point(sync_engine, vectors=True) == snapshot
    assert sync_engine.deps.cache.catalog_version("tools") == version  # nothing written, no bump
    # the idempotency table holds one completed record per (record id, version)
    ddb = boto3.client("dynamodb", region_name=REGION)
    items = ddb.scan(TableName="sync-idempotency")["Items"]
    assert len(items) == 3 and {i["status"]["S"] for i in items} == {"COMPLETED"}


def test_a_malformed_record_is_parked_not_retried(wired, sync_engine, catalog_sync):
    _, status = wired
    out = catalog_sync.handler(load_event("stream_mixed_batch.json"), FakeContext())
    assert out == {"batchItemFailures": []}  # retrying cannot fix it
    entry = status.get("tools", [RID])[RID]
    assert entry.status == "failed"
    assert "description" in entry.last_error and "category" in entry.last_error
    assert entry.applied_version == 300  # the valid changes before it were applied
    assert payload(sync_engine)["features"][-1] == "searchable meeting archive"


def test_a_failing_record_is_the_only_batch_item_failure(
    wired, sync_engine, counting, catalog_sync, monkeypatch
):
    _, status = wired
    event = load_event("stream_mixed_batch.json")
    other = json.loads(json.dumps(event["Records"][0]))
    other["dynamodb"]["Keys"]["id"]["S"] = "syncdemo-other"
    other["dynamodb"]["NewImage"]["id"]["S"] = "syncdemo-other"
    other["dynamodb"]["NewImage"]["name"]["S"] = "Broken Embedding Tool"
    other["dynamodb"]["SequenceNumber"] = "150"
    event["Records"].insert(1, other)
    real = counting.embed_documents

    def flaky(texts):
        if any("Broken Embedding Tool" in t for t in texts):
            raise RuntimeError("embedding service timed out")
        return real(texts)

    monkeypatch.setattr(counting, "embed_documents", flaky)
    out = catalog_sync.handler(event, FakeContext())
    assert out == {"batchItemFailures": [{"itemIdentifier": "150"}]}
    pending = status.get("tools", ["syncdemo-other"])["syncdemo-other"]
    assert pending.status == "pending" and "timed out" in pending.last_error
    assert pending.change["version"] == 150
    assert point(sync_engine) is not None and point(sync_engine, "syncdemo-other") is None


def test_an_eventbridge_catalog_changed_event_is_applied(
    wired, sync_engine, counting, catalog_sync
):
    _, status = wired
    catalog_sync.handler(load_event("stream_insert.json"), FakeContext())
    counting.texts = 0
    out = catalog_sync.handler(load_event("eventbridge_modify.json"), FakeContext())
    assert out["outcome"] == "applied" and out["version"] == 500
    # its change is to features: the aspects that read features are re-embedded, the others kept
    reading = [a.name for a in sync_engine.schema.aspects if "features" in a.fields]
    assert counting.texts == len(reading) < len(sync_engine.schema.aspects)
    assert status.get("tools", [RID])[RID].applied_version == 500


def test_the_redrive_drains_the_dlq_and_applies_the_change(wired, sync_engine, monkeypatch):
    _, status = wired
    sqs = boto3.client("sqs", region_name=REGION)
    url = sqs.create_queue(QueueName="sync-dlq")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody=json.dumps(load_event("dlq_async_failure.json")))
    from agentic_search_lambda.runtime import runtime

    runtime().lambda_settings.sync_dlq_urls = [url]
    redrive = load_function("sync_redrive")
    out = redrive.handler({"source": "aws.scheduler"}, FakeContext())
    assert out["drained"]["changes"] == 1 and out["applied"] == 1
    assert payload(sync_engine)["features"][-1] == "searchable meeting archive"
    assert sqs.receive_message(QueueUrl=url).get("Messages") is None
    assert status.get("tools", [RID])[RID].status == "synced"


class FakeStreams:
    """A DynamoDB Streams client over a list of records (moto 5.2.5 answers DescribeStream
    with "Not yet implemented"), paging two records at a time."""

    def __init__(self, records: list[dict]) -> None:
        self.records = records

    def get_shard_iterator(self, StreamArn, ShardId, ShardIteratorType, SequenceNumber):
        assert ShardIteratorType == "AT_SEQUENCE_NUMBER"
        start = next(
            i
            for i, r in enumerate(self.records)
            if r["dynamodb"]["SequenceNumber"] == SequenceNumber
        )
        return {"ShardIterator": str(start)}

    def get_records(self, ShardIterator, Limit):
        i = int(ShardIterator)
        page = self.records[i : i + 2]
        nxt = str(i + 2) if i + 2 <= len(self.records) else None
        return {"Records": page, "NextShardIterator": nxt}


def test_a_stream_failure_record_is_read_back_from_the_stream(wired, sync_engine):
    # GIVEN the on-failure record of a batch (records 100..300 of the stream, 400 after it)
    _, status = wired
    records = load_event("stream_mixed_batch.json")["Records"][:3]
    records.append(load_event("stream_remove.json")["Records"][0])
    for r in records:
        r.pop("eventSource")  # GetRecords does not return it
    sqs = boto3.client("sqs", region_name=REGION)
    url = sqs.create_queue(QueueName="stream-dlq")["QueueUrl"]
    body = load_event("dlq_stream_batch_failure.json")
    sqs.send_message(QueueUrl=url, MessageBody=json.dumps(body))
    # WHEN the DLQ is drained and the redrive runs
    from agentic_search_lambda.redrive import drain_dlqs

    drained = drain_dlqs([url], sqs=sqs, streams=FakeStreams(records))
    report = redrive_due(sync_engine.deps, status)
    # THEN the batch's newest change (300) was read back and applied, not the later remove
    assert drained == {"messages": 1, "changes": 1, "rejected": 0, "unreadable": 0}
    assert report.applied == 1
    assert payload(sync_engine)["features"][-1] == "searchable meeting archive"
    assert status.get("tools", [RID])[RID].applied_version == 300


def load_event(name: str) -> dict:
    """A fresh copy of ``events/sync/<name>``."""
    return lambdas.load_event(f"sync/{name}")
