"""Lambda glue of the full reindex: ReindexBatchFunction applies one batch of records of the
reindex Distributed Map (``statemachine/reindex.asl.json``) through the one writer."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from agentic_search.sync.apply import SyncReport, apply_changes
from agentic_search.sync.changes import ChangeError
from agentic_search.sync.events import parse_change
from agentic_search.sync.published import publishing
from agentic_search_lambda.observability import count
from agentic_search_lambda.runtime import runtime


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
    deps = runtime().sync_dependencies()
    items = event.get("Items") if isinstance(event.get("Items"), list) else [event]
    changes, problems = [], []
    for n, item in enumerate(items):
        try:
            changes.append(
                parse_change(
                    {
                        "op": "modify",
                        "domain": deps.schema.name,  # SYNC_DOMAIN, not the default tools
                        "recordId": str(item.get(deps.schema.id_field, "")),
                        "record": item,
                    }
                    if isinstance(item, dict)
                    else item,
                    deps.schema,
                )
            )
        except ChangeError as exc:
            problems.append(f"item {n}: {exc}")
    with publishing(deps):  # edge-s3: under the lease, one publish per batch
        report: SyncReport = apply_changes(deps, changes, None)
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


__all__ = ["ReindexBatchFailed", "reindex_batch"]
