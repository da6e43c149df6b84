"""Where sync entries live (the :class:`~agentic_search.ports.SyncStatusStore` port; the
entries themselves are :mod:`agentic_search.wire.sync`).

Backends: :class:`SqliteSyncStatus` (the embedded default, ``$AGENTIC_SEARCH_HOME/sync.sqlite``)
and :class:`DynamoDBSyncStatus` (``SYNC_STATUS_TABLE``: key ``pk`` = ``<domain>#<id>``, a GSI
``byStatus`` on ``statusKey`` = ``<domain>#<status>``, TTL attribute ``expiresAt``).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from agentic_search.ports import SyncStatusError
from agentic_search.wire.sync import COUNTED, STATUSES, Status, SyncEntry


class SqliteSyncStatus:
    """The embedded status store: one SQLite file (WAL), safe across threads."""

    name = "sqlite"

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=5.0)
            with self._lock, self._db:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute(
                    "CREATE TABLE IF NOT EXISTS sync_status (domain TEXT, record_id TEXT, "
                    "status TEXT, body TEXT, PRIMARY KEY (domain, record_id))"
                )
                self._db.execute(
                    "CREATE INDEX IF NOT EXISTS by_status ON sync_status (domain, status)"
                )
        except sqlite3.Error as exc:
            raise SyncStatusError(
                f"sync status {self.path} cannot be opened: {exc}; move it away and run "
                "agentic-search ingest --rebuild (it records every record anew)"
            ) from exc

    def get(self, domain: str, record_ids: Sequence[str]) -> dict[str, SyncEntry]:
        """Entries of ``record_ids`` that exist."""
        out: dict[str, SyncEntry] = {}
        ids = list(dict.fromkeys(record_ids))
        try:
            with self._lock:
                for i in range(0, len(ids), 500):
                    chunk = ids[i : i + 500]
                    marks = ",".join("?" * len(chunk))
                    rows = self._db.execute(
                        f"SELECT body FROM sync_status WHERE domain = ? AND record_id IN ({marks})",
                        (domain, *chunk),
                    ).fetchall()
                    for (body,) in rows:
                        entry = SyncEntry.model_validate_json(body)
                        out[entry.record_id] = entry
        except sqlite3.Error as exc:
            raise SyncStatusError(f"sync status read failed: {exc}") from exc
        return out

    def put(self, entries: Iterable[SyncEntry]) -> None:
        """Insert or replace entries in one transaction."""
        rows = [
            (e.domain, e.record_id, e.status, e.model_dump_json(by_alias=True)) for e in entries
        ]
        try:
            with self._lock, self._db:
                self._db.executemany("INSERT OR REPLACE INTO sync_status VALUES (?, ?, ?, ?)", rows)
        except sqlite3.Error as exc:
            raise SyncStatusError(f"sync status write failed: {exc}") from exc

    def list(self, domain: str, status: Status, limit: int = 100) -> list[SyncEntry]:
        """Entries of one status, by record id."""
        try:
            with self._lock:
                rows = self._db.execute(
                    "SELECT body FROM sync_status WHERE domain = ? AND status = ? "
                    "ORDER BY record_id LIMIT ?",
                    (domain, status, limit),
                ).fetchall()
        except sqlite3.Error as exc:
            raise SyncStatusError(f"sync status read failed: {exc}") from exc
        return [SyncEntry.model_validate_json(b) for (b,) in rows]

    def counts(self, domain: str) -> dict[str, int]:
        """Entries per status; the tombstones of deleted records apart, as ``deleted`` (see
        :data:`~agentic_search.wire.sync.COUNTED`)."""
        try:
            with self._lock:
                rows = self._db.execute(
                    "SELECT CASE WHEN status = 'synced' AND json_extract(body, '$.deleted') "
                    "THEN 'deleted' ELSE status END AS counted, COUNT(*) FROM sync_status "
                    "WHERE domain = ? GROUP BY counted",
                    (domain,),
                ).fetchall()
        except sqlite3.Error as exc:
            raise SyncStatusError(f"sync status read failed: {exc}") from exc
        return {s: 0 for s in COUNTED} | {s: int(n) for s, n in rows}

    def close(self) -> None:
        """Close the connection."""
        self._db.close()


class DynamoDBSyncStatus:
    """The deployed status store; see the module docstring for the table layout.

    Items: ``pk`` (S), ``statusKey`` (S, GSI ``byStatus`` hash key), ``recordId`` (S, GSI range
    key), ``body`` (S, the entry's JSON) and, for tombstones, ``expiresAt`` (N, the TTL).
    """

    name = "dynamodb"
    INDEX = "byStatus"

    def __init__(self, table: str, client: Any | None = None) -> None:
        if client is None:
            import boto3

            client = boto3.client("dynamodb")
        self.table = table
        self._client = client

    @staticmethod
    def _pk(domain: str, record_id: str) -> str:
        return f"{domain}#{record_id}"

    def get(self, domain: str, record_ids: Sequence[str]) -> dict[str, SyncEntry]:
        """BatchGetItem in chunks of 100 (unprocessed keys are retried)."""
        out: dict[str, SyncEntry] = {}
        ids = list(dict.fromkeys(record_ids))
        try:
            for i in range(0, len(ids), 100):
                keys: list[dict[str, Any]] = [
                    {"pk": {"S": self._pk(domain, r)}} for r in ids[i : i + 100]
                ]
                request: dict[str, Any] = {self.table: {"Keys": keys, "ConsistentRead": True}}
                while request:
                    resp = self._client.batch_get_item(RequestItems=request)
                    for item in resp.get("Responses", {}).get(self.table, []):
                        entry = SyncEntry.model_validate_json(item["body"]["S"])
                        out[entry.record_id] = entry
                    request = resp.get("UnprocessedKeys") or {}
        except Exception as exc:
            raise SyncStatusError(f"dynamodb sync status read failed: {exc}") from exc
        return out

    def put(self, entries: Iterable[SyncEntry]) -> None:
        """BatchWriteItem in chunks of 25 (unprocessed items are retried)."""
        items = []
        for e in entries:
            item: dict[str, Any] = {
                "pk": {"S": self._pk(e.domain, e.record_id)},
                "statusKey": {"S": f"{e.domain}#{e.status}"},
                "recordId": {"S": e.record_id},
                "body": {"S": e.model_dump_json(by_alias=True)},
            }
            if e.expires_at is not None:
                item["expiresAt"] = {"N": str(e.expires_at)}
            items.append({"PutRequest": {"Item": item}})
        try:
            for i in range(0, len(items), 25):
                request: dict[str, Any] = {self.table: items[i : i + 25]}
                while request:
                    resp = self._client.batch_write_item(RequestItems=request)
                    request = resp.get("UnprocessedItems") or {}
        except Exception as exc:
            raise SyncStatusError(f"dynamodb sync status write failed: {exc}") from exc

    def _query(
        self, domain: str, status: str, limit: int | None, count: bool, where: str | None = None
    ) -> Any:
        kwargs: dict[str, Any] = {
            "TableName": self.table,
            "IndexName": self.INDEX,
            "KeyConditionExpression": "statusKey = :s",
            "ExpressionAttributeValues": {":s": {"S": f"{domain}#{status}"}},
        }
        if where is not None:
            kwargs["FilterExpression"] = where
        if count:
            kwargs["Select"] = "COUNT"
        total, items = 0, []
        while True:
            if limit is not None:
                kwargs["Limit"] = limit - len(items)
            resp = self._client.query(**kwargs)
            total += int(resp.get("Count", 0))
            items += resp.get("Items", [])
            if "LastEvaluatedKey" not in resp or (limit is not None and len(items) >= limit):
                break
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]
        return total if count else items

    def list(self, domain: str, status: Status, limit: int = 100) -> list[SyncEntry]:
        """Query the ``byStatus`` index."""
        try:
            items = self._query(domain, status, limit, count=False)
        except Exception as exc:
            raise SyncStatusError(f"dynamodb sync status query failed: {exc}") from exc
        return [SyncEntry.model_validate_json(i["body"]["S"]) for i in items]

    def counts(self, domain: str) -> dict[str, int]:
        """One COUNT query per status on the ``byStatus`` index; the synced entries split into
        live records and tombstones (``deleted``: the only entries with ``expiresAt``)."""
        try:
            out = {s: int(self._query(domain, s, None, count=True)) for s in STATUSES}
            out["deleted"] = int(
                self._query(domain, "synced", None, count=True, where="attribute_exists(expiresAt)")
            )
            out["synced"] -= out["deleted"]
            return out
        except Exception as exc:
            raise SyncStatusError(f"dynamodb sync status query failed: {exc}") from exc
