"""Published index snapshots (``VECTOR_STORE=edge-s3``): what the pointer of a domain's
collection says is its current snapshot, and a writer's lease on it.

A snapshot is an immutable object (the Edge shard and its side files packed in one archive)
under the collection and catalog version; the pointer names the current one, with its size and
SHA-256 so a reader can tell a truncated or altered download from a good one. Where they live
is the :class:`~agentic_search.ports.SnapshotRegistry` port.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SnapshotPointer:
    """The current snapshot of ``collection``: object ``key``, the catalog ``version`` it holds
    (the pointer's own counter: 1 for the first publish, +1 each), its ``size`` (bytes) and
    ``sha256`` (hex), and when it was published (``published_at``, Unix seconds)."""

    collection: str
    key: str
    version: int
    size: int
    sha256: str
    published_at: float


@dataclass(frozen=True)
class SnapshotLease:
    """A writer's hold on ``collection`` (``owner``: a fresh token per acquisition) until
    ``expires_at`` (Unix seconds)."""

    collection: str
    owner: str
    expires_at: float


__all__ = ["SnapshotLease", "SnapshotPointer"]
