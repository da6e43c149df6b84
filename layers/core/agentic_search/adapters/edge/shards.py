"""The Qdrant Edge shard registry: which shards of a store are open, each under its writer lock
(:class:`~.lock.ShardLock`, taken before the shard is opened and kept while it is), which were
found damaged, and the lifecycle around them: open or create, hold the lock without a shard,
pause writes for a consistent copy, unload, drop, close.

Damage the engine does not report (a truncated id tracker answers half the points, a zeroed
vector storage status none of that vector) is found when a shard opens: it is compared with
what the sync status says it holds (``holdings``, wired in :mod:`agentic_search.wiring`), and
answers the one-line damage error naming ``ingest --rebuild`` as an unreadable file does.

Every open, write and close goes through :attr:`ShardRegistry.lock` (re-entrant): the store's
writes take it too, so a paused shard (:meth:`ShardRegistry.writes_paused`) sees none.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import qdrant_edge as qe

from agentic_search.adapters.edge.lock import ShardLock
from agentic_search.adapters.edge.shard_files import CONFIG_FILE
from agentic_search.adapters.engine_failures import (
    damage_message,
    is_engine_failure,
    mismatch_message,
    missing_vectors,
)
from agentic_search.adapters.qdrant.ids import point_id
from agentic_search.config import Settings
from agentic_search.logic.schema import DomainSchema, domain_argument
from agentic_search.ports import VectorStoreError
from agentic_search.wire.sync import Holdings


class LostRecords(Exception):
    """A shard holds less than the sync status says (the reason of its damage error)."""


class ShardRegistry:
    """The open Edge shards under ``root`` (one directory per collection), their locks and
    their damage.

    Raises (from any method that opens a shard):
        VectorStoreError: when another process holds the shard's lock, or the engine fails.
    """

    def __init__(
        self,
        settings: Settings,
        root: Path,
        holdings: Callable[[DomainSchema], Holdings | None] | None = None,
    ) -> None:
        self.settings = settings
        self.root = root
        #: what the sync status says a domain's shard holds (None: not checked); an existing
        #: shard is checked against it when it opens (see :meth:`verify`)
        self.holdings = holdings
        #: shard name -> the error of a shard found damaged at open (until :meth:`drop`)
        self.damage: dict[str, VectorStoreError] = {}
        #: shard name -> open shard
        self.open_shards: dict[str, qe.EdgeShard] = {}
        self._locks: dict[str, ShardLock] = {}
        #: held by every open, write, pause and close
        self.lock = threading.RLock()

    def collection(self, schema: DomainSchema) -> str:
        """Collection (shard directory) name of a domain."""
        return self.settings.collection_name(schema.name)

    def shard_dir(self, schema: DomainSchema) -> Path:
        """The domain's shard directory."""
        return self.root / self.collection(schema)

    def exists(self, schema: DomainSchema) -> bool:
        """Whether the domain's shard exists (open, or created on disk)."""
        name = self.collection(schema)
        return name in self.open_shards or (self.root / name / CONFIG_FILE).is_file()

    def open(
        self, schema: DomainSchema, config: qe.EdgeConfig | None = None
    ) -> qe.EdgeShard | None:
        """The open shard of ``schema``: loaded when its directory holds one (and checked
        against :attr:`holdings`), created from ``config`` when given, else None. The lock is
        taken first and kept while open.

        Raises:
            VectorStoreError: the one-line damage error when it cannot be loaded or holds less
                than the sync status says (every later read answers the same error).
        """
        name = self.collection(schema)
        with self.lock:
            shard = self.open_shards.get(name)
            if shard is not None:
                return shard
            if name in self.damage:
                raise self.damage[name]
            path = self.root / name
            exists = (path / CONFIG_FILE).is_file()
            if not exists and config is None:
                return None
            lock = self._locks.setdefault(name, ShardLock(path))
            lock.acquire()
            try:
                if exists:
                    shard = qe.EdgeShard.load(str(path))
                else:
                    shard = qe.EdgeShard.create(str(path), config)
            except BaseException as exc:  # plain Exception, or a panic on a damaged file
                lock.release()
                if not is_engine_failure(exc):
                    raise
                raise self.damaged(name, exc, schema) from exc
            if exists:
                try:
                    self._check_vectors(schema, path)
                    self._check(schema, shard)
                except VectorStoreError as exc:
                    shard.close()
                    lock.release()
                    self.damage[name] = exc
                    raise
            self.open_shards[name] = shard
            return shard

    def shard(self, schema: DomainSchema) -> qe.EdgeShard:
        """The open shard of ``schema`` (loaded on first use).

        Raises:
            VectorStoreError: when it does not exist, or cannot be opened.
        """
        shard = self.open(schema)
        if shard is None:
            raise VectorStoreError(
                f"collection {self.collection(schema)!r} does not exist in {self.root}"
            )
        return shard

    @staticmethod
    def _check_vectors(schema: DomainSchema, path: Path) -> None:
        """Refuse a shard that lacks a named vector of ``schema`` (an aspect added to the YAML
        after the shard was built), naming the rebuild with the YAML's path.

        Raises:
            VectorStoreError: the one-line mismatch error.
        """
        try:
            vectors = json.loads((path / CONFIG_FILE).read_text()).get("vectors") or {}
        except (OSError, ValueError, AttributeError):
            return  # unreadable: the engine's own load said so, or _check says it
        problems = missing_vectors(schema, vectors)
        if problems:
            what = f"the {schema.name!r} index at {path}"
            raise VectorStoreError(mismatch_message(what, problems, domain_argument(schema)))

    def _check(self, schema: DomainSchema, shard: qe.EdgeShard) -> None:
        """Compare ``shard`` with what the sync status says it holds: at least as many points,
        and each sampled record with its payload and every aspect's vector. A shard whose id
        tracker or payload tracker was truncated or zeroed answers fewer records, one whose
        vector storage status was zeroed answers without that vector, all with no engine
        error: this finds them.

        Raises:
            VectorStoreError: the one-line damage error naming what is missing.
        """
        expected = self.holdings(schema) if self.holdings is not None else None
        if expected is None:
            return
        name = self.collection(schema)
        aspects = list(schema.aspect_names)
        try:
            points = shard.count(qe.CountRequest(exact=True))
            found = shard.retrieve(
                [point_id(schema.name, r) for r in expected.sample],
                with_payload=[schema.id_field],
                with_vector=aspects,
            )
        except BaseException as exc:
            if not is_engine_failure(exc):
                raise
            raise self.damaged(name, exc, schema) from exc
        problem = None
        if points < expected.records:
            problem = (
                f"the shard holds {points} points where the sync status has "
                f"{expected.records} records synced"
            )
        else:
            have: dict[str, set[str]] = {}
            for p in found:
                payload, vector = p.payload or {}, p.vector
                if schema.id_field in payload:
                    rid = str(payload[schema.id_field])
                    have[rid] = set(vector) if isinstance(vector, dict) else set()
            for rid in expected.sample:
                if rid not in have:
                    problem = f"synced record {rid!r} is not in the shard"
                    break
                lost = [a for a in aspects if a not in have[rid]]
                if lost:
                    problem = f"synced record {rid!r} lost its {lost[0]!r} vector"
                    break
        if problem is not None:
            raise self.damaged(name, LostRecords(problem), schema)

    def verify(self, schema: DomainSchema) -> None:
        """Check the domain's shard against what the sync status says it holds (see
        :meth:`_check`), loading it when it is not open; nothing when it does not exist.

        Raises:
            VectorStoreError: the one-line damage error.
        """
        with self.lock:
            shard = self.open_shards.get(self.collection(schema))
            if shard is None:
                self.open(schema)  # checked as it loads
                return
            self._check(schema, shard)

    def damaged(
        self, name: str, exc: BaseException, schema: DomainSchema | None = None
    ) -> VectorStoreError:
        """The one-line error of shard ``name`` that cannot be read, naming the command that
        rebuilds it (:func:`~agentic_search.adapters.engine_failures.damage_message`; with
        ``schema``, its ``--domain`` is the one that names that schema again)."""
        domain = name.removeprefix(self.settings.collection_prefix)
        what = f"the {domain!r} index at {self.root / name}"
        return VectorStoreError(
            damage_message(what, exc, domain_argument(schema) if schema else domain)
        )

    @contextlib.contextmanager
    def reading(self, schema: DomainSchema) -> Iterator[None]:
        """Engine failures inside the block (a plain ``Exception``, or a panic on a damaged
        file: :func:`~agentic_search.adapters.engine_failures.is_engine_failure`) become the
        shard's :meth:`damaged` error; a ``VectorStoreError`` passes as it is."""
        try:
            yield
        except VectorStoreError:
            raise
        except BaseException as exc:
            if not is_engine_failure(exc):
                raise
            raise self.damaged(self.collection(schema), exc, schema) from exc

    def acquire_writer(self, schema: DomainSchema) -> None:
        """Take the domain's shard lock now, whether or not its shard exists (none is created),
        and keep it until :meth:`close`: no other process can create or write the shard
        meanwhile.

        Raises:
            VectorStoreError: when another process holds it (the message names its pid).
        """
        with self.lock:
            name = self.collection(schema)
            self._locks.setdefault(name, ShardLock(self.root / name)).acquire()

    @contextlib.contextmanager
    def writes_paused(self, schema: DomainSchema) -> Iterator[qe.EdgeShard]:
        """The domain's open shard, flushed, with writes through this registry's lock (and
        the opening of shards) held off for the block: its directory can be copied
        consistently. Call :meth:`unload` inside the block before replacing its files.

        Raises:
            VectorStoreError: when the shard does not exist or cannot be opened.
        """
        with self.lock:
            shard = self.shard(schema)
            shard.flush()
            yield shard

    def unload(self, schema: DomainSchema) -> None:
        """Flush and close the domain's shard but keep its lock: the next read or write loads
        its directory anew (after an optimized copy was swapped in)."""
        with self.lock:
            shard = self.open_shards.pop(self.collection(schema), None)
            if shard is not None:
                try:
                    shard.flush()
                finally:
                    shard.close()

    def drop(self, schema: DomainSchema) -> bool:
        """Delete the domain's shard directory if there is one (taking its lock first, but not
        loading it: ``ingest --rebuild`` drops a shard that cannot be opened or was found
        damaged), and the files kept beside it for it (``<shard>.*.json``, e.g. the BM25
        statistics). False when there was nothing to drop.

        Raises:
            VectorStoreError: when another process holds the shard's lock.
        """
        name = self.collection(schema)
        path = self.root / name
        with self.lock:
            if name not in self.open_shards and not path.exists():
                return False
            self._locks.setdefault(name, ShardLock(path)).acquire()
            shard = self.open_shards.pop(name, None)
            if shard is not None:
                shard.close()
            self.damage.pop(name, None)
            shutil.rmtree(path, ignore_errors=True)
            for sidecar in self.root.glob(f"{name}.*.json"):
                sidecar.unlink()
            self._locks.pop(name).release()
            return True

    def close(self) -> None:
        """Flush and close every open shard, then release their locks (and those of shards
        unloaded or only held)."""
        with self.lock:
            for name, shard in list(self.open_shards.items()):
                try:
                    shard.flush()
                finally:
                    shard.close()
                    del self.open_shards[name]
                    self._locks.pop(name).release()
            for lock in self._locks.values():  # shards unloaded but still held (optimize)
                lock.release()
            self._locks.clear()


__all__ = ["CONFIG_FILE", "LostRecords", "ShardRegistry"]
