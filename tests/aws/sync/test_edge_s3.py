"""``VECTOR_STORE=edge-s3`` end to end in moto (S3, DynamoDB): no vector server.

The writer is CatalogSync's handler over a container runtime with ``SNAPSHOT_ROLE=writer``;
the reader is SearchApi's handler over a runtime with ``SNAPSHOT_ROLE=reader`` whose search
walks the state machine in-process, each search's dependencies taken through the step
handlers' :func:`agentic_search_lambda.handlers.fresh` (the pointer re-checked between
requests). Both use the real MiniLM and real Edge shards, unpacked in their own folders.

GIVEN records seeded through the stream handler THEN a search through the HTTP API answers
them from the published snapshot; a change makes a new snapshot the next search sees; a
writer killed between upload and pointer move leaves the old pointer; two writers race and one
wins; a truncated snapshot keeps the previous one serving and the error names it. Laptop
parity: the published shard opened by the local code answers as the same catalog ingested
locally does.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import pytest
from boto3.dynamodb.types import TypeSerializer
from support import lambdas
from support.aws import (
    REGION,
    FakeContext,
    create_idempotency_table,
    create_snapshot_table,
    create_status_table,
)
from support.lambdas import load_event, load_function, use_runtime

from agentic_search.config import Settings
from agentic_search.ports import SnapshotBusy, SnapshotConflict
from agentic_search.wiring import DomainRegistry

BUCKET = "agentic-search-snapshots"
SEED = 24  # records seeded through the stream (enough for every source to answer)
QUERY = "AI code completion tools that work locally"


def stream_batch(records: list[dict], first_seq: int = 100, name: str = "INSERT") -> dict:
    """One DynamoDB stream batch inserting (or modifying) ``records``."""
    [template] = lambdas.load_event("sync/stream_insert.json")["Records"]
    ser, out = TypeSerializer(), []
    for n, record in enumerate(records):
        item = copy.deepcopy(template)
        ddb = item["dynamodb"]
        plain = json.loads(json.dumps(record), parse_float=Decimal)
        ddb["Keys"] = {"id": {"S": record["id"]}}
        ddb["SequenceNumber"] = f"{first_seq + n:021d}"
        ddb["NewImage"] = {k: ser.serialize(v) for k, v in plain.items() if v is not None}
        item["eventID"] = f"evt-{first_seq + n}"
        item["eventName"] = name
        out.append(item)
    return {"Records": out}


class Stack:
    """The moto tables and bucket, and one runtime per role over them."""

    def __init__(self, tmp: Path, embedder: Any) -> None:
        from agentic_search.adapters.sync_status import DynamoDBSyncStatus
        from agentic_search_lambda.settings import LambdaSettings

        self.tmp = tmp
        self.embedder = embedder
        self.s3 = boto3.client("s3", region_name=REGION)
        self.s3.create_bucket(Bucket=BUCKET)
        ddb = self.ddb = boto3.client("dynamodb", region_name=REGION)
        self.table = create_snapshot_table(ddb)
        self.status = DynamoDBSyncStatus(create_status_table(ddb), client=ddb)
        self.lambda_settings = LambdaSettings(idempotency_table=create_idempotency_table(ddb))
        self.runtimes: list[Any] = []

    def settings(self, role: str, name: str, **extra: Any) -> Settings:
        return Settings(
            agentic_search_home=self.tmp / name,
            vector_store="edge-s3",
            snapshot_role=role,
            snapshot_bucket=BUCKET,
            snapshot_table=self.table,
            cache_backend="none",
            **extra,
        )

    def runtime(self, role: str, name: str, **extra: Any) -> Any:
        """A container runtime of ``role`` with its own home (its own /tmp)."""
        from agentic_search.pipeline.runner import LocalRunner
        from agentic_search_lambda.handlers import fresh
        from agentic_search_lambda.orchestrators import LocalOrchestrator
        from agentic_search_lambda.runtime import Runtime

        settings = self.settings(role, name, **extra)
        registry = DomainRegistry(settings, embedder=self.embedder)
        orchestrator = LocalOrchestrator(LocalRunner(fresh, 1)) if role == "reader" else None
        rt = Runtime(
            settings,
            self.lambda_settings,
            deps=registry,
            orchestrator=orchestrator,
            sync_status=self.status,
        )
        self.runtimes.append(rt)
        return rt

    def close(self) -> None:
        for rt in self.runtimes:
            rt.deps.close()


@pytest.fixture()
def stack(aws, tmp_path, embedder) -> Iterator[Stack]:
    s = Stack(tmp_path, embedder)
    yield s
    s.close()


def sync(rt: Any, event: dict) -> dict:
    with use_runtime(rt):
        return load_function("catalog_sync").handler(event, FakeContext())


def search(rt: Any, query: str = QUERY, limit: int = 5) -> tuple[int, dict]:
    event = load_event("search_api/post_search.json")
    event["body"] = json.dumps({"query": query, "limit": limit})
    with use_runtime(rt):
        out = load_function("search_api").handler(event, FakeContext())
    return out["statusCode"], json.loads(out["body"])


def ids(body: dict) -> list[str]:
    return [c["id"] for c in body["candidates"]]


def pointer(stack: Stack) -> dict | None:
    item = stack.ddb.get_item(TableName=stack.table, Key={"pk": {"S": "pointer#tools"}})
    return item.get("Item")


def snapshot_keys(stack: Stack) -> list[str]:
    listed = stack.s3.list_objects_v2(Bucket=BUCKET, Prefix="snapshots/tools/")
    return sorted(o["Key"] for o in listed.get("Contents", []))


def test_seeded_by_the_stream_searched_through_the_api_and_a_change_is_seen(stack, catalog_records):
    writer, reader = stack.runtime("writer", "writer"), stack.runtime("reader", "reader")
    # WHEN a stream batch of records arrives THEN one snapshot is published for the batch
    out = sync(writer, stream_batch(catalog_records[:SEED]))
    assert out == {"batchItemFailures": []}
    keys = snapshot_keys(stack)
    assert len(keys) == 1 and keys[0].startswith("snapshots/tools/v0000000001-")
    assert pointer(stack)["key"]["S"] == keys[0]
    # THEN a search through the HTTP API answers from it
    status, body = search(reader)
    assert status == 200, body
    assert ids(body) and set(ids(body)) <= {r["id"] for r in catalog_records[:SEED]}
    # AND the reader's copy keeps the holes of the engine's preallocated files: it takes about
    # the archive's size on disk, not the files' apparent size
    opened = reader.deps("tools").store
    [root] = [o.root for o in opened._opened.values()]
    files = [p.stat() for p in root.rglob("*") if p.is_file()]
    apparent, allocated = sum(f.st_size for f in files), sum(f.st_blocks * 512 for f in files)
    archive = int(pointer(stack)["size"]["N"])
    assert apparent > 20 * archive and allocated < 4 * archive, (apparent, allocated, archive)
    # WHEN a new record arrives THEN a second snapshot replaces the first, which is retired
    newcomer = dict(catalog_records[SEED], name="Zyxwv Local Completion")
    sync(writer, stream_batch([newcomer], first_seq=500))
    keys = snapshot_keys(stack)
    assert len(keys) == 2 and pointer(stack)["version"]["N"] == "2"
    tags = stack.s3.get_object_tagging(Bucket=BUCKET, Key=keys[0])["TagSet"]
    assert tags == [{"Key": "snapshot", "Value": "retired"}]
    # AND the next search, past the re-check interval, sees it
    for o in opened._opened.values():
        o.checked_at -= opened.recheck_s  # the interval has passed
    status, body = search(reader, "Zyxwv Local Completion", limit=3)
    assert status == 200 and ids(body)[0] == newcomer["id"], body


def test_a_search_within_the_recheck_interval_keeps_its_snapshot(stack, catalog_records):
    writer = stack.runtime("writer", "writer")
    reader = stack.runtime("reader", "reader", snapshot_recheck_s=3600.0)
    sync(writer, stream_batch(catalog_records[:SEED]))
    assert search(reader)[0] == 200
    newcomer = dict(catalog_records[SEED], name="Zyxwv Local Completion")
    sync(writer, stream_batch([newcomer], first_seq=500))
    status, body = search(reader, "Zyxwv Local Completion", limit=3)
    assert status == 200 and newcomer["id"] not in ids(body)  # not looked at yet
    assert reader.deps("tools").store.pointer_of(reader.deps("tools").schema).version == 1


def test_a_writer_killed_between_upload_and_pointer_move_leaves_the_old_pointer(
    stack, catalog_records
):
    writer = stack.runtime("writer", "writer")
    sync(writer, stream_batch(catalog_records[:SEED]))
    before = pointer(stack)
    from agentic_search.adapters.s3_snapshots import S3SnapshotRegistry

    class Killed(BaseException):
        """What SIGKILL looks like to the code after it: nothing runs."""

    def die(self, *args, **kwargs):
        raise Killed

    # WHEN a writer uploads its snapshot and dies before moving the pointer
    dying = stack.runtime("writer", "dying", snapshot_lease_s=2.0)
    with pytest.MonkeyPatch.context() as kill:
        kill.setattr(S3SnapshotRegistry, "move_pointer", die)
        kill.setattr(S3SnapshotRegistry, "release", die)  # the lease is not given back
        with pytest.raises(Killed):
            sync(dying, stream_batch([catalog_records[SEED]], first_seq=600))
    # THEN the pointer is the old one, and a fresh reader serves the old snapshot
    assert pointer(stack) == before
    orphan = [k for k in snapshot_keys(stack) if k != before["key"]["S"]]
    assert len(orphan) == 1 and orphan[0].startswith("snapshots/tools/v0000000002-")
    reader = stack.runtime("reader", "reader")
    status, body = search(reader, catalog_records[SEED]["name"], limit=3)
    assert status == 200 and catalog_records[SEED]["id"] not in ids(body)
    # WHEN the next writer publishes, once the dead one's lease expired, THEN its version 2 is
    # the pointer's and the orphan is retired
    later = stack.runtime("writer", "later", snapshot_lease_wait_s=5.0)
    sync(later, stream_batch([catalog_records[SEED + 1]], first_seq=700))
    now = pointer(stack)
    assert now["version"]["N"] == "2" and now["key"]["S"] not in orphan
    tags = stack.s3.get_object_tagging(Bucket=BUCKET, Key=orphan[0])["TagSet"]
    assert tags == [{"Key": "snapshot", "Value": "retired"}]


def test_two_writers_racing_one_publishes_and_the_other_is_refused(stack, catalog_records):
    first = stack.runtime("writer", "first", snapshot_lease_wait_s=0.0)
    second = stack.runtime("writer", "second", snapshot_lease_wait_s=0.0)
    c1, c2 = first.deps("tools"), second.deps("tools")
    store1, store2 = c1.store, c2.store
    # WHEN the first holds the lease THEN the second cannot take it
    busy = pytest.raises(SnapshotBusy, match="another writer holds the lease of 'tools'")
    with store1.writing(c1.schema), busy:
        store2.begin_write(c2.schema)
    # WHEN both start from no snapshot, the second after the first's lease expired while it
    # wrote, THEN only the first pointer move wins; the loser publishes nothing
    sync(first, stream_batch(catalog_records[:2]))
    base = pointer(stack)
    registry = store1.registry
    lease_a = registry.acquire("tools", ttl_s=0.001, wait_s=0.0)
    import time

    time.sleep(0.01)  # expired
    lease_b = registry.acquire("tools", ttl_s=60.0, wait_s=0.0)
    from agentic_search.wire.snapshots import SnapshotPointer

    expected = SnapshotPointer(
        "tools",
        base["key"]["S"],
        int(base["version"]["N"]),
        int(base["size"]["N"]),
        base["sha256"]["S"],
        float(base["publishedAt"]["N"]),
    )
    archive = stack.tmp / "a.tar.gz"
    archive.write_bytes(b"not read")
    new_a = registry.upload("tools", expected.version + 1, archive)
    new_b = registry.upload("tools", expected.version + 1, archive)
    with pytest.raises(SnapshotConflict, match="lease was lost"):
        registry.move_pointer(new_a, expected, lease_a)  # its lease expired
    registry.move_pointer(new_b, expected, lease_b)
    with pytest.raises(SnapshotConflict):
        registry.move_pointer(new_a, expected, lease_b)  # the pointer moved
    assert pointer(stack)["key"]["S"] == new_b.key


def test_a_truncated_snapshot_keeps_the_previous_one_serving_and_is_named(
    stack, catalog_records, caplog
):
    writer, reader = stack.runtime("writer", "writer"), stack.runtime("reader", "reader")
    sync(writer, stream_batch(catalog_records[:SEED]))
    status, first = search(reader)
    assert status == 200
    newcomer = dict(catalog_records[SEED], name="Zyxwv Local Completion")
    sync(writer, stream_batch([newcomer], first_seq=500))
    # WHEN the new snapshot's object is truncated
    key = pointer(stack)["key"]["S"]
    body = stack.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    stack.s3.put_object(Bucket=BUCKET, Key=key, Body=body[: len(body) // 2])
    store = reader.deps("tools").store
    for o in store._opened.values():
        o.checked_at -= store.recheck_s
    # THEN the search answers 200 from the previous snapshot, and the error names the object
    with caplog.at_level("ERROR"):
        status, again = search(reader)
    assert status == 200 and ids(again) == ids(first)
    assert store.pointer_of(reader.deps("tools").schema).version == 1
    [failed] = [r for r in caplog.records if r.getMessage() == "snapshot refresh failed"]
    assert f"snapshot s3://{BUCKET}/{key} is truncated" in failed.error
    assert failed.snapshot.startswith("snapshots/tools/v0000000001-")  # the one still open


def test_the_published_shard_answers_as_the_same_catalog_ingested_locally(
    stack, catalog_records, embedder, tmp_path
):
    from agentic_search.adapters.edge.published import unpack
    from agentic_search.service import SearchService

    writer = stack.runtime("writer", "writer")
    records = catalog_records[:SEED]
    sync(writer, stream_batch(records))
    # the published snapshot, downloaded and opened by the CLI's code (VECTOR_STORE=edge)
    key = pointer(stack)["key"]["S"]
    archive = tmp_path / "published.tar.gz"
    stack.s3.download_file(BUCKET, key, str(archive))
    unpack(archive, tmp_path / "published" / "edge", key)
    published = SearchService.create(
        Settings(agentic_search_home=tmp_path / "published", cache_backend="none"),
        "tools",
        embedder=embedder,
    )
    local = SearchService.create(
        Settings(agentic_search_home=tmp_path / "local", cache_backend="none"),
        "tools",
        embedder=embedder,
    )
    local.ingest_records(records)
    try:
        queries = (QUERY, records[5]["name"], f"free {records[2]['category']} tools")
        for query in queries:
            a = published.search(query, limit=10).output.wire()["candidates"]
            b = local.search(query, limit=10).output.wire()["candidates"]
            assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True), query
            assert a, query
    finally:
        published.close()
        local.close()


def test_the_event_the_reindex_batch_and_the_redrive_each_publish_once(stack, catalog_records):
    from agentic_search.sync.changes import CatalogChange, ChangeOp
    from agentic_search.sync.redrive import enqueue_failed

    writer, reader = stack.runtime("writer", "writer"), stack.runtime("reader", "reader")
    records = catalog_records[:SEED]
    # WHEN the reindex batch brings a catalog in THEN one snapshot holds all of it
    with use_runtime(writer):
        out = load_function("reindex_batch").handler({"Items": records}, FakeContext())
    assert out["outcomes"] == {"applied": SEED}
    assert pointer(stack)["version"]["N"] == "1" and len(snapshot_keys(stack)) == 1
    # WHEN a catalog.changed event renames one THEN the next snapshot has the new name
    renamed = dict(records[3], name="Qwxzy Event Renamed")
    event = load_event("sync/eventbridge_modify.json")
    event["detail"] = {
        "operation": "modify",
        "recordId": renamed["id"],
        "version": 10**12,
        "record": renamed,
    }
    with use_runtime(writer):
        assert load_function("catalog_sync").handler(event, FakeContext())["outcome"] == "applied"
    assert pointer(stack)["version"]["N"] == "2"
    status, body = search(reader, "Qwxzy Event Renamed", limit=3)
    assert status == 200 and ids(body)[0] == renamed["id"]
    # WHEN the redrive re-applies a dead-lettered delete THEN a third snapshot lacks it
    gone = records[5]["id"]
    remove = CatalogChange(op=ChangeOp.REMOVE, domain="tools", record_id=gone, version=10**13)
    enqueue_failed(stack.status, [remove], "RetryAttemptsExhausted")
    with use_runtime(writer):
        out = load_function("sync_redrive").handler({"source": "aws.scheduler"}, FakeContext())
    assert out["applied"] == 1 and pointer(stack)["version"]["N"] == "3"
    # AND a pass with nothing to do publishes nothing
    with use_runtime(writer):
        load_function("sync_redrive").handler({"source": "aws.scheduler"}, FakeContext())
    assert pointer(stack)["version"]["N"] == "3" and len(snapshot_keys(stack)) == 3
    fresh_reader = stack.runtime("reader", "reader2")
    status, body = search(fresh_reader, records[5]["name"], limit=5)
    assert status == 200 and gone not in ids(body)
