"""DynamoDB stream records (``NEW_AND_OLD_IMAGES``) as catalog changes: ``eventName`` INSERT /
MODIFY / REMOVE, the image under ``dynamodb.NewImage`` (``OldImage`` for REMOVE), typed
attribute values converted with boto3's ``TypeDeserializer``; numbers come back as
``Decimal`` and become ``int`` when integral, ``float`` otherwise; string and number sets
become sorted lists; binary values are refused (no catalog field is binary)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from agentic_search.logic.schema import DomainSchema
from agentic_search.sync.changes import (
    CatalogChange,
    ChangeError,
    ChangeOp,
    validated_record,
)

#: A DynamoDB stream's event names (exactly these: "UPSERT" or "insert" is not a stream's).
STREAM_EVENTS = {"INSERT": ChangeOp.INSERT, "MODIFY": ChangeOp.MODIFY, "REMOVE": ChangeOp.REMOVE}


def plain_value(value: Any) -> Any:
    """A value from boto3's ``TypeDeserializer`` as plain JSON: Decimal -> int or float, sets
    -> sorted lists, nested maps and lists converted.

    Raises:
        ChangeError: for binary values.
    """
    if isinstance(value, Decimal):
        if not value.is_finite():  # {"N": "abc"} parses as NaN, {"N": "Infinity"} as inf
            raise ChangeError(f"number {str(value)!r} is not a finite number")
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
    except (TypeError, ValueError, AttributeError, ArithmeticError) as exc:
        raise ChangeError(f"malformed DynamoDB image: {exc}") from exc


def change_from_stream_record(record: dict[str, Any], schema: DomainSchema) -> CatalogChange:
    """A DynamoDB stream record (NEW_AND_OLD_IMAGES) as a change; version = SequenceNumber.

    Raises:
        ChangeError: naming what is missing or invalid: an ``eventName`` other than INSERT,
            MODIFY or REMOVE, a number that does not parse, a ``Keys`` id that differs from
            the ``NewImage``'s.
    """
    event = record.get("eventName")
    if event not in STREAM_EVENTS:
        raise ChangeError(f"unknown eventName {event!r} (a stream has INSERT, MODIFY, REMOVE)")
    name = str(event).lower()
    op = STREAM_EVENTS[event]
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
    rec = validated_record(schema, deserialize_image(ddb["NewImage"]), f"record {rid!r}")
    if rid is not None and str(rid) != rec[schema.id_field]:
        raise ChangeError(
            f"Keys.{schema.id_field} {str(rid)!r} differs from "
            f"NewImage.{schema.id_field} {rec[schema.id_field]!r}"
        )
    return CatalogChange(
        op=op,
        domain=schema.name,
        record_id=rec[schema.id_field],
        version=version,
        record=rec,
        source="dynamodb",
        event_id=record.get("eventID"),
    )


def is_stream_record(item: Any) -> bool:
    """Whether ``item`` looks like a DynamoDB stream record."""
    return isinstance(item, dict) and (
        item.get("eventSource") == "aws:dynamodb" or ("dynamodb" in item and "eventName" in item)
    )
