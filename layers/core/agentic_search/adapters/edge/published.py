"""Qdrant Edge shards published as immutable snapshots (``VECTOR_STORE=edge-s3``): the
:class:`~agentic_search.ports.VectorStore` of the deployed functions when no vector server
runs.

A snapshot is one domain's shard directory and the files kept beside it (``<shard>.*.json``:
the embedder identity, the BM25 statistics) packed in a gzip tar (:func:`pack`), stored by a
:class:`~agentic_search.ports.SnapshotRegistry` (S3 + a DynamoDB pointer in AWS). Each process
unpacks the snapshot it opens into its own folder under ``<home>/snapshots/<collection>/``
(Edge rewrites files of a directory it loads, so a directory is never shared) and opens it with
a plain :class:`~agentic_search.adapters.edge.store.EdgeStore`, one per collection.

* A **reader** (``SNAPSHOT_ROLE=reader``, the search functions) opens the pointer's snapshot
  on first use and, when :meth:`PublishedEdgeStore.refresh_snapshots` is called between
  requests, looks at the pointer at most every ``SNAPSHOT_RECHECK_S`` seconds; a new
  snapshot is downloaded, checked (size and SHA-256, then unpacked and opened) and only then
  swapped in, the old one closed and deleted. When any of that fails the open snapshot keeps
  serving and the refresh reports the error. Writes are refused.
* A **writer** (``SNAPSHOT_ROLE=writer``, the sync functions) takes the collection's lease
  (:meth:`begin_write`), catches up with the pointer (its local copy is kept while the pointer
  still names what it last published or opened), writes through the Edge store, and
  :meth:`publish` uploads a new snapshot and moves the pointer from the one it started from
  (a conditional write: a writer that lost its lease or raced another publishes nothing).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentic_search.adapters.edge.shard_files import CONFIG_FILE
from agentic_search.adapters.edge.store import EdgeStore
from agentic_search.config import Settings
from agentic_search.logic.schema import DomainSchema
from agentic_search.ports import SnapshotError, SnapshotRegistry, VectorStoreError
from agentic_search.wire.snapshots import SnapshotLease, SnapshotPointer

#: VectorStore methods (their first argument the schema) answered by the collection's store.
READS = (
    "exists",
    "count",
    "embedder_identity",
    "verify",
    "retrieve_records",
    "hydrate_records",
    "compile_filter",
    "scroll",
    "query_dense",
    "has_sparse",
    "query_sparse",
    "sparse_counts",
    "query_hybrid_rrf",
    "vector_of",
    "vectors_of",
    "shard_dir",
    "info",
)
#: Methods that change the shard: a writer's only; they mark the collection for publishing.
WRITES = (
    "acquire_writer",
    "ensure_collection",
    "record_embedder_identity",
    "drop",
    "upsert",
    "update_points",
    "update_sparse",
    "delete",
    "optimize",
)


#: The archive member listing the files stored without their holes (see :func:`pack`).
SPARSE_MANIFEST = ".sparse.json"


def _extents(fd: int, size: int) -> list[tuple[int, int]]:
    """The (offset, length) data extents of an open file of ``size`` bytes (``SEEK_DATA`` /
    ``SEEK_HOLE``; one extent, the whole file, where the file system does not tell)."""
    out, pos = [], 0
    while pos < size:
        try:
            start = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError:  # ENXIO: only a hole is left
            break
        end = min(os.lseek(fd, start, os.SEEK_HOLE), size)
        if end <= start:
            break
        out.append((start, end - start))
        pos = end
    return out


class _ExtentReader(io.RawIOBase):
    """The data extents of a file read one after the other (what the archive stores)."""

    def __init__(self, fh: Any, extents: list[tuple[int, int]]) -> None:
        self._fh, self._left = fh, list(extents)

    def readable(self) -> bool:
        return True

    def readinto(self, buf: Any) -> int:
        while self._left and self._left[0][1] == 0:
            self._left.pop(0)
        if not self._left:
            return 0
        offset, length = self._left[0]
        n = min(len(buf), length)
        self._fh.seek(offset)
        data = self._fh.read(n)
        buf[: len(data)] = data
        self._left[0] = (offset + len(data), length - len(data))
        return len(data)


def pack(store: EdgeStore, schema: DomainSchema, dest: Path) -> None:
    """Write the domain's shard directory and its side files into the gzip tar ``dest``,
    the shard flushed and its writes held off meanwhile (lock files left out). The engine's
    files are preallocated and mostly holes (hundreds of MiB apparent for a few MiB of data):
    a file with holes is stored as its data extents only, listed in the ``.sparse.json``
    member with its size, and :func:`unpack` writes it back with the same holes.

    Raises:
        VectorStoreError: when the shard does not exist.
    """
    shard = store.shard_dir(schema)
    manifest: dict[str, dict[str, Any]] = {}
    with store.writes_paused(schema), tarfile.open(dest, "w:gz", compresslevel=1) as tar:
        paths = [shard, *sorted(shard.rglob("*"))]
        paths += sorted(shard.parent.glob(f"{shard.name}.*.json"))
        for path in paths:
            name = path.relative_to(shard.parent).as_posix()
            if not path.is_file():
                tar.add(path, arcname=name, recursive=False)
                continue
            with path.open("rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                extents = _extents(fh.fileno(), size)
                fh.seek(0)  # the lseeks moved the descriptor
                info = tar.gettarinfo(arcname=name, fileobj=fh)
                if extents == [(0, size)] or size == 0:
                    tar.addfile(info, fh)
                    continue
                info.size = sum(length for _, length in extents)
                manifest[name] = {"size": size, "extents": extents}
                tar.addfile(info, io.BufferedReader(_ExtentReader(fh, extents)))
        body = json.dumps(manifest).encode()
        info = tarfile.TarInfo(SPARSE_MANIFEST)
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))


def _restore_holes(root: Path) -> None:
    """Write each file :func:`pack` stored as its extents back at its offsets, holes between
    (the ``.sparse.json`` member says where), and drop the manifest."""
    listed = root / SPARSE_MANIFEST
    if not listed.is_file():
        return
    for name, entry in json.loads(listed.read_text()).items():
        path = root / name
        if path.resolve().parent != root.resolve() and root.resolve() not in path.resolve().parents:
            raise ValueError(f"{name!r} is outside the snapshot")
        packed = path.with_name(path.name + ".packed")
        path.rename(packed)
        with packed.open("rb") as src, path.open("wb") as dst:
            dst.truncate(int(entry["size"]))
            for offset, length in entry["extents"]:
                dst.seek(offset)
                dst.write(src.read(length))
        shutil.copystat(packed, path)
        packed.unlink()
    listed.unlink()


def unpack(archive: Path, root: Path, where: str) -> None:
    """Extract ``archive`` into the new folder ``root`` (written as ``<root>.partial`` and
    renamed when complete), the holes of its files restored; ``where`` names the snapshot in
    errors.

    Raises:
        SnapshotError: when the archive is damaged, or holds no shard.
    """
    partial = root.with_name(root.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        with tarfile.open(archive, "r:gz") as tar:
            tar.extractall(partial, filter="data")
        _restore_holes(partial)
    except (tarfile.TarError, EOFError, OSError, ValueError, KeyError) as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise SnapshotError(f"snapshot {where} cannot be unpacked: {exc}") from exc
    if not any((d / CONFIG_FILE).is_file() for d in partial.iterdir() if d.is_dir()):
        shutil.rmtree(partial, ignore_errors=True)
        raise SnapshotError(f"snapshot {where} holds no Edge shard")
    partial.rename(root)


@dataclass(frozen=True)
class SnapshotRefresh:
    """What a refresh of ``collection`` did: ``swapped`` in ``pointer`` (the snapshot open
    now, None when none was ever published), or kept the open one because of ``error``."""

    collection: str
    swapped: bool
    pointer: SnapshotPointer | None
    error: str | None = None


@dataclass
class _Opened:
    schema: DomainSchema
    pointer: SnapshotPointer | None
    store: EdgeStore
    root: Path
    checked_at: float
    dirty: bool = False


class PublishedEdgeStore:
    """The published snapshot of each domain, opened through an :class:`EdgeStore` per
    collection (see the module docstring). ``writer``: apply and publish instead of only
    reading; ``clock``: monotonic seconds for the re-check interval.

    Raises (from any read): :class:`SnapshotError` when no snapshot can be opened (a reader
    with one open keeps it), :class:`VectorStoreError` from the engine.
    """

    server_mode = False
    #: queries run in this process holding the GIL (``source_pool.runs_in_process``)
    in_process = True

    def __init__(
        self,
        settings: Settings,
        registry: SnapshotRegistry,
        *,
        writer: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.writer = writer
        self.recheck_s = settings.snapshot_recheck_s
        self.root = settings.snapshot_path
        self._clock = clock
        self._opened: dict[str, _Opened] = {}
        self._leases: dict[str, SnapshotLease] = {}
        self._lock = threading.RLock()

    def collection(self, schema: DomainSchema) -> str:
        """Collection (snapshot) name of a domain."""
        return self.settings.collection_name(schema.name)

    def pointer_of(self, schema: DomainSchema) -> SnapshotPointer | None:
        """The snapshot open for the domain (None: none open, or none was ever published)."""
        opened = self._opened.get(self.collection(schema))
        return opened.pointer if opened else None

    # ----- opening and swapping -------------------------------------------------------------

    def _load(self, schema: DomainSchema, pointer: SnapshotPointer | None) -> _Opened:
        """A new folder holding ``pointer``'s snapshot (empty when None), its shard opened
        and counted (a damaged one fails here, not in the first request after the swap).

        Raises:
            SnapshotError: naming the snapshot and what is wrong with it.
        """
        name = self.collection(schema)
        root = self.root / name / uuid.uuid4().hex[:12]
        if pointer is None:
            root.mkdir(parents=True)
            return _Opened(schema, None, EdgeStore(self.settings, root=root), root, self._clock())
        where = self.where(pointer)
        archive = root.with_name(root.name + ".tar.gz")
        root.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.registry.download(pointer, archive)
            unpack(archive, root, where)
        finally:
            archive.unlink(missing_ok=True)
        store = EdgeStore(self.settings, root=root)
        try:
            if not store.exists(schema):
                raise VectorStoreError(f"no shard named {name!r} in it")
            store.count(schema)
        except VectorStoreError as exc:
            store.close()
            shutil.rmtree(root, ignore_errors=True)
            raise SnapshotError(f"snapshot {where} cannot be opened: {exc}") from exc
        return _Opened(schema, pointer, store, root, self._clock())

    def where(self, pointer: SnapshotPointer) -> str:
        """The snapshot's location for messages (``s3://bucket/key`` in AWS)."""
        bucket = getattr(self.registry, "bucket", None)
        return f"s3://{bucket}/{pointer.key}" if bucket else pointer.key

    def _store(self, schema: DomainSchema) -> EdgeStore:
        name = self.collection(schema)
        with self._lock:
            opened = self._opened.get(name)
            if opened is None:
                opened = self._opened[name] = self._load(schema, self.registry.pointer(name))
            return opened.store

    def _swap(self, name: str, new: _Opened) -> None:
        old = self._opened.get(name)
        self._opened[name] = new
        if old is not None:
            old.store.close()
            shutil.rmtree(old.root, ignore_errors=True)

    def refresh_snapshots(self, force: bool = False) -> list[SnapshotRefresh]:
        """Between requests: for each open collection whose pointer was last looked at
        ``SNAPSHOT_RECHECK_S`` ago or more (every one with ``force``), open the snapshot the
        pointer names now if it is another and swap it in. A failure keeps the open snapshot
        and is reported in the result (never raised)."""
        out = []
        with self._lock:
            now = self._clock()
            for name, opened in list(self._opened.items()):
                if not force and now - opened.checked_at < self.recheck_s:
                    continue
                opened.checked_at = now
                try:
                    pointer = self.registry.pointer(name)
                    if pointer is None or (
                        opened.pointer is not None and pointer.key == opened.pointer.key
                    ):
                        continue
                    self._swap(name, self._load(opened.schema, pointer))
                    out.append(SnapshotRefresh(name, True, pointer))
                except SnapshotError as exc:
                    out.append(SnapshotRefresh(name, False, opened.pointer, str(exc)))
        return out

    # ----- the writer -----------------------------------------------------------------------

    def begin_write(self, schema: DomainSchema) -> None:
        """Take the domain's writer lease (``SNAPSHOT_LEASE_S``, waiting up to
        ``SNAPSHOT_LEASE_WAIT_S``) and bring the local copy to the pointer's snapshot.

        Raises:
            SnapshotBusy: another writer holds the lease.
            SnapshotError: the pointer's snapshot cannot be opened (the lease is released).
        """
        if not self.writer:
            raise VectorStoreError("this edge-s3 store is a reader (SNAPSHOT_ROLE=reader)")
        name = self.collection(schema)
        settings = self.settings
        lease = self.registry.acquire(
            name, settings.snapshot_lease_s, settings.snapshot_lease_wait_s
        )
        with self._lock:
            self._leases[name] = lease
            try:
                pointer = self.registry.pointer(name)
                opened = self._opened.get(name)
                held = opened.pointer.key if opened and opened.pointer else None
                if opened is None or held != (pointer.key if pointer else None):
                    # first use, or another writer published: start from what the pointer
                    # names (an unpublished write of an earlier invocation here, on the
                    # pointer it began at, is kept and goes out with the next publish)
                    self._swap(name, self._load(schema, pointer))
            except BaseException:
                self.end_write(schema)
                raise

    def publish(self, schema: DomainSchema, scratch: Path | None = None) -> SnapshotPointer | None:
        """Upload the domain's shard as a new snapshot and move the pointer to it from the one
        this write began at; None when nothing was written. Retires the replaced snapshot and
        any left by a writer that died before moving the pointer.

        Raises:
            SnapshotConflict: the lease was lost or the pointer moved (nothing published).
            SnapshotError: the upload failed.
        """
        name = self.collection(schema)
        with self._lock:
            opened = self._opened.get(name)
            lease = self._leases.get(name)
            if opened is None or not opened.dirty:
                return None
            if lease is None:
                raise VectorStoreError(f"publish of {name!r} outside begin_write")
            base = opened.pointer
            archive = (scratch or opened.root.parent) / f"{opened.root.name}.publish.tar.gz"
            try:
                pack(opened.store, schema, archive)
                new = self.registry.upload(name, (base.version if base else 0) + 1, archive)
            finally:
                archive.unlink(missing_ok=True)
            self.registry.move_pointer(new, base, lease)
            opened.pointer, opened.dirty = new, False
            self.registry.retire(new, base)
            return new

    def end_write(self, schema: DomainSchema) -> None:
        """Release the domain's lease (when held)."""
        with self._lock:
            lease = self._leases.pop(self.collection(schema), None)
        if lease is not None:
            self.registry.release(lease)

    @contextmanager
    def writing(self, schema: DomainSchema) -> Iterator[None]:
        """:meth:`begin_write`, the block, then :meth:`end_write` whatever happens (the block
        calls :meth:`publish`)."""
        self.begin_write(schema)
        try:
            yield
        finally:
            self.end_write(schema)

    # ----- the VectorStore port -------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        if name in READS:

            def read(schema: DomainSchema, *args: Any, **kwargs: Any) -> Any:
                return getattr(self._store(schema), name)(schema, *args, **kwargs)

            return read
        if name in WRITES:

            def write(schema: DomainSchema, *args: Any, **kwargs: Any) -> Any:
                if not self.writer:
                    raise VectorStoreError(
                        f"the published snapshot of {self.collection(schema)!r} is read-only "
                        "here (SNAPSHOT_ROLE=reader): the sync functions write it"
                    )
                store = self._store(schema)
                self._opened[self.collection(schema)].dirty = True
                return getattr(store, name)(schema, *args, **kwargs)

            return write
        raise AttributeError(name)

    @contextmanager
    def writes_paused(self, schema: DomainSchema) -> Iterator[Any]:
        """The collection's store's :meth:`EdgeStore.writes_paused`."""
        with self._store(schema).writes_paused(schema) as shard:
            yield shard

    def clear_record_cache(self) -> None:
        """Forget the records every open store read back."""
        for opened in list(self._opened.values()):
            opened.store.clear_record_cache()

    def close(self) -> None:
        """Close every open store (their folders stay until the process ends or swaps)."""
        with self._lock:
            for opened in self._opened.values():
                opened.store.close()
            self._opened.clear()


__all__ = ["SPARSE_MANIFEST", "PublishedEdgeStore", "SnapshotRefresh", "pack", "unpack"]
