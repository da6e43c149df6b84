"""Lambda glue of the catalog sync (the logic is :mod:`agentic_search.sync.core`).

* :func:`catalog_sync` (CatalogSyncFunction): a DynamoDB stream batch goes through Powertools'
  ``BatchProcessor`` (``process_partial_response``: only the records that failed are reported in
  ``batchItemFailures``, so Lambda retries and bisects just those); a ``catalog.changed``
  EventBridge event is applied alone and a failure raises (Lambda's asynchronous retries, then
  the on-failure destination). Each change is applied once per ``dedupeKey`` (record id +
  version) through Powertools idempotency on DynamoDB (``IDEMPOTENCY_TABLE``; without it the
  core's version guard alone makes replays no-ops). A change that cannot be parsed is parked as
  failed in the status store and not retried (retrying cannot fix it; the next valid change of
  the record does). After a batch the keyword index is refreshed once and the catalog version
  bumped once.
* :func:`sync_redrive` (SyncRedriveFunction, on a schedule): drains the dead-letter queues
  (``SYNC_DLQ_URLS``) into the status store, reading stream ranges back from the stream, then
  re-applies the changes that are due, with backoff (:func:`agentic_search.sync.core.redrive_due`).
* :func:`reindex_batch` (ReindexBatchFunction): one batch of the reindex Distributed Map.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from agentic_search.components import Components
from agentic_search.ports import CacheError
from agentic_search.sync.apply import SyncReport, apply_changes
from agentic_search.sync.changes import (
    CatalogChange,
    ChangeError,
    is_eventbridge_event,
    parse_change,
    rejected_record_id,
)
from agentic_search.sync.dlq import StreamRange, dlq_message_items
from agentic_search.sync.redrive import (
    enqueue_failed,
    park_rejected,
    redrive_due,
    retry_failed,
)
from agentic_search_lambda.observability import count, logger
from agentic_search_lambda.runtime import Runtime, runtime


class SyncFailed(RuntimeError):
    """A change could not be applied (the batch item failure / async failure carries it)."""


class Batch:
    """One invocation's bookkeeping: outcomes, embedded texts, and whether anything was
    written (a replay answered by the idempotency layer writes nothing: only
    :meth:`apply_change`, the function idempotency wraps, notes writes)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.c: Components = rt.sync_components()
        self.outcomes: dict[str, int] = {}
        self.written = False
        self.embedded = 0
        wiring = rt.idempotency
        if wiring is None:
            self.applier: Callable[..., dict[str, Any]] = self.apply_change
        else:
            from aws_lambda_powertools.utilities.idempotency import idempotent_function

            persistence, config = wiring
            self.applier = idempotent_function(
                data_keyword_argument="change", persistence_store=persistence, config=config
            )(self.apply_change)

    def apply_change(self, change: dict[str, Any]) -> dict[str, Any]:
        """Apply one change (no keyword refresh, no version bump: done once per batch).

        Raises:
            SyncFailed: when it failed (the status store holds it as pending).
        """
        parsed = CatalogChange.model_validate(change)
        report = apply_changes(
            self.c, [parsed], self.rt.sync_status, refresh_keyword=False, bump_catalog=False
        )
        [outcome] = report.outcomes
        self.embedded += report.stats.embedded_texts
        if outcome.outcome in ("applied", "unchanged"):
            self.written = True
        if not outcome.ok:
            raise SyncFailed(f"{parsed.record_id}@{parsed.version}: {outcome.error}")
        return {**outcome.wire(), "embeddedTexts": report.stats.embedded_texts}

    def apply(self, item: dict[str, Any]) -> dict[str, Any]:
        """Parse and apply one stream record or event; an unparseable one is parked as
        failed (nothing to retry) and answered ``rejected``.

        Raises:
            SyncFailed: when the change failed to apply.
        """
        schema = self.c.schema
        try:
            change = parse_change(item, schema)
        except ChangeError as exc:
            rid = rejected_record_id(item, schema)
            logger.error("rejected catalog change", extra={"recordId": rid, "error": str(exc)})
            count("SyncRejected")
            if rid is not None:
                park_rejected(self.rt.sync_status, schema.name, rid, f"rejected: {exc}")
            self.outcomes["rejected"] = self.outcomes.get("rejected", 0) + 1
            return {"recordId": rid, "outcome": "rejected", "error": str(exc)}
        try:
            out = self.applier(change=change.wire())
        except SyncFailed:
            self.outcomes["failed"] = self.outcomes.get("failed", 0) + 1
            count("SyncFailures")
            raise
        kind = out.get("outcome", "applied")
        self.outcomes[kind] = self.outcomes.get(kind, 0) + 1
        return out

    def finish(self) -> dict[str, Any]:
        """After the batch: refresh the keyword index and bump the catalog version once
        (when anything was written), publish the outcome counts."""
        c = self.c
        version = None
        if self.written:
            c.keyword.refresh(c.schema)
            c.memo.forget_catalog()
            try:
                version = c.cache.bump_catalog_version(c.schema.name)
            except CacheError as exc:  # cached answers expire by TTL
                logger.warning("catalog version not bumped", extra={"error": str(exc)})
        for kind, n in self.outcomes.items():
            count(f"Sync_{kind}", n)
        count("SyncEmbeddedTexts", self.embedded)
        return {"outcomes": self.outcomes, "catalogVersion": version}


