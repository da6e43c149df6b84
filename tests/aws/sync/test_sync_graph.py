"""The deployed sync keeps the entity graph (issue 25 item 4): catalog changes replayed through
the Lambda handlers (CatalogSync's stream batch and EventBridge event, the reindex batch, the
redrive) over the small multi-hop corpus, moto for DynamoDB.

GIVEN a record added, one renamed, one deleted through a handler, THEN each record's names
(``_entity``) and the mention edges both ways (``_links`` / ``_linked_from``) are those a full
rebuild of the graph would write, and the bridge question walks the new edge (or no longer
walks the old one).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from boto3.dynamodb.types import TypeSerializer
from support import lambdas
from support.aws import REGION, FakeContext, create_idempotency_table, create_status_table
from support.lambdas import load_function, runtime_over, use_runtime
from support.multihop import BRIDGE, DOCS, records

from agentic_search.config import Settings
from agentic_search.service import SearchService
from agentic_search.sync.links import graph_fields, relink
from agentic_search.wire import ENTITY_KEY, LINKED_FROM_KEY, LINKS_KEY

QUESTION, (FILM, ACTRESS) = BRIDGE[1], BRIDGE[2]  # m1 names m2 ("Shirley Temple")


@pytest.fixture()
def docs(aws, tmp_path, embedder) -> Iterator[tuple[SearchService, Any]]:
    """The multi-hop corpus without the actress (m2), and the Lambda runtime over it with the
    documents domain as the sync domain; yields ``(service, status store)``."""
    from agentic_search.adapters.sync_status import DynamoDBSyncStatus
    from agentic_search_lambda.settings import LambdaSettings

    settings = Settings(agentic_search_home=tmp_path / "home", cache_backend="sqlite")
    engine = SearchService.create(settings, "documents", embedder=embedder)
    engine.ingest_records([r for r in records() if r["id"] != ACTRESS])
    ddb = boto3.client("dynamodb", region_name=REGION)
    status = DynamoDBSyncStatus(create_status_table(ddb), client=ddb)
    lambda_settings = LambdaSettings(
        idempotency_table=create_idempotency_table(ddb), sync_domain="documents"
    )
    with use_runtime(runtime_over(engine, lambda_settings=lambda_settings, sync_status=status)):
        yield engine, status
    engine.close()


def stream_event(name: str, rid: str, seq: int, record: dict | None) -> dict:
    """A stream batch of one INSERT / MODIFY (``record``) or REMOVE (None) of a document."""
    [template] = lambdas.load_event("sync/stream_insert.json")["Records"]
    item = copy.deepcopy(template)
    ser = TypeSerializer()
    ddb = item["dynamodb"]
    ddb["Keys"] = {"id": {"S": rid}}
    ddb["SequenceNumber"] = f"{seq:021d}"
    item["eventName"] = name
    del ddb["NewImage"]
    image = {k: ser.serialize(v) for k, v in (record or {"id": rid}).items()}
    ddb["OldImage" if record is None else "NewImage"] = image
    return {"Records": [item]}


def bridge_event(rid: str, version: int, record: dict) -> dict:
    """A ``catalog.changed`` EventBridge event modifying a document."""
    event = lambdas.load_event("sync/eventbridge_modify.json")
    event["detail"] = {"operation": "modify", "recordId": rid, "version": version, "record": record}
    return event


def actress(title: str = "Shirley Temple") -> dict:
    return {"id": ACTRESS, "title": title, "text": DOCS[ACTRESS][1]}


def graph(engine: SearchService) -> dict[str, dict]:
    """Each record's names and edges as stored."""
    keys = (ENTITY_KEY, LINKS_KEY, LINKED_FROM_KEY)
    return {
        str(p["id"]): {k: p.get(k) or {} for k in keys}
        for p in engine.deps.store.scroll(engine.schema, payload=graph_fields(engine.schema))
    }


def assert_graph_is_rebuilt(engine: SearchService) -> dict[str, dict]:
    """The stored graph equals what a full rebuild writes (which then rewrites nothing)."""
    after_sync = graph(engine)
    assert relink(engine.deps).rewritten == 0, "the sync left the graph stale"
    assert graph(engine) == after_sync
    return after_sync


