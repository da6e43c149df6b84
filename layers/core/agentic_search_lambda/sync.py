"""Lambda glue of the catalog sync (the logic is :mod:`agentic_search.sync.apply`).

* :func:`catalog_sync` (CatalogSyncFunction): a DynamoDB stream batch goes through Powertools'
  ``BatchProcessor`` (``process_partial_response``: only the records that failed are reported in
  ``batchItemFailures``, so Lambda retries and bisects just those); a ``catalog.changed``
  EventBridge event is applied alone and a failure raises (Lambda's asynchronous retries, then
  the on-failure destination). Each change is applied once per ``dedupeKey`` (record id +
  version) through Powertools idempotency on DynamoDB (``IDEMPOTENCY_TABLE``; without it the
  core's version guard alone makes replays no-ops). A change that cannot be parsed is parked as
  failed in the status store and not retried (retrying cannot fix it; the next valid change of
  the record does). After a batch the core's one after-write sequence runs once
  (:func:`agentic_search.sync.after_write.after_write`: keyword index, entity graph relinked
  around the batch's records, caches, catalog version). With ``VECTOR_STORE=edge-s3`` the
  invocation writes under the collection's lease and publishes one snapshot at its end
  (:func:`agentic_search.sync.published.publishing`).

The redrive and the reindex have their own glue: :mod:`agentic_search_lambda.redrive`,
:mod:`agentic_search_lambda.reindex`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from agentic_search.dependencies import Dependencies
from agentic_search.sync.after_write import after_write
from agentic_search.sync.apply import apply_changes
from agentic_search.sync.changes import CatalogChange, ChangeError
from agentic_search.sync.eventbridge import is_eventbridge_event
from agentic_search.sync.events import parse_change, rejected_record_id
from agentic_search.sync.indexer import WriteStats
from agentic_search.sync.published import publishing
from agentic_search.sync.redrive import park_rejected
from agentic_search_lambda.observability import count, logger
from agentic_search_lambda.runtime import Runtime, runtime


class SyncFailed(RuntimeError):
    """A change could not be applied (the batch item failure / async failure carries it)."""


class Batch:
    """One invocation's bookkeeping: outcomes, embedded texts, and what was written (a
    replay answered by the idempotency layer writes nothing: only :meth:`apply_change`, the
    function idempotency wraps, notes writes)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.deps: Dependencies = rt.sync_dependencies()
        self.outcomes: dict[str, int] = {}
        self.written = False
        #: what the batch wrote, and the records it found already written (``unchanged``)
        self.stats = WriteStats()
        self.touched: list[str] = []
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
        """Apply one change (the after-write sequence runs once per batch: :meth:`finish`).

        Raises:
            SyncFailed: when it failed (the status store holds it as pending).
        """
        parsed = CatalogChange.model_validate(change)
        report = apply_changes(self.deps, [parsed], self.rt.sync_status, after=False)
        [outcome] = report.outcomes
        self.embedded += report.stats.embedded_texts
        self.stats.add(report.stats)
        self.touched += report.unchanged_ids
        if report.written:
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
        schema = self.deps.schema
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
        """After the batch: the after-write sequence once, over every record the batch wrote
        (when anything was written); publish the outcome counts."""
        version = None
        if self.written:
            version = after_write(self.deps, self.stats, touched=self.touched)
            if version is None:  # cached answers expire by TTL
                logger.warning("catalog version not bumped: the cache is unreachable")
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
        with publishing(batch.deps):  # edge-s3: under the lease, one publish after the write
            try:
                out = batch.apply(event)
            finally:
                summary = batch.finish()
        logger.info("catalog event applied", extra={"outcome": out, **summary})
        return {**out, **summary}

    processor = BatchProcessor(event_type=EventType.DynamoDBStreams)

    def record_handler(record: DynamoDBRecord) -> dict[str, Any]:
        return batch.apply(record.raw_event)

    with publishing(batch.deps):  # edge-s3: the whole batch makes one snapshot
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


__all__ = ["Batch", "SyncFailed", "catalog_sync"]
