"""Sync status: per record and aspect, what the index holds and what is still to do.

One :class:`SyncEntry` per (domain, record id) says which catalog version the index reflects
(``appliedVersion``), whether the record is ``synced``, ``pending`` (a change failed and waits for
a retry) or ``failed`` (parked after the last attempt), each aspect's content hash and last sync
time, the retry count, the last error, and for pending/failed entries the change to re-apply.

The entry is also the out-of-order guard: a change whose version is not newer than
``appliedVersion`` is stale and skipped. A deleted record keeps its entry as a tombstone (so a
late, older modify cannot bring it back) with ``expiresAt`` set: tombstones outlive the DLQ's 14
days of retention (:data:`TOMBSTONE_TTL_S` = 30 days) and then expire. Where entries live is the
:class:`~agentic_search.ports.SyncStatusStore` port (SQLite or DynamoDB adapters).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Status = Literal["synced", "pending", "failed"]
STATUSES: tuple[Status, ...] = ("synced", "pending", "failed")
#: What ``SyncStatusStore.counts`` counts: the statuses, with a deleted record's tombstone (a
#: synced entry with ``deleted``) counted apart as ``deleted``, so that ``synced`` is the number
#: of records the index holds.
COUNTED: tuple[str, ...] = (*STATUSES, "deleted")
#: How long a delete's tombstone is kept (s): longer than the DLQ keeps a message (14 days).
TOMBSTONE_TTL_S = 30 * 86400


@dataclass(frozen=True)
class Holdings:
    """What the sync status says a domain's index holds: ``records`` synced points (not
    counting tombstones) and a ``sample`` of their ids (a store holding fewer, or lacking one
    of these or one of its vectors, lost data)."""

    records: int
    sample: list[str] = field(default_factory=list)


class AspectStatus(BaseModel):
    """One aspect of a record: its content hash, status and last sync time (epoch s)."""

    model_config = ConfigDict(populate_by_name=True)

    status: Status = "synced"
    content_hash: str | None = Field(default=None, alias="contentHash")
    last_synced_at: float | None = Field(default=None, alias="lastSyncedAt")


class SyncEntry(BaseModel):
    """The sync state of one record; see the module docstring. Times are epoch seconds."""

    model_config = ConfigDict(populate_by_name=True)

    domain: str
    record_id: str = Field(alias="recordId")
    status: Status = "synced"
    applied_version: int | None = Field(default=None, alias="appliedVersion")
    deleted: bool = False
    aspects: dict[str, AspectStatus] = Field(default_factory=dict)
    last_synced_at: float | None = Field(default=None, alias="lastSyncedAt")
    retry_count: int = Field(default=0, alias="retryCount")
    last_error: str | None = Field(default=None, alias="lastError")
    next_attempt_at: float | None = Field(default=None, alias="nextAttemptAt")
    updated_at: float = Field(default=0.0, alias="updatedAt")
    change: dict[str, Any] | None = None
    expires_at: int | None = Field(default=None, alias="expiresAt")

    def wire(self) -> dict[str, Any]:
        """JSON-able dict with camelCase keys (what the /sync API returns)."""
        return self.model_dump(by_alias=True, mode="json")


__all__ = [
    "COUNTED",
    "STATUSES",
    "TOMBSTONE_TTL_S",
    "AspectStatus",
    "Holdings",
    "Status",
    "SyncEntry",
]
