"""The result (and plan) cache backends of the :class:`~agentic_search.ports.ResultCache` port.

:class:`SqliteCache` (the embedded default, a file beside the local store),
:class:`DynamoDBCache` (a table with a TTL attribute ``expiresAt``; the deployed default) and
:class:`NullCache` (``CACHE_BACKEND=none``). Keys come from :mod:`agentic_search.logic.cache_keys`;
the plan cache (intent + plan of the LLM path) lives in the same backend under ``plan:`` keys
with its own TTL. Responses that carry source errors are not stored (the CacheStore step
decides): a partial answer must not be served after the source recovers.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from agentic_search.ports import CacheError


class NullCache:
    """No caching; the catalog version stays 0."""

    name = "none"

    def get(self, key: str) -> dict[str, Any] | None:
        """Always a miss."""
        return None

    def put(self, key: str, value: dict[str, Any], ttl_s: int) -> None:
        """Nothing is stored."""

    def catalog_version(self, domain: str) -> int:
        """Always 0."""
        return 0

    def bump_catalog_version(self, domain: str) -> int:
        """Always 0."""
        return 0


class SqliteCache:
    """The embedded cache: one SQLite file, safe across threads and processes (WAL)."""

    name = "sqlite"

    def __init__(self, path: Path, clock: Any = time.time) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._clock = clock
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=5.0)
            with self._lock, self._db:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute(
                    "CREATE TABLE IF NOT EXISTS entries "
                    "(key TEXT PRIMARY KEY, value TEXT NOT NULL, expires_at REAL NOT NULL)"
                )
                self._db.execute(
                    "CREATE TABLE IF NOT EXISTS catalog (domain TEXT PRIMARY KEY, version INTEGER)"
                )
        except sqlite3.Error as exc:
            raise CacheError(f"sqlite cache {self.path} cannot be opened: {exc}") from exc

    def get(self, key: str) -> dict[str, Any] | None:
        """The unexpired value under ``key`` (expired rows are deleted on read)."""
        try:
            with self._lock, self._db:
                row = self._db.execute(
                    "SELECT value, expires_at FROM entries WHERE key = ?", (key,)
                ).fetchone()
                if row is None:
                    return None
                if row[1] <= self._clock():
                    self._db.execute("DELETE FROM entries WHERE key = ?", (key,))
                    return None
            return json.loads(row[0])
        except (sqlite3.Error, ValueError) as exc:
            raise CacheError(f"sqlite cache read failed: {exc}") from exc

    def put(self, key: str, value: dict[str, Any], ttl_s: int) -> None:
        """Store ``value`` until now + ``ttl_s``."""
        try:
            with self._lock, self._db:
                self._db.execute(
                    "INSERT OR REPLACE INTO entries VALUES (?, ?, ?)",
                    (key, json.dumps(value), self._clock() + ttl_s),
                )
        except sqlite3.Error as exc:
            raise CacheError(f"sqlite cache write failed: {exc}") from exc

    def catalog_version(self, domain: str) -> int:
        """The stored version, 0 when none."""
        try:
            with self._lock:
                row = self._db.execute(
                    "SELECT version FROM catalog WHERE domain = ?", (domain,)
                ).fetchone()
        except sqlite3.Error as exc:
            raise CacheError(f"sqlite catalog version read failed: {exc}") from exc
        return int(row[0]) if row else 0

    def bump_catalog_version(self, domain: str) -> int:
        """Increment atomically; returns the new version."""
        try:
            with self._lock, self._db:
                self._db.execute(
                    "INSERT INTO catalog VALUES (?, 1) "
                    "ON CONFLICT(domain) DO UPDATE SET version = version + 1",
                    (domain,),
                )
                row = self._db.execute(
                    "SELECT version FROM catalog WHERE domain = ?", (domain,)
                ).fetchone()
        except sqlite3.Error as exc:
            raise CacheError(f"sqlite catalog version update failed: {exc}") from exc
        return int(row[0])

    def close(self) -> None:
        """Close the connection."""
        self._db.close()


class DynamoDBCache:
    """The deployed cache: a DynamoDB table keyed on ``pk`` with TTL attribute ``expiresAt``.

    Entries are items ``{"pk": "result#<key>", "value": <json>, "expiresAt": <epoch s>}``
    (``get`` also checks ``expiresAt``: DynamoDB deletes expired items only eventually); the
    catalog version is the item ``{"pk": "catalog#<domain>", "version": n}``.
    """

    name = "dynamodb"

    def __init__(self, table: str, client: Any | None = None, clock: Any = time.time) -> None:
        if client is None:
            import boto3

            client = boto3.client("dynamodb")
        self.table = table
        self._client = client
        self._clock = clock

    def get(self, key: str) -> dict[str, Any] | None:
        """The unexpired value under ``key``."""
        try:
            item = self._client.get_item(
                TableName=self.table, Key={"pk": {"S": f"result#{key}"}}
            ).get("Item")
        except Exception as exc:
            raise CacheError(f"dynamodb cache read failed: {exc}") from exc
        if not item or float(item["expiresAt"]["N"]) <= self._clock():
            return None
        return json.loads(item["value"]["S"])

    def put(self, key: str, value: dict[str, Any], ttl_s: int) -> None:
        """Put the item with ``expiresAt`` = now + ``ttl_s``."""
        try:
            self._client.put_item(
                TableName=self.table,
                Item={
                    "pk": {"S": f"result#{key}"},
                    "value": {"S": json.dumps(value)},
                    "expiresAt": {"N": str(int(self._clock() + ttl_s))},
                },
            )
        except Exception as exc:
            raise CacheError(f"dynamodb cache write failed: {exc}") from exc

    def catalog_version(self, domain: str) -> int:
        """The ``catalog#<domain>`` item's version, 0 when absent."""
        try:
            item = self._client.get_item(
                TableName=self.table, Key={"pk": {"S": f"catalog#{domain}"}}
            ).get("Item")
        except Exception as exc:
            raise CacheError(f"dynamodb catalog version read failed: {exc}") from exc
        return int(item["version"]["N"]) if item else 0

    def bump_catalog_version(self, domain: str) -> int:
        """Atomic ADD on the version attribute."""
        try:
            out = self._client.update_item(
                TableName=self.table,
                Key={"pk": {"S": f"catalog#{domain}"}},
                UpdateExpression="ADD version :one",
                ExpressionAttributeValues={":one": {"N": "1"}},
                ReturnValues="UPDATED_NEW",
            )
        except Exception as exc:
            raise CacheError(f"dynamodb catalog version update failed: {exc}") from exc
        return int(out["Attributes"]["version"]["N"])
