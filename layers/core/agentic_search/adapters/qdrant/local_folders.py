"""Qdrant local mode, one folder per collection: each collection is opened on its own, lazily.

qdrant-client's local mode loads every collection of its folder when the client opens, so one
unreadable ``storage.sqlite`` (a truncated file, a full disk) used to break every domain. Here
each collection lives in ``<QDRANT_PATH>/<collection>/`` with a client of its own, opened the
first time its domain is used; a collection that cannot be read fails its own domain with one
line naming the folder and the repair command, and the others go on.

A store written by an earlier version (every collection in ``<QDRANT_PATH>`` itself:
``meta.json`` + ``collection/<name>/``) is moved into this layout, collection by collection,
when each is first opened (files moved, nothing re-embedded).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from qdrant_client import QdrantClient

from agentic_search.adapters.engine_failures import damage_message
from agentic_search.ports import VectorStoreError


def open_local(root: Path, collection: str, domain: str) -> QdrantClient:
    """The local-mode client of ``collection`` (domain ``domain``) in ``root/collection``.

    Raises:
        VectorStoreError: when another process holds the folder, or the collection's files
            cannot be read (the message names the folder and the repair command).
    """
    folder = root / collection
    adopt_shared_layout(root, collection)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        return QdrantClient(path=str(folder))
    except RuntimeError as exc:
        if "already accessed" in str(exc) or "lock" in str(exc).lower():
            raise VectorStoreError(
                f"the local Qdrant store at {folder} is in use by another process "
                "(local mode is single-process; stop it or set QDRANT_PATH)"
            ) from exc
        raise unreadable(domain, folder, exc) from exc
    except Exception as exc:  # sqlite3, json, pickle: a damaged file of this collection
        raise unreadable(domain, folder, exc) from exc


def unreadable(domain: str, folder: Path, exc: BaseException) -> VectorStoreError:
    """The one-line error of a collection whose files cannot be read."""
    return VectorStoreError(damage_message(f"the {domain!r} index at {folder}", exc, domain))


def adopt_shared_layout(root: Path, collection: str) -> None:
    """Move ``collection`` out of an earlier version's shared folder (``root/meta.json`` +
    ``root/collection/<name>``) into ``root/<name>``: its files moved, a ``meta.json`` of its
    own written, the shared one left with the others (removed with the last). Nothing to do
    for a store in the current layout."""
    shared_meta = root / "meta.json"
    if not shared_meta.is_file():
        return
    try:
        meta: dict[str, Any] = json.loads(shared_meta.read_text())
    except ValueError:
        return  # unreadable: the shared folder is left for the user (opened by nothing)
    config = (meta.get("collections") or {}).get(collection)
    old = root / "collection" / collection
    if config is None or not old.is_dir():
        return
    target = root / collection
    (target / "collection").mkdir(parents=True, exist_ok=True)
    shutil.move(str(old), str(target / "collection" / collection))
    own = {"collections": {collection: config}, "aliases": {}}
    if "text_indexes" in meta:
        own["text_indexes"] = {}
    _write_json(target / "meta.json", own)
    del meta["collections"][collection]
    if meta["collections"]:
        _write_json(shared_meta, meta)
    else:
        shared_meta.unlink()
        shutil.rmtree(root / "collection", ignore_errors=True)


def _write_json(path: Path, value: Any) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(value))
    os.replace(tmp, path)


__all__ = ["adopt_shared_layout", "open_local", "unreadable"]
