"""Catalog changes: what happened to one record, at which version.

A :class:`CatalogChange` is ``insert`` / ``modify`` / ``remove`` of one record at a ``version``
(an integer that grows with every change of the catalog: the stream record's ``SequenceNumber``,
or ``detail.version`` of a ``catalog.changed`` event; ``None`` = apply unconditionally, what
``ingest`` sends). Where changes come from: :mod:`.stream_records` (DynamoDB streams),
:mod:`.eventbridge` (``catalog.changed`` events), :mod:`.events` (either, and the documents
that hold several).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentic_search.logic.schema import DomainSchema, RecordError


class ChangeError(ValueError):
    """An event or record that cannot be parsed into a change (names what is wrong)."""


class ChangeOp(StrEnum):
    """What happened to the record."""

    INSERT = "insert"
    MODIFY = "modify"
    REMOVE = "remove"


#: Operation names of every source (stream eventName, event operation, MongoDB operationType).
OPERATIONS = {
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


def validated_record(schema: DomainSchema, raw: Any, what: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ChangeError(f"{what}: expected an object, got {type(raw).__name__}")
    try:
        return schema.validate_record(raw)
    except RecordError as exc:
        raise ChangeError(f"{what}: {exc}") from exc


def insert_changes(schema: DomainSchema, records: Iterable[dict[str, Any]]) -> list[CatalogChange]:
    """Validated records as unversioned inserts (what ``ingest`` applies)."""
    return [
        CatalogChange(
            op=ChangeOp.INSERT, domain=schema.name, record_id=r[schema.id_field], record=r
        )
        for r in records
    ]
