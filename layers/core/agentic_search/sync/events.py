"""Change events of any source: one stream record or event parsed into a change, the items of
a document that holds several (a stream batch, a list, JSON lines), and the record id a
change that cannot be parsed still names."""

from __future__ import annotations

from typing import Any

from agentic_search.logic.schema import DomainSchema
from agentic_search.sync.changes import CatalogChange, ChangeError, ChangeOp, validated_record
from agentic_search.sync.eventbridge import change_from_eventbridge, is_eventbridge_event
from agentic_search.sync.stream_records import (
    change_from_stream_record,
    deserialize_image,
    is_stream_record,
)


def parse_change(item: Any, schema: DomainSchema) -> CatalogChange:
    """One stream record, EventBridge event, or change dict (:meth:`CatalogChange.wire`).

    Raises:
        ChangeError: when ``item`` is none of those or does not parse.
    """
    if is_stream_record(item):
        return change_from_stream_record(item, schema)
    if is_eventbridge_event(item):
        return change_from_eventbridge(item, schema)
    if isinstance(item, dict) and "op" in item and ("recordId" in item or "record_id" in item):
        try:
            change = CatalogChange.model_validate(item)
        except ValueError as exc:
            raise ChangeError(f"invalid change: {exc}") from exc
        if change.record is not None:
            rec = validated_record(schema, change.record, f"record {change.record_id!r}")
            change = change.model_copy(update={"record": rec})
        elif change.op is not ChangeOp.REMOVE:
            raise ChangeError(f"{change.op} of {change.record_id!r} without a record")
        return change
    raise ChangeError("not a DynamoDB stream record, an EventBridge event or a change")


def event_items(document: Any) -> list[Any]:
    """The items of an events document: ``{"Records": [...]}`` (a stream batch), one
    EventBridge event, or a JSON list mixing stream records, events and stream batches."""
    if isinstance(document, dict) and isinstance(document.get("Records"), list):
        return list(document["Records"])
    if isinstance(document, list):
        out: list[Any] = []
        for item in document:
            if isinstance(item, dict) and isinstance(item.get("Records"), list):
                out += item["Records"]
            else:
                out.append(item)
        return out
    return [document]


def rejected_record_id(item: Any, schema: DomainSchema) -> str | None:
    """The record id an unparseable stream record or event names, when it names one."""
    if not isinstance(item, dict):
        return None
    try:
        if is_stream_record(item):
            ddb = item.get("dynamodb") or {}
            keys = deserialize_image(ddb.get("Keys") or {})
            rid = keys.get(schema.id_field)
        else:
            detail = item.get("detail") or {}
            rid = detail.get("recordId") or (detail.get("record") or {}).get(schema.id_field)
    except (ChangeError, AttributeError):
        return None
    return str(rid) if rid not in (None, "") else None
