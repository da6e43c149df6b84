"""Exact-match result and plan caches and the catalog version they key on.

A cached entry is a whole search response. The key is a SHA-256 over the normalized query, the
request's limit and rounds, the domain, the domain schema's version and the catalog version, so
an entry never outlives the catalog it was computed on: every write to the index bumps the
catalog version (:meth:`ResultCache.bump_catalog_version`). The match is exact on purpose: "free
code editors" and "paid code editors" are one word apart and need opposite filters, so a
semantic (nearest-neighbour) cache would serve the wrong answer.

The plan cache (intent + plan of the LLM path, :func:`plan_cache_key`) lives in the same
backend under ``plan:`` keys with its own TTL (``PLAN_CACHE_TTL_S``); it saves the LLM calls
of a query asked again with another limit or after its result expired, until the catalog or
the schema changes.

Backends: :class:`SqliteCache` (the embedded default, a file beside the local store),
:class:`DynamoDBCache` (a table with a TTL attribute ``expiresAt``; the deployed default) and
:class:`NullCache` (``CACHE_BACKEND=none``). Responses that carry source errors are not
stored: a partial answer must not be served after the source recovers.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
import unicodedata
from pathlib import Path
from typing import Any, Protocol

from agentic_search.config import Settings


class CacheError(RuntimeError):
    """The cache backend failed (the search goes on without it)."""


def normalize_query(query: str) -> str:
    """NFKC, case-folded, whitespace collapsed: what makes two queries the same query."""
    return " ".join(unicodedata.normalize("NFKC", query).casefold().split())


def cache_key(
    query: str,
    *,
    limit: int,
    rounds: int | None,
    domain: str,
    schema_version: str,
    catalog_version: int,
) -> str:
    """Hex SHA-256 of the normalized query and everything the response depends on."""
    material = json.dumps(
        {
            "q": normalize_query(query),
            "limit": limit,
            "rounds": rounds,
            "domain": domain,
            "schema": schema_version,
            "catalog": catalog_version,
        },
        sort_keys=True,
    )
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


def plan_cache_key(
    query: str,
    *,
    domain: str,
    limit: int,
    schema_version: str,
    catalog_version: int,
    planner: str,
) -> str:
    """Key of the exact-match plan cache: ``plan:`` + hex SHA-256 of the normalized query, the
    domain, the limit (topK follows it), the schema and catalog versions and the planner
    (``llm:<model>``: another model may plan differently). Exact on purpose, as for results:
    "free code editors" and "paid code editors" need opposite filters."""
    material = json.dumps(
        {
            "q": normalize_query(query),
            "domain": domain,
            "limit": limit,
            "schema": schema_version,
            "catalog": catalog_version,
            "planner": planner,
        },
        sort_keys=True,
    )
    return "plan:" + hashlib.sha256(material.encode("utf-8")).hexdigest()


class ResultCache(Protocol):
    """A TTL'd key -> JSON store plus a per-domain catalog version counter."""

    name: str

    def get(self, key: str) -> dict[str, Any] | None:
        """The unexpired value under ``key``, else None. Raises :class:`CacheError`."""
        ...

    def put(self, key: str, value: dict[str, Any], ttl_s: int) -> None:
        """Store ``value`` for ``ttl_s`` seconds. Raises :class:`CacheError`."""
        ...

    def catalog_version(self, domain: str) -> int:
        """The domain's catalog version (0 before any write)."""
        ...

    def bump_catalog_version(self, domain: str) -> int:
        """Increment and return the domain's catalog version."""
        ...


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


def build_cache(settings: Settings) -> ResultCache:
    """The cache ``CACHE_BACKEND`` selects (auto: DynamoDB when ``CACHE_TABLE`` is set).

    Raises:
        ValueError: for ``dynamodb`` without ``CACHE_TABLE``.
    """
    backend = settings.cache_backend
    if backend == "auto":
        backend = "dynamodb" if settings.cache_table else "sqlite"
    if backend == "none":
        return NullCache()
    if backend == "dynamodb":
        if not settings.cache_table:
            raise ValueError("CACHE_BACKEND=dynamodb needs CACHE_TABLE")
        return DynamoDBCache(settings.cache_table)
    return SqliteCache(settings.cache_path)
