"""The embedder identity of a Qdrant collection, kept in the collection's own metadata.

Collection metadata (``create_collection``/``update_collection(metadata=...)``, returned in
``get_collection(...).config.metadata``) is a JSON object stored with the collection's
configuration: on a server (Qdrant 1.16+) and in qdrant-client's local mode (1.16+) alike, so
one code path serves both, nothing is added to the points (a reserved point would show up in
counts, scrolls and filters) and nothing lives beside the collection (a sidecar file has no
place on a server). The identity is one key, :data:`IDENTITY_KEY`, merged into whatever
metadata the collection has.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from agentic_search.ports import VectorStoreError
from agentic_search.wire import EmbedderIdentity

#: The metadata key of the identity.
IDENTITY_KEY = "agentic_search_embedder"


def read_identity(client: Any, name: str) -> EmbedderIdentity | None:
    """The identity recorded in collection ``name``'s metadata (None when the collection
    does not exist or has none).

    Raises:
        VectorStoreError: when the recorded value is not an identity.
    """
    if not client.collection_exists(name):
        return None
    metadata = getattr(client.get_collection(name).config, "metadata", None) or {}
    raw = metadata.get(IDENTITY_KEY)
    if raw is None:
        return None
    try:
        return EmbedderIdentity.model_validate(raw)
    except ValidationError as exc:
        raise VectorStoreError(
            f"collection {name!r} has an unreadable {IDENTITY_KEY!r} metadata value {raw!r}: "
            f"{exc.errors()[0]['msg']}. Rebuild it (`agentic-search ingest --rebuild`)."
        ) from exc


def write_identity(client: Any, name: str, identity: EmbedderIdentity) -> None:
    """Record ``identity`` in collection ``name``'s metadata (other keys are kept)."""
    client.update_collection(name, metadata={IDENTITY_KEY: identity.to_json_dict()})


__all__ = ["IDENTITY_KEY", "read_identity", "write_identity"]
