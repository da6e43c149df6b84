"""The :class:`~agentic_search.ports.EnrichmentStore`: LLM answers by cache key in one SQLite
file beside the index (``<home>/enrichment.sqlite``; WAL, one transaction per answer, so an
answer is kept the moment it is written and a killed ingest loses none of those before it).

The index itself carries each record's filtered enrichment in its payload (what a deployed
shard or collection ships); this file keeps the raw answers between ingests, the records whose
enrichment failed last, and the catalog's mean record vector the filter compares with.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS failures (
    domain TEXT NOT NULL, record_id TEXT NOT NULL, reason TEXT NOT NULL,
    PRIMARY KEY (domain, record_id));
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class SqliteEnrichmentStore:
    """Answers, failures and metadata in the SQLite file ``path`` (created on first use)."""

    name = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _absent(self) -> bool:
        """Whether nothing was ever kept (no file): a read then creates none."""
        return self._conn is None and not self.path.is_file()

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)
            self._conn = conn
        return self._conn

    def get_many(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        """See :meth:`EnrichmentStore.get_many`."""
        out: dict[str, dict[str, Any]] = {}
        keys = list(dict.fromkeys(keys))
        with self._lock:
            if self._absent():
                return out
            db = self._db()
            for i in range(0, len(keys), 500):
                part = keys[i : i + 500]
                marks = ",".join("?" * len(part))
                rows = db.execute(f"SELECT key, answer FROM answers WHERE key IN ({marks})", part)
                out.update({k: json.loads(a) for k, a in rows})
        return out

    def put(self, key: str, answer: dict[str, Any]) -> None:
        """See :meth:`EnrichmentStore.put` (committed before it returns)."""
        with self._lock:
            db = self._db()
            db.execute(
                "INSERT OR REPLACE INTO answers (key, answer) VALUES (?, ?)",
                (key, json.dumps(answer, sort_keys=True)),
            )
            db.commit()

    def set_failures(self, domain: str, failures: Mapping[str, str]) -> None:
        """See :meth:`EnrichmentStore.set_failures`."""
        with self._lock:
            db = self._db()
            db.execute("DELETE FROM failures WHERE domain = ?", (domain,))
            db.executemany(
                "INSERT INTO failures (domain, record_id, reason) VALUES (?, ?, ?)",
                [(domain, rid, reason[:500]) for rid, reason in failures.items()],
            )
            db.commit()

    def failures(self, domain: str) -> dict[str, str]:
        """See :meth:`EnrichmentStore.failures`."""
        with self._lock:
            if self._absent():
                return {}
            rows = self._db().execute(
                "SELECT record_id, reason FROM failures WHERE domain = ? ORDER BY record_id",
                (domain,),
            )
            return dict(rows.fetchall())

    def get_meta(self, name: str) -> Any:
        """See :meth:`EnrichmentStore.get_meta`."""
        with self._lock:
            if self._absent():
                return None
            row = self._db().execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return json.loads(row[0]) if row else None

    def set_meta(self, name: str, value: Any) -> None:
        """See :meth:`EnrichmentStore.set_meta`."""
        with self._lock:
            db = self._db()
            db.execute(
                "INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)", (name, json.dumps(value))
            )
            db.commit()

    def close(self) -> None:
        """Close the connection (reopened on next use)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class MemoryEnrichmentStore:
    """The same in memory (tests, and a process that keeps nothing between runs)."""

    name = "memory"

    def __init__(self) -> None:
        self.answers: dict[str, dict[str, Any]] = {}
        self._failures: dict[str, dict[str, str]] = {}
        self._meta: dict[str, Any] = {}

    def get_many(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        return {k: self.answers[k] for k in keys if k in self.answers}

    def put(self, key: str, answer: dict[str, Any]) -> None:
        self.answers[key] = json.loads(json.dumps(answer))

    def set_failures(self, domain: str, failures: Mapping[str, str]) -> None:
        self._failures[domain] = dict(failures)

    def failures(self, domain: str) -> dict[str, str]:
        return dict(self._failures.get(domain, {}))

    def get_meta(self, name: str) -> Any:
        return self._meta.get(name)

    def set_meta(self, name: str, value: Any) -> None:
        self._meta[name] = value


__all__ = ["MemoryEnrichmentStore", "SqliteEnrichmentStore"]
