"""Refusing to mix embedders: the collection's recorded embedder against the current one.

Ingest and sync (:class:`~agentic_search.sync.indexer.Indexer`) call :func:`check_identity`
before every write and :func:`adopt_identity` after the collection exists: a new collection,
or one built before identities were recorded, takes the current embedder's identity; a
collection built by another embedder is refused with
:class:`~agentic_search.ports.EmbedderMismatch` before anything is written. Search calls
:func:`check_identity` before it embeds a query (a collection with no identity is accepted as
it is, and left unchanged).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_search.ports import EmbedderMismatch
from agentic_search.wire import EmbedderIdentity

if TYPE_CHECKING:
    from agentic_search.logic.schema import DomainSchema
    from agentic_search.ports import CollectionInfo, Embedder, VectorStore

#: What the message tells to do about a mismatch.
FIX = (
    "Rebuild the index with the current embedder (`agentic-search ingest --rebuild`; to "
    "switch the local model: `agentic-search ingest --rebuild --embedder "
    "minilm|e5-small|embeddinggemma`), "
    "or configure the embedder it was built with again (LOCAL_EMBEDDING_MODEL / "
    "EMBEDDING_PROVIDER / EMBEDDING_MODEL / BEDROCK_EMBEDDING_MODEL / EMBEDDING_MAX_LENGTH / "
    "EMBEDDINGGEMMA_DIM / EMBEDDINGGEMMA_QUANTIZATION)."
)


def identity_of(embedder: Embedder) -> EmbedderIdentity:
    """The embedder's ``identity`` when it has one, else its ``name`` (the class name when it
    has none) and ``dim``; never calls the embedder (no I/O)."""
    identity = getattr(embedder, "identity", None)
    if isinstance(identity, EmbedderIdentity):
        return identity
    name = getattr(embedder, "name", None) or type(embedder).__name__
    dim = getattr(type(embedder), "dim", None)  # a class attribute: a property may call out
    if not isinstance(dim, int):
        dim = embedder.__dict__.get("dim") if hasattr(embedder, "__dict__") else None
    return EmbedderIdentity(model=str(name), dim=dim if isinstance(dim, int) else None)


def mismatch_message(collection: str, stored: EmbedderIdentity, current: EmbedderIdentity) -> str:
    """The one-line error naming both identities and the fix."""
    fields = ", ".join(stored.differences(current))
    return (
        f"collection {collection!r} was built by embedder {stored.describe()}, but the "
        f"current embedder is {current.describe()} (they differ in {fields}). {FIX}"
    )


def check_identity(
    store: CollectionInfo, schema: DomainSchema, embedder: Embedder
) -> EmbedderIdentity | None:
    """Compare the collection's recorded embedder with ``embedder``; returns the recorded
    identity (None when the collection does not exist or has none recorded: accepted).
    ``store``: the vector store, or what its files say without it (the result-cache gate's).

    Raises:
        EmbedderMismatch: when the recorded identity differs from the current one.
        VectorStoreError: when the store cannot be read.
    """
    stored = store.embedder_identity(schema)
    current = identity_of(embedder)
    if stored is not None and stored.differences(current):
        raise EmbedderMismatch(mismatch_message(store.collection(schema), stored, current))
    return stored


def adopt_identity(
    store: VectorStore,
    schema: DomainSchema,
    embedder: Embedder,
    stored: EmbedderIdentity | None,
) -> None:
    """After a write's :func:`check_identity` and ``ensure_collection``: record the current
    embedder's identity when the collection has none (new, or built before identities were
    recorded), or fill in what the recorded one did not know (an API's dimension).

    Raises:
        VectorStoreError: when the store cannot be written.
    """
    current = identity_of(embedder)
    merged = current if stored is None else stored.merged(current)
    if merged != stored:
        store.record_embedder_identity(schema, merged)


__all__ = ["FIX", "adopt_identity", "check_identity", "identity_of", "mismatch_message"]
