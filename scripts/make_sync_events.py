"""Write events/sync/*.json: DynamoDB stream batches (NEW_AND_OLD_IMAGES), a catalog.changed
EventBridge event, dead-letter message bodies and a reindex batch, built from a new tool record
(so replaying them never touches the bundled catalog's records).

    python scripts/make_sync_events.py
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from boto3.dynamodb.types import TypeSerializer

OUT = Path(__file__).resolve().parents[1] / "events" / "sync"
STREAM_ARN = (
    "arn:aws:dynamodb:us-east-1:123456789012:table/agentic-search-CatalogTable/stream/"
    "2026-11-22T00:00:00.000"
)
TOOL: dict[str, Any] = {
    "id": "syncdemo-notes",
    "name": "SyncDemo Notes",
    "vendor": "SyncDemo Labs",
    "description": "Note-taking app that summarizes meetings and turns them into tasks.",
    "category": "Productivity",
    "functionality": ["Summarization", "Note Taking", "Speech-to-Text"],
    "features": ["meeting summaries", "action items from transcripts"],
    "use_cases": ["summarize a weekly team meeting"],
    "pricing_model": "Freemium",
    "price_monthly_usd": 10,
    "platforms": ["Web", "Windows"],
    "deployment": ["Cloud"],
    "interface": ["Web"],
    "industries": ["Software Development"],
    "user_types": ["Writers", "Enterprises"],
    "open_source": False,
}


def image(record: dict[str, Any]) -> dict[str, Any]:
    ser = TypeSerializer()
    return {k: ser.serialize(v) for k, v in record.items() if v is not None}


def stream_record(name: str, seq: int, new: dict | None, old: dict | None) -> dict[str, Any]:
    rid = (new or old or {})["id"]
    ddb: dict[str, Any] = {
        "ApproximateCreationDateTime": 1795305600 + seq,
        "Keys": {"id": {"S": rid}},
        "SequenceNumber": str(seq).rjust(21, "0"),
        "SizeBytes": 512,
        "StreamViewType": "NEW_AND_OLD_IMAGES",
    }
    if new is not None:
        ddb["NewImage"] = image(new)
    if old is not None:
        ddb["OldImage"] = image(old)
    return {
        "eventID": f"evt-{seq}",
        "eventName": name,
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": "us-east-1",
        "dynamodb": ddb,
        "eventSourceARN": STREAM_ARN,
    }


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    v1 = copy.deepcopy(TOOL)
    v2 = {**v1, "price_monthly_usd": 12, "pricing_model": "Paid"}  # payload only
    v3 = {**v2, "features": [*v2["features"], "searchable meeting archive"]}  # one aspect
    bad = {k: v for k, v in v3.items() if k not in ("description", "category")}
    insert = stream_record("INSERT", 100, v1, None)
    payload = stream_record("MODIFY", 200, v2, v1)
    aspect = stream_record("MODIFY", 300, v3, v2)
    remove = stream_record("REMOVE", 400, None, v3)
    malformed = stream_record("MODIFY", 350, bad, v3)
    files = {
        "stream_insert.json": {"Records": [insert]},
        "stream_modify_payload.json": {"Records": [payload]},
        "stream_modify_aspect.json": {"Records": [aspect]},
        "stream_remove.json": {"Records": [remove]},
        "stream_malformed.json": {"Records": [malformed]},
        "stream_mixed_batch.json": {"Records": [insert, payload, aspect, malformed]},
        "eventbridge_modify.json": {
            "version": "0",
            "id": "0d7c2a4e-5b1f-4a8e-9f1e-5e3c2b1a0f00",
            "detail-type": "catalog.changed",
            "source": "agentic-search.catalog",
            "account": "123456789012",
            "time": "2026-11-22T12:00:00Z",
            "region": "us-east-1",
            "resources": [],
            "detail": {"operation": "modify", "recordId": v3["id"], "version": 500, "record": v3},
        },
        "dlq_stream_batch_failure.json": {
            "requestContext": {
                "requestId": "c9b8b4b0-1111-2222-3333-444455556666",
                "functionArn": "arn:aws:lambda:us-east-1:123456789012:function:CatalogSync",
                "condition": "RetryAttemptsExhausted",
                "approximateInvokeCount": 3,
            },
            "responseContext": {"statusCode": 200, "executedVersion": "$LATEST"},
            "version": "1.0",
            "timestamp": "2026-11-22T12:00:00.000Z",
            "DDBStreamBatchInfo": {
                "shardId": "shardId-00000001700000000000-abcdef01",
                "startSequenceNumber": insert["dynamodb"]["SequenceNumber"],
                "endSequenceNumber": aspect["dynamodb"]["SequenceNumber"],
                "approximateArrivalOfFirstRecord": "2026-11-22T12:00:00Z",
                "approximateArrivalOfLastRecord": "2026-11-22T12:00:01Z",
                "batchSize": 3,
                "streamArn": STREAM_ARN,
            },
        },
        "dlq_async_failure.json": {
            "version": "1.0",
            "timestamp": "2026-11-22T12:00:00.000Z",
            "requestContext": {
                "requestId": "d1e2f3a4-1111-2222-3333-444455556666",
                "functionArn": "arn:aws:lambda:us-east-1:123456789012:function:CatalogSync",
                "condition": "RetriesExhausted",
                "approximateInvokeCount": 3,
            },
            "requestPayload": None,  # filled below: the EventBridge event
            "responseContext": {"statusCode": 200, "functionError": "Unhandled"},
            "responsePayload": {
                "errorMessage": "EmbedderError: timeout",
                "errorType": "SyncFailed",
            },
        },
        "reindex_batch.json": {
            "Items": [v1, {**v1, "id": "syncdemo-notes-2", "name": "SyncDemo Notes 2"}],
            "BatchInput": {"domain": "tools"},
        },
    }
    files["dlq_async_failure.json"]["requestPayload"] = files["eventbridge_modify.json"]
    for name, body in files.items():
        (OUT / name).write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
        print(OUT / name)


if __name__ == "__main__":
    main()
