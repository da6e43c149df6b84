"""Lambda glue of the sync redrive (the logic is :mod:`agentic_search.sync.redrive`):
SyncRedriveFunction, on a schedule, drains the dead-letter queues (``SYNC_DLQ_URLS``) into the
status store, reading stream ranges back from the stream, then re-applies the changes that are
due, with backoff."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from agentic_search.sync.changes import ChangeError
from agentic_search.sync.enrich_redrive import redrive_enrichment, unpark_enrichment
from agentic_search.sync.events import parse_change, rejected_record_id
from agentic_search.sync.published import publishing
from agentic_search.sync.redrive import (
    StreamRange,
    dlq_message_items,
    enqueue_failed,
    park_rejected,
    redrive_due,
    retry_failed,
)
from agentic_search_lambda.observability import count, logger
from agentic_search_lambda.runtime import runtime


def read_stream_range(rng: StreamRange, client: Any | None = None) -> list[dict[str, Any]]:
    """The stream records of a failed batch (``AT_SEQUENCE_NUMBER`` start .. end), while the
    stream still holds them (24 h). Records past ``end`` are not returned."""
    if client is None:
        import boto3

        client = boto3.client("dynamodbstreams")
    iterator = client.get_shard_iterator(
        StreamArn=rng.stream_arn,
        ShardId=rng.shard_id,
        ShardIteratorType="AT_SEQUENCE_NUMBER",
        SequenceNumber=rng.start,
    ).get("ShardIterator")
    out: list[dict[str, Any]] = []
    end = int(rng.end)
    while iterator:
        resp = client.get_records(ShardIterator=iterator, Limit=1000)
        records = resp.get("Records", [])
        for r in records:
            if int(r["dynamodb"]["SequenceNumber"]) > end:
                return out
            out.append({**r, "eventSource": "aws:dynamodb"})
        if not records:
            break
        iterator = resp.get("NextShardIterator")
    return out


def drain_dlqs(
    queue_urls: list[str],
    sqs: Any | None = None,
    streams: Any | None = None,
    max_messages: int = 200,
    clock: Callable[[], float] = time.time,
) -> dict[str, int]:
    """Move dead-letter messages into the status store as due pending changes, then delete
    them. A message is deleted only after its changes are stored; one that cannot be read is
    left in the queue (its alarm stays on) and counted as ``unreadable``."""
    if sqs is None:
        import boto3

        sqs = boto3.client("sqs")
    rt = runtime()
    schema, status = rt.sync_dependencies().schema, rt.sync_status
    counts = {"messages": 0, "changes": 0, "rejected": 0, "unreadable": 0}
    for url in queue_urls:
        while counts["messages"] < max_messages:
            resp = sqs.receive_message(
                QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0, VisibilityTimeout=120
            )
            messages = resp.get("Messages", [])
            if not messages:
                break
            for m in messages:
                counts["messages"] += 1
                try:
                    items, rng, error = dlq_message_items(json.loads(m["Body"]))
                    if rng is not None:
                        items = read_stream_range(rng, streams)
                except Exception as exc:  # keep it in the queue for a person to look at
                    logger.error("unreadable dead-letter message", extra={"error": str(exc)})
                    counts["unreadable"] += 1
                    continue
                changes = []
                for item in items:
                    try:
                        changes.append(parse_change(item, schema))
                    except ChangeError as exc:
                        rid = rejected_record_id(item, schema)
                        if rid is not None:
                            park_rejected(status, schema.name, rid, f"rejected: {exc}", clock)
                        counts["rejected"] += 1
                counts["changes"] += enqueue_failed(status, changes, error, clock)
                sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    return counts


def sync_redrive(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """SyncRedriveFunction: drain the DLQs, then re-apply what is due and ask the enricher
    again for the records whose enrichment failed (:mod:`agentic_search.sync.enrich_redrive`).
    A direct invocation ``{"retry": ["id", ...]}`` or ``{"retry": "all"}`` first re-queues
    parked failures (``"all"``: parked enrichments too)."""
    rt = runtime()
    deps, status = rt.sync_dependencies(), rt.sync_status
    queued: list[str] = []
    retry = event.get("retry") if isinstance(event, dict) else None
    if retry == "all":
        queued = retry_failed(status, deps.schema.name)
        queued += [rid for rid in unpark_enrichment(deps) if rid not in queued]
    elif isinstance(retry, list):
        queued = retry_failed(status, deps.schema.name, [str(r) for r in retry])
    urls = rt.lambda_settings.sync_dlq_urls
    drained = drain_dlqs(urls) if urls else {}
    with publishing(deps):  # edge-s3: under the lease, one publish for the pass
        report = redrive_due(deps, status)
        enrichment = redrive_enrichment(deps, status)  # records whose enrichment failed
    count("RedriveApplied", report.applied)
    count("RedriveParked", report.parked)
    count("RedriveEnriched", enrichment.enriched)
    count("RedriveEnrichmentParked", enrichment.parked)
    out = {"queued": queued, "drained": drained, **report.wire(), "enrichment": enrichment.wire()}
    logger.info("redrive pass", extra=out)
    return out


__all__ = ["drain_dlqs", "read_stream_range", "sync_redrive"]
