"""What every write to an index ends with, in one place: the keyword (BM25) index rebuilt from
the store, the entity graph relinked around the written and deleted records, the in-process
catalog lookup forgotten, and a new catalog version (the answer cache keys on it).

Every write path calls :func:`after_write` once the vector store holds the write: the CLI's
``ingest`` (:mod:`agentic_search.sync.ingest`, also its prune), the completion of an interrupted
write (:mod:`agentic_search.sync.journal`), ``sync`` and the redrive
(:func:`~agentic_search.sync.apply.apply_changes`), and the Lambda glue (CatalogSync's stream
batch and EventBridge event once per invocation, the reindex batch).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from agentic_search.dependencies import Dependencies
from agentic_search.ports import CacheError
from agentic_search.sync.indexer import WriteStats
from agentic_search.sync.links import relink
from agentic_search.sync.relink import relink_changed


def after_write(
    deps: Dependencies,
    stats: WriteStats,
    *,
    touched: Sequence[str] = (),
    everything: bool = False,
) -> int | None:
    """Bring everything derived from the vector store up to date after a write of ``stats``.

    ``touched``: more record ids whose edges are recomputed (a retried change whose points were
    already written, ``unchanged``, may have stopped before its relink); ``everything``:
    rebuild the whole graph (completing an interrupted write, whose written ids are unknown).
    Returns the new catalog version, None when the cache could not be reached (its entries
    expire by TTL: a write must not fail for the cache).

    Raises:
        VectorStoreError: when the store fails while the graph is relinked (the write itself
            is in; running this again completes it).
    """
    schema = deps.schema
    deps.keyword.refresh(schema)
    if everything:
        relink(deps)
    elif stats.changed or touched:  # the entity graph follows (it reads the keyword index)
        changed = list(dict.fromkeys([*stats.written_ids, *touched]))
        relink_changed(deps, changed, stats.deleted_ids)
    deps.caches.forget_catalog()
    with contextlib.suppress(CacheError):
        return deps.cache.bump_catalog_version(schema.name)
    return None


__all__ = ["after_write"]
