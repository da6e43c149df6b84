"""Copies of Edge shards: what lets a second process read a shard, or optimize it, without
opening the writer's directory.

Qdrant Edge 0.9 gives one process a shard directory: a second ``EdgeShard.load`` of a directory
that is open fails ("Can't init WAL: WouldBlock"), and loading a directory rewrites some of its
files (``edge_config.json`` at least), so two processes cannot share even a read-only copy
(measured; see benchmarks/scale/README.md). So a reader gets its *own* copy, taken while the
writer holds its writes off (:meth:`EdgeStore.writes_paused
<agentic_search.adapters.edge.store.EdgeStore.writes_paused>`: flushed, no write in between),
and an optimized copy replaces the shard by an atomic exchange of the two directories
(``renameat2(RENAME_EXCHANGE)`` on Linux).

Copies keep the holes of the engine's preallocated, memory-mapped files (``cp --sparse``
where GNU cp is there), so a copy takes the disk the shard really uses, not its apparent size.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
from pathlib import Path

from agentic_search.adapters.edge.copying import copy_dir
from agentic_search.adapters.edge.store import EdgeStore
from agentic_search.logic.schema import DomainSchema, available_domains, load_schema

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def exchange(a: Path, b: Path) -> None:
    """Swap the directories ``a`` and ``b`` atomically (Linux ``renameat2`` with
    ``RENAME_EXCHANGE``); where that is missing (not Linux), three renames, not atomic: a
    crash between them leaves ``b`` at ``<b>.swap-old``.

    Raises:
        OSError: when neither way works.
    """
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is not None:
        if renameat2(_AT_FDCWD, bytes(a), _AT_FDCWD, bytes(b), _RENAME_EXCHANGE) == 0:
            return
        errno = ctypes.get_errno()
        if errno not in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: not supported here
            raise OSError(errno, f"could not exchange {a} and {b}: {os.strerror(errno)}")
    old = b.with_name(b.name + ".swap-old")  # pragma: no cover - non-Linux fallback
    os.rename(b, old)  # pragma: no cover
    os.rename(a, b)  # pragma: no cover
    os.rename(old, a)  # pragma: no cover


def snapshot(store: EdgeStore, dest: Path, domains: list[str] | None = None) -> list[str]:
    """Copy every existing shard of ``domains`` (default: the bundled ones) and the files kept
    beside it (``<shard>.*.json``) into the new folder ``dest``, each shard flushed and its
    writes held off while it is copied; returns the collections copied. ``dest`` is then a
    ``QDRANT_EDGE_PATH`` another process can open (after copying it again: see the module
    docstring).

    Raises:
        OSError: when a copy fails.
    """
    dest.mkdir(parents=True)
    copied = []
    for name in domains or available_domains():
        schema: DomainSchema = load_schema(name)
        if not store.exists(schema):
            continue
        src = store.shard_dir(schema)
        with store.writes_paused(schema):
            copy_dir(src, dest / src.name)
            for sidecar in src.parent.glob(f"{src.name}.*.json"):
                shutil.copy2(sidecar, dest / sidecar.name)
        copied.append(src.name)
    return copied


def copy_tree(src: Path, dst: Path) -> None:
    """Copy a snapshot folder (shards and side files) to ``dst`` for one reader process.

    Raises:
        OSError: when the copy fails.
    """
    dst.parent.mkdir(parents=True, exist_ok=True)
    copy_dir(src, dst)


__all__ = ["copy_dir", "copy_tree", "exchange", "snapshot"]