def bridges(engine: SearchService) -> list[tuple[str, str, str]]:
    resp = engine.search(QUESTION, limit=2)
    return [(b.id, b.after, b.via) for r in resp.evidence.report.rounds for b in r.bridges]


def test_a_streamed_insert_is_linked_and_walked_by_the_bridge_question(docs):
    engine, status = docs
    catalog_sync = load_function("catalog_sync")
    assert (ACTRESS, FILM, f"mention:{FILM}") not in bridges(engine)
    # WHEN the actress arrives on the stream
    out = catalog_sync.handler(stream_event("INSERT", ACTRESS, 100, actress()), FakeContext())
    assert out == {"batchItemFailures": []}
    # THEN the film that named her points at her, she knows it, and has her names
    g = assert_graph_is_rebuilt(engine)
    assert ACTRESS in g[FILM][LINKS_KEY]["mention"]
    assert FILM in g[ACTRESS][LINKED_FROM_KEY]["mention"]
    assert "shirley temple" in g[ACTRESS][ENTITY_KEY]["names"]
    # AND the bridge question reaches her from the film along that edge
    assert (ACTRESS, FILM, f"mention:{FILM}") in bridges(engine)
    assert status.get("documents", [ACTRESS])[ACTRESS].status == "synced"


def test_a_rename_by_event_and_a_streamed_remove_take_the_edges_with_them(docs):
    engine, _ = docs
    catalog_sync = load_function("catalog_sync")
    catalog_sync.handler(stream_event("INSERT", ACTRESS, 100, actress()), FakeContext())
    assert ACTRESS in graph(engine)[FILM][LINKS_KEY]["mention"]
    # WHEN an EventBridge event renames her to a name the film does not use
    out = catalog_sync.handler(
        bridge_event(ACTRESS, 200, actress("Ambassador Black")), FakeContext()
    )
    assert out["outcome"] == "applied"
    # THEN her names are the new ones and the film no longer points at her
    g = assert_graph_is_rebuilt(engine)
    assert g[ACTRESS][ENTITY_KEY]["names"] == ["ambassador black"]
    assert ACTRESS not in g[FILM][LINKS_KEY].get("mention", [])
    assert FILM not in g[ACTRESS][LINKED_FROM_KEY].get("mention", [])
    assert (ACTRESS, FILM, f"mention:{FILM}") not in bridges(engine)
    # WHEN she is renamed back by the stream THEN the edge comes back
    catalog_sync.handler(stream_event("MODIFY", ACTRESS, 300, actress()), FakeContext())
    assert ACTRESS in assert_graph_is_rebuilt(engine)[FILM][LINKS_KEY]["mention"]
    # WHEN the stream removes her THEN no record points at her or lists her as a source
    out = catalog_sync.handler(stream_event("REMOVE", ACTRESS, 400, None), FakeContext())
    assert out == {"batchItemFailures": []}
    g = assert_graph_is_rebuilt(engine)
    assert ACTRESS not in g
    for rid, keys in g.items():
        for edges in (keys[LINKS_KEY], keys[LINKED_FROM_KEY]):
            assert all(ACTRESS not in targets for targets in edges.values()), rid
    assert ACTRESS not in {rid for rid, _, _ in bridges(engine)}


def test_the_reindex_batch_and_the_redrive_keep_the_graph(docs):
    engine, status = docs
    from agentic_search.sync.changes import CatalogChange, ChangeOp
    from agentic_search.sync.redrive import enqueue_failed

    # WHEN the reindex batch brings the actress in THEN she is linked as by ingest
    out = load_function("reindex_batch").handler({"Items": [actress()]}, FakeContext())
    assert out["outcomes"] == {"applied": 1}
    assert ACTRESS in assert_graph_is_rebuilt(engine)[FILM][LINKS_KEY]["mention"]
    # WHEN a dead-lettered delete is re-applied by the redrive THEN the edges go with her
    remove = CatalogChange(op=ChangeOp.REMOVE, domain="documents", record_id=ACTRESS, version=9)
    enqueue_failed(status, [remove], "RetryAttemptsExhausted")
    out = load_function("sync_redrive").handler({"source": "aws.scheduler"}, FakeContext())
    assert out["applied"] == 1
    g = assert_graph_is_rebuilt(engine)
    assert ACTRESS not in g and ACTRESS not in g[FILM][LINKS_KEY].get("mention", [])
