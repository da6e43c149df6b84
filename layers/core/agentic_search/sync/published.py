"""The published index (``VECTOR_STORE=edge-s3``) around requests and writes: what the Lambda
glue calls so that a reader swaps in a newer snapshot only between requests, and every write
path (the stream batch, the EventBridge event, the redrive, the reindex batch) writes under
the collection's lease and publishes once, after the after-write sequence
(:func:`agentic_search.sync.after_write.after_write`) has brought the derived files up to
date. With any other store both are no-ops.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from agentic_search.dependencies import Dependencies
from agentic_search.ports import PublishedIndex


def refresh_published(deps: Dependencies) -> list[Any]:
    """Before a request: swap in the snapshots whose pointer moved (at most every
    ``SNAPSHOT_RECHECK_S``); the process's catalog caches are dropped after a swap. Returns
    the refresh results (failures included, never raised); none when the store was not built
    yet (it opens the newest snapshot on first use) or is not a published one."""
    if not deps.built("store") or not isinstance(deps.store, PublishedIndex):
        return []
    results = deps.store.refresh_snapshots()
    if any(r.swapped for r in results):
        deps.caches.forget_catalog()
    return results


@contextmanager
def publishing(deps: Dependencies) -> Iterator[Any]:
    """The block's writes under the domain's lease, published once when it ends (also when
    it raises: what was written goes out). Yields the store.

    Raises:
        SnapshotBusy: another writer holds the lease past ``SNAPSHOT_LEASE_WAIT_S``.
        SnapshotConflict: the lease was lost or the pointer moved; nothing published.
        SnapshotError: the pointer's snapshot cannot be opened, or the upload failed.
    """
    store = deps.store
    if not isinstance(store, PublishedIndex):
        yield store
        return
    with store.writing(deps.schema):
        try:
            yield store
        finally:
            store.publish(deps.schema)


__all__ = ["publishing", "refresh_published"]
