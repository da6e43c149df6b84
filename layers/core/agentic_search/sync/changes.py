"""Catalog changes: what a DynamoDB stream record, an EventBridge ``catalog.changed`` event or a
file record says happened to one record, parsed and validated into a :class:`CatalogChange`.

A :class:`CatalogChange` is ``insert`` / ``modify`` / ``remove`` of one record at a ``version``
(an integer that grows with every change of the catalog: the stream record's ``SequenceNumber``,
or ``detail.version`` of a ``catalog.changed`` event; ``None`` = apply unconditionally, what
``ingest`` sends). Both event shapes parse into it:

* DynamoDB stream record (``NEW_AND_OLD_IMAGES``): ``eventName`` INSERT / MODIFY / REMOVE, the
  image under ``dynamodb.NewImage`` (``OldImage`` for REMOVE), typed attribute values converted
  with boto3's ``TypeDeserializer``; numbers come back as ``Decimal`` and become ``int`` when
  integral, ``float`` otherwise; string and number sets become sorted lists; binary values are
  refused (no catalog field is binary).
* EventBridge ``catalog.changed`` event: ``detail`` = ``{"operation": insert|modify|update|
  replace|remove|delete, "recordId", "version", "record" (or MongoDB's ``operationType``,
  ``documentKey._id``, ``fullDocument``), "domain"}``.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentic_search.domain.schema import DomainSchema, RecordError


class ChangeError(ValueError):
    """An event or record that cannot be parsed into a change (names what is wrong)."""


class ChangeOp(StrEnum):
    """What happened to the record."""

    INSERT = "insert"
    MODIFY = "modify"
    REMOVE = "remove"


_OPS = {
    "insert": ChangeOp.INSERT,
    "modify": ChangeOp.MODIFY,
    "update": ChangeOp.MODIFY,
    "replace": ChangeOp.MODIFY,
    "upsert": ChangeOp.MODIFY,
    "remove": ChangeOp.REMOVE,
    "delete": ChangeOp.REMOVE,
}


class CatalogChange(BaseModel):
    """One change of one catalog record (see the module docstring).

    ``record`` is the validated new image (None for ``remove``); ``dedupe_key`` is what the
    Lambda idempotency layer keys on (record id + version, or the event id when unversioned).
    """

    model_config = ConfigDict(populate_by_name=True, frozen=True)

    op: ChangeOp
    domain: str = "tools"
    record_id: str = Field(alias="recordId", min_length=1)
    version: int | None = None
    record: dict[str, Any] | None = None
    source: Literal["dynamodb", "eventbridge", "file", "redrive"] = "file"
    event_id: str | None = Field(default=None, alias="eventId")

    @property
    def dedupe_key(self) -> str:
        """``<domain>:<id>@<version>`` (``#<event id>`` when there is no version)."""
        tail = f"@{self.version}" if self.version is not None else f"#{self.event_id or ''}"
        return f"{self.domain}:{self.record_id}{tail}"

    def wire(self) -> dict[str, Any]:
        """JSON-able dict (camelCase), what :meth:`model_validate` reads back."""
        out = self.model_dump(by_alias=True, mode="json")
        out["dedupeKey"] = self.dedupe_key
        return out


def plain_value(value: Any) -> Any:
    """A value from boto3's ``TypeDeserializer`` as plain JSON: Decimal -> int or float, sets
    -> sorted lists, nested maps and lists converted.

    Raises:
        ChangeError: for binary values.
    """
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: plain_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_value(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(plain_value(v) for v in value)
    if isinstance(value, bytes | bytearray) or type(value).__name__ == "Binary":
        raise ChangeError("binary attribute values are not supported in catalog records")
    return value


def deserialize_image(image: dict[str, Any]) -> dict[str, Any]:
    """A DynamoDB typed image (``{"name": {"S": "x"}, ...}``) as a plain dict.

    Raises:
        ChangeError: for a malformed typed value or a binary one.
    """
    from boto3.dynamodb.types import TypeDeserializer

    deserializer = TypeDeserializer()
    try:
        return {k: plain_value(deserializer.deserialize(v)) for k, v in image.items()}
    except (TypeError, ValueError, AttributeError) as exc:
        raise ChangeError(f"malformed DynamoDB image: {exc}") from exc


def _validated(schema: DomainSchema, raw: Any, what: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ChangeError(f"{what}: expected an object, got {type(raw).__name__}")
    try:
        return schema.validate_record(raw)
    except RecordError as exc:
        raise ChangeError(f"{what}: {exc}") from exc


def change_from_stream_record(record: dict[str, Any], schema: DomainSchema) -> CatalogChange:
    """A DynamoDB stream record (NEW_AND_OLD_IMAGES) as a change; version = SequenceNumber.

    Raises:
        ChangeError: naming what is missing or invalid.
    """
    name = str(record.get("eventName", "")).lower()
    if name not in _OPS:
        raise ChangeError(f"unknown eventName {record.get('eventName')!r}")
    op = _OPS[name]
    ddb = record.get("dynamodb") or {}
    seq = ddb.get("SequenceNumber")
    try:
        version = int(seq) if seq is not None else None
    except (TypeError, ValueError):
        raise ChangeError(f"SequenceNumber {seq!r} is not a number") from None
    keys = deserialize_image(ddb.get("Keys") or {})
    rid = keys.get(schema.id_field)
    if op is ChangeOp.REMOVE:
        old = deserialize_image(ddb.get("OldImage") or {})
        rid = rid if rid is not None else old.get(schema.id_field)
        if rid is None:
            raise ChangeError(f"REMOVE without the key {schema.id_field!r}")
        return CatalogChange(
            op=op,
            domain=schema.name,
            record_id=str(rid),
            version=version,
            source="dynamodb",
            event_id=record.get("eventID"),
        )
    if "NewImage" not in ddb:
        raise ChangeError(f"{name.upper()} without NewImage (stream view: NEW_AND_OLD_IMAGES)")
    rec = _validated(schema, deserialize_image(ddb["NewImage"]), f"record {rid!r}")
    return CatalogChange(
        op=op,
        domain=schema.name,
        record_id=rec[schema.id_field],
        version=version,
        record=rec,
        source="dynamodb",
        event_id=record.get("eventID"),
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
    if op_name not in _OPS:
        raise ChangeError(f"unknown operation {op_name or None!r} (insert, modify or remove)")
    op = _OPS[op_name]
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
        rec = _validated(schema, raw, f"record {rid!r}")
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


def is_stream_record(item: Any) -> bool:
    """Whether ``item`` looks like a DynamoDB stream record."""
    return isinstance(item, dict) and (
        item.get("eventSource") == "aws:dynamodb" or ("dynamodb" in item and "eventName" in item)
    )


def is_eventbridge_event(item: Any) -> bool:
    """Whether ``item`` looks like an EventBridge event."""
    return isinstance(item, dict) and "detail" in item and "detail-type" in item


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
            rec = _validated(schema, change.record, f"record {change.record_id!r}")
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


def insert_changes(schema: DomainSchema, records: Iterable[dict[str, Any]]) -> list[CatalogChange]:
    """Validated records as unversioned inserts (what ``ingest`` applies)."""
    return [
        CatalogChange(
            op=ChangeOp.INSERT, domain=schema.name, record_id=r[schema.id_field], record=r
        )
        for r in records
    ]


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
