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

A reader registry (``reader=True``, ``QDRANT_EDGE_READER``: ``agentic-search search``) never
opens the writer's directory: it copies the shard and the files beside it into a private
folder while it holds the shard's read gate shared (:class:`~.lock.ReadGate`: no writer is
at work then, so the copy is a committed state), releases the gate and opens its copy. Its
first write (:meth:`ShardRegistry.writable`: first use, completing an interrupted write)
closes the copy and takes the writer lock, as any writer does.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import qdrant_edge as qe

from agentic_search.adapters.edge.copying import copy_dir, private_folder
from agentic_search.adapters.edge.lock import ReadGate, ShardLock
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
from agentic_search.ports import InterruptedWrite, VectorStoreError
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
        *,
        reader: bool = False,
        pending: Callable[[DomainSchema], bool] | None = None,
    ) -> None:
        self.settings = settings
        self.root = root
        #: what the sync status says a domain's shard holds (None: not checked); an existing
        #: shard is checked against it when it opens (see :meth:`verify`)
        self.holdings = holdings
        #: reads open private copies (see the module docstring)
        self.reader = reader
        #: whether a domain's write is journaled (a reader refuses to copy it: see _copy)
        self.pending = pending
        #: called with the writer's pid while a reader waits for it (it may raise to give up)
        self.waiting: Callable[[str], None] | None = None
        #: shard name -> the private folder holding its copy (a reader's open shards)
        self.copies: dict[str, Path] = {}
        #: shard name -> the error of a shard found damaged at open (until :meth:`drop`)
        self.damage: dict[str, VectorStoreError] = {}
        #: shard name -> open shard
        self.open_shards: dict[str, qe.EdgeShard] = {}
        self._locks: dict[str, ShardLock] = {}
        #: held by every open, write, pause and close
        self.lock = threading.RLock()

    @property
    def _wait_for_writer(self) -> Callable[[str], None] | None:
        """How this registry takes a writer lock another process holds: a reader (a search
        that must write: first use, an interrupted write) waits for it (:attr:`waiting`
        told); a writer fails at once (None)."""
        if not self.reader:
            return None
        return self.waiting or (lambda _pid: None)

    def collection(self, schema: DomainSchema) -> str:
        """Collection (shard directory) name of a domain."""
        return self.settings.collection_name(schema.name)

    def shard_dir(self, schema: DomainSchema) -> Path:
        """The domain's shard directory: a reader's copy while one is open, else the one
        under :attr:`root` (the files beside it are read from the same folder)."""
        name = self.collection(schema)
        copy = self.copies.get(name)
        return (copy if copy is not None else self.root) / name

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
            held = name in self._locks and self._locks[name].held
            if self.reader and config is None and not held:
                return self._open_copy(schema)
            path = self.root / name
            exists = (path / CONFIG_FILE).is_file()
            if not exists and config is None:
                return None
            lock = self._locks.setdefault(name, ShardLock(path))
            lock.acquire(self._wait_for_writer)
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

    def _open_copy(self, schema: DomainSchema) -> qe.EdgeShard | None:
        """A reader's open: copy the shard and its side files into a private folder under the
        read gate (shared), then load the copy and check it against what the sync status
        said under the gate. None when the shard does not exist.

        Raises:
            InterruptedWrite: when a write is journaled and no writer is at work (the gate
                was free): the shard is half-written until that write is completed.
            VectorStoreError: the one-line damage error, as :meth:`open`.
        """
        name = self.collection(schema)
        live = self.root / name
        gate = ReadGate(live)
        gate.share(self.waiting)
        try:
            if not (live / CONFIG_FILE).is_file():
                return None
            if self.pending is not None and self.pending(schema):
                raise InterruptedWrite(
                    f"a write to the {schema.name!r} index was interrupted; run the command "
                    "again to complete it first"
                )
            expected = self.holdings(schema) if self.holdings is not None else None
            folder = private_folder(self.settings.agentic_search_home / "run", "search")
            _copy_shard(live, folder)
        finally:
            gate.release()
        try:
            shard = qe.EdgeShard.load(str(folder / name))
        except BaseException as exc:  # plain Exception, or a panic on a damaged file
            shutil.rmtree(folder, ignore_errors=True)
            if not is_engine_failure(exc):
                raise
            raise self.damaged(name, exc, schema) from exc
        self.copies[name] = folder
        try:
            self._check_vectors(schema, folder / name)
            self._check(schema, shard, expected)
        except VectorStoreError as exc:
            shard.close()
            self._drop_copy(name)
            self.damage[name] = exc
            raise
        self.open_shards[name] = shard
        return shard

    def _drop_copy(self, name: str) -> None:
        """Close a reader's copy of shard ``name`` (if open) and delete its folder."""
        shard = self.open_shards.pop(name, None)
        if shard is not None:
            shard.close()
        folder = self.copies.pop(name, None)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    def writable(self, schema: DomainSchema) -> qe.EdgeShard:
        """The domain's shard, open for writing: a reader's copy is closed first and the
        writer lock taken (kept until :meth:`close`).

        Raises:
            VectorStoreError: when it does not exist, another process holds its lock, or it
                cannot be opened.
        """
        with self.lock:
            name = self.collection(schema)
            if name in self.copies:
                self._drop_copy(name)
            self.acquire_writer(schema)
            return self.shard(schema)

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

    def _check(
        self, schema: DomainSchema, shard: qe.EdgeShard, expected: Holdings | None = None
    ) -> None:
        """Compare ``shard`` with what the sync status says it holds: at least as many points,
        and each sampled record with its payload and every aspect's vector. A shard whose id
        tracker or payload tracker was truncated or zeroed answers fewer records, one whose
        vector storage status was zeroed answers without that vector, all with no engine
        error: this finds them.

        ``expected``: what the sync status said when a reader's copy was taken (else it is
        read now).

        Raises:
            VectorStoreError: the one-line damage error naming what is missing.
        """
        if expected is None and self.holdings is not None:
            expected = self.holdings(schema)
        if expected is None:
            return
        name = self.collection(schema)
        # an aspect that reads only an enrichment's fields has no vector on a record without
        # one: it is not a vector every sampled record must hold
        aspects = [a for a in schema.aspect_names if a not in schema.enriched_aspects]
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
            if name in self.copies:
                self._drop_copy(name)
            self._locks.setdefault(name, ShardLock(self.root / name)).acquire(self._wait_for_writer)

    @contextlib.contextmanager
    def writes_paused(self, schema: DomainSchema) -> Iterator[qe.EdgeShard]:
        """The domain's open shard, flushed, with writes through this registry's lock (and
        the opening of shards) held off for the block: its directory can be copied
        consistently. Call :meth:`unload` inside the block before replacing its files.

        Raises:
            VectorStoreError: when the shard does not exist or cannot be opened.
        """
        with self.lock:
            shard = self.writable(schema)
            shard.flush()
            yield shard

    def unload(self, schema: DomainSchema) -> None:
        """Flush and close the domain's shard but keep its lock: the next read or write loads
        its directory anew (after an optimized copy was swapped in)."""
        with self.lock:
            name = self.collection(schema)
            if name in self.copies:
                self._drop_copy(name)
                return
            shard = self.open_shards.pop(name, None)
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
            if name in self.copies:
                self._drop_copy(name)
            if name not in self.open_shards and not path.exists():
                return False
            self._locks.setdefault(name, ShardLock(path)).acquire(self._wait_for_writer)
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
            for name in list(self.copies):
                self._drop_copy(name)
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


def _copy_shard(live: Path, folder: Path) -> None:
    """Copy the shard directory ``live`` and the files kept beside it (``<shard>.*.json``)
    into ``folder``, keeping sparse files sparse.

    Raises:
        VectorStoreError: when the copy fails (a full disk); ``folder`` is then removed.
    """
    try:
        copy_dir(live, folder / live.name)
        for side in live.parent.glob(f"{live.name}.*.json"):
            shutil.copy2(side, folder / side.name)
    except OSError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise VectorStoreError(f"could not copy the shard {live} to read it: {exc}") from exc


__all__ = ["CONFIG_FILE", "LostRecords", "ShardRegistry"]