def catalog_sync(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """CatalogSyncFunction: a stream batch (partial batch response) or one EventBridge event.

    Raises:
        SyncFailed: for an EventBridge event whose change failed (asynchronous retry).
    """
    rt = runtime()
    wiring = rt.idempotency
    if wiring is not None:
        wiring[1].register_lambda_context(context)
    batch = Batch(rt)
    if is_eventbridge_event(event):
        try:
            out = batch.apply(event)
        finally:
            summary = batch.finish()
        logger.info("catalog event applied", extra={"outcome": out, **summary})
        return {**out, **summary}

    processor = BatchProcessor(event_type=EventType.DynamoDBStreams)

    def record_handler(record: DynamoDBRecord) -> dict[str, Any]:
        return batch.apply(record.raw_event)

    try:
        response = process_partial_response(
            event=event, record_handler=record_handler, processor=processor, context=context
        )
    finally:
        summary = batch.finish()
    logger.info(
        "stream batch applied",
        extra={**summary, "failures": len(response.get("batchItemFailures", []))},
    )
    return dict(response)


# ----- redrive ------------------------------------------------------------------------------------


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
    schema, status = rt.sync_components().schema, rt.sync_status
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
    """SyncRedriveFunction: drain the DLQs, then re-apply what is due. A direct invocation
    ``{"retry": ["id", ...]}`` or ``{"retry": "all"}`` first re-queues parked failures."""
    rt = runtime()
    c, status = rt.sync_components(), rt.sync_status
    queued: list[str] = []
    retry = event.get("retry") if isinstance(event, dict) else None
    if retry == "all":
        queued = retry_failed(status, c.schema.name)
    elif isinstance(retry, list):
        queued = retry_failed(status, c.schema.name, [str(r) for r in retry])
    urls = rt.lambda_settings.sync_dlq_urls
    drained = drain_dlqs(urls) if urls else {}
    report = redrive_due(c, status)
    count("RedriveApplied", report.applied)
    count("RedriveParked", report.parked)
    out = {"queued": queued, "drained": drained, **report.wire()}
    logger.info("redrive pass", extra=out)
    return out


# ----- reindex ------------------------------------------------------------------------------------


class ReindexBatchFailed(RuntimeError):
    """Some records of a reindex batch failed (the Map counts the batch as failed)."""


def reindex_batch(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """ReindexBatchFunction: ``{"Items": [record, ...], "BatchInput": {...}}`` (what the
    Distributed Map's ItemBatcher sends) or a single record. Records are applied as
    unversioned modifies through the same code as the sync (unchanged aspects are not
    re-embedded); every record is attempted before a failure is raised.

    Raises:
        ReindexBatchFailed: naming the failed or invalid records.
    """
    c = runtime().sync_components()
    items = event.get("Items") if isinstance(event.get("Items"), list) else [event]
    changes, problems = [], []
    for n, item in enumerate(items):
        try:
            changes.append(
                parse_change(
                    {
                        "op": "modify",
                        "recordId": str(item.get(c.schema.id_field, "")),
                        "record": item,
                    }
                    if isinstance(item, dict)
                    else item,
                    c.schema,
                )
            )
        except ChangeError as exc:
            problems.append(f"item {n}: {exc}")
    report: SyncReport = apply_changes(c, changes, None)
    problems += [f"{o.change.record_id}: {o.error}" for o in report.failed]
    count("ReindexRecords", len(changes))
    if problems:
        raise ReindexBatchFailed(
            f"{len(problems)} of {len(items)} failed: " + "; ".join(problems)[:900]
        )
    return {
        "records": len(items),
        "outcomes": report.counts(),
        "embeddedTexts": report.stats.embedded_texts,
    }


__all__ = [
    "Batch",
    "ReindexBatchFailed",
    "SyncFailed",
    "catalog_sync",
    "drain_dlqs",
    "read_stream_range",
    "reindex_batch",
    "sync_redrive",
]
