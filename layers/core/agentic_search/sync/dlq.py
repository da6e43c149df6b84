"""What a dead-letter message of the catalog sync holds, whatever delivered it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentic_search.sync.events import event_items


@dataclass(frozen=True)
class StreamRange:
    """A stream batch the Lambda event source mapping gave up on (its on-failure record)."""

    stream_arn: str
    shard_id: str
    start: str
    end: str
    size: int


def dlq_message_items(body: Any) -> tuple[list[Any], StreamRange | None, str]:
    """What a dead-letter message holds: ``(stream records or events, stream range, error)``.

    Three shapes: the event source mapping's on-failure record (``DDBStreamBatchInfo``: only
    the range; the records must be read from the stream), Lambda's asynchronous on-failure
    record (``requestPayload`` = the EventBridge event), and an EventBridge rule's DLQ message
    (the event itself).
    """
    if not isinstance(body, dict):
        return [], None, "dead-letter message is not a JSON object"
    context = body.get("requestContext") or {}
    condition = context.get("condition") or "Unknown"
    if "DDBStreamBatchInfo" in body:
        info = body["DDBStreamBatchInfo"]
        rng = StreamRange(
            stream_arn=info["streamArn"],
            shard_id=info["shardId"],
            start=str(info["startSequenceNumber"]),
            end=str(info["endSequenceNumber"]),
            size=int(info.get("batchSize") or 0),
        )
        return [], rng, f"stream batch failed ({condition})"
    if "requestPayload" in body:
        payload = body.get("responsePayload") or {}
        message = payload.get("errorMessage") if isinstance(payload, dict) else None
        error = f"{condition}: {message}" if message else f"invocation failed ({condition})"
        return event_items(body["requestPayload"]), None, error
    return [body], None, "event delivery failed"
