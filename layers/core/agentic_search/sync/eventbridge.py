"""EventBridge ``catalog.changed`` events as catalog changes: ``detail`` = ``{"operation":
insert|modify|update|replace|remove|delete, "recordId", "version", "record" (or MongoDB's
``operationType``, ``documentKey._id``, ``fullDocument``), "domain"}``."""

from __future__ import annotations

from typing import Any

from agentic_search.logic.schema import DomainSchema
from agentic_search.sync.changes import (
    OPERATIONS,
    CatalogChange,
    ChangeError,
    ChangeOp,
    validated_record,
)


def change_from_eventbridge(event: dict[str, Any], schema: DomainSchema) -> CatalogChange:
    """A ``catalog.changed`` EventBridge event as a change (see the module docstring).

    Raises:
        ChangeError: naming what is missing or invalid.
    """
    detail = event.get("detail")
    if not isinstance(detail, dict):
        raise ChangeError("EventBridge event without a detail object")
    op_name = str(detail.get("operation") or detail.get("operationType") or "").lower()
    if op_name not in OPERATIONS:
        raise ChangeError(f"unknown operation {op_name or None!r} (insert, modify or remove)")
    op = OPERATIONS[op_name]
    raw = detail.get("record", detail.get("fullDocument"))
    rid = detail.get("recordId")
    if rid is None and isinstance(detail.get("documentKey"), dict):
        rid = detail["documentKey"].get("_id")
    if rid is None and isinstance(raw, dict):
        rid = raw.get(schema.id_field)
    if rid is None or rid == "":
        raise ChangeError("event without a record id (recordId, documentKey._id or record.id)")
    version = detail.get("version")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise ChangeError(f"version {version!r} is not an integer")
    domain = detail.get("domain", schema.name)
    if domain != schema.name:
        raise ChangeError(f"event for domain {domain!r}, this sync serves {schema.name!r}")
    rec = None
    if op is not ChangeOp.REMOVE:
        if isinstance(raw, dict) and schema.id_field not in raw:
            raw = {**raw, schema.id_field: str(rid)}
        rec = validated_record(schema, raw, f"record {rid!r}")
        if rec[schema.id_field] != str(rid):
            raise ChangeError(f"recordId {rid!r} differs from record id {rec[schema.id_field]!r}")
    return CatalogChange(
        op=op,
        domain=schema.name,
        record_id=str(rid),
        version=version,
        record=rec,
        source="eventbridge",
        event_id=event.get("id"),
    )


def is_eventbridge_event(item: Any) -> bool:
    """Whether ``item`` looks like an EventBridge event."""
    return isinstance(item, dict) and "detail" in item and "detail-type" in item
