"""Point ids shared by every Qdrant engine (server, local mode, Edge): UUIDv5 of
``domain:record_id``, so the same record lands on the same point in each of them (idempotent
upserts, and a store re-indexed from one engine into another keeps its ids). No engine import."""

from __future__ import annotations

import uuid
from functools import lru_cache

_NAMESPACE = uuid.UUID("6b1d0f5e-2f6e-4f0b-9c39-3c7a3e6a1f00")


@lru_cache(maxsize=65536)
def point_id(domain: str, record_id: str) -> str:
    """Deterministic Qdrant point id (UUIDv5) for a record of a domain (memoized: a search
    reads about a hundred records, and UUIDv5 is a SHA-1 each)."""
    return str(uuid.uuid5(_NAMESPACE, f"{domain}:{record_id}"))


__all__ = ["point_id"]
