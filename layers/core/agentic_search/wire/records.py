"""What the stores hold and return, independent of the engine behind them.

A record is stored as one point per record id: named dense vectors (one per aspect of the
domain schema), optionally a BM25 sparse vector, and a payload (the record's fields plus the
writers' bookkeeping under :data:`INTERNAL_KEYS`). These plain dataclasses are the currency of
the :class:`~agentic_search.ports.VectorStore`, :class:`~agentic_search.ports.KeywordIndex`
and :class:`~agentic_search.ports.StructuredStore` ports; each adapter converts them to its
engine's own types.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

#: Payload key of the per-aspect content hashes (written by the indexer).
HASHES_KEY = "_hashes"
#: Payload key of the evidence snippet's token count, written by the indexer (snippets.py).
TOKENS_KEY = "_snippet_tokens"
#: Payload keys of the entity graph (names, out-edges, in-edges), written by the link pass
#: (agentic_search.sync.links).
ENTITY_KEY = "_entity"
LINKS_KEY = "_links"
LINKED_FROM_KEY = "_linked_from"
#: Payload key of a hit found by name or along the graph: the name asked for, or the edge it
#: was reached by (``<edge kind>:<from id>``); set on hits only, never stored.
VIA_KEY = "_via"
#: Payload keys of an index-time enrichment (agentic_search.logic.enrichment): the needs a
#: record answers, its category in everyday words, a chunk's situating context, provenance.
NEEDS_KEY = "_needs"
CATEGORY_KEY = "_category"
CONTEXT_KEY = "_context"
ENRICHMENT_KEY = "_enrichment"
#: Every payload key an enrichment writes beside a record (never one of its fields).
ENRICHMENT_KEYS = (NEEDS_KEY, CATEGORY_KEY, CONTEXT_KEY, ENRICHMENT_KEY)
#: Payload keys the writers add to a record's fields: never shown as record data.
INTERNAL_KEYS = frozenset(
    {
        HASHES_KEY,
        TOKENS_KEY,
        ENTITY_KEY,
        LINKS_KEY,
        LINKED_FROM_KEY,
        VIA_KEY,
        NEEDS_KEY,
        CATEGORY_KEY,
        CONTEXT_KEY,
        ENRICHMENT_KEY,
    }
)
#: Name of the BM25 sparse vector where the engine stores one (a Qdrant server).
SPARSE_VECTOR = "bm25"


@dataclass(frozen=True)
class ScoredRecord:
    """One hit: the record id, the raw score of the source, and the payload (may be empty:
    the caller then reads the record when it needs it)."""

    id: str
    score: float
    payload: dict[str, Any]


@dataclass(frozen=True)
class StoredRecord:
    """A record read back from the store: its payload and, when asked for, its named dense
    vectors (aspect -> vector). ``sparse``: its sparse BM25 vector when a payload-only read
    took it along (the embedded Edge store does: it costs the engine nothing beside the
    payload, and term presence reads it next), else None."""

    id: str
    payload: dict[str, Any]
    vectors: dict[str, list[float]] | None = None
    sparse: SparseVector | None = None


@dataclass(frozen=True)
class SparseVector:
    """A sparse vector: term indices (ascending) and their weights."""

    indices: Sequence[int]
    values: Sequence[float]


@dataclass(frozen=True)
class PointWrite:
    """A whole point to insert or replace: record id, named dense vectors, optional sparse
    vector, payload."""

    id: str
    vectors: dict[str, list[float]]
    payload: dict[str, Any]
    sparse: SparseVector | None = None


@dataclass(frozen=True)
class VectorUpdate:
    """Some named vectors of an existing point to replace (the others stay as they are)."""

    id: str
    vectors: dict[str, list[float]] = field(default_factory=dict)
    sparse: SparseVector | None = None


__all__ = [
    "ENRICHMENT_KEYS",
    "ENTITY_KEY",
    "HASHES_KEY",
    "INTERNAL_KEYS",
    "LINKED_FROM_KEY",
    "LINKS_KEY",
    "SPARSE_VECTOR",
    "TOKENS_KEY",
    "VIA_KEY",
    "PointWrite",
    "ScoredRecord",
    "SparseVector",
    "StoredRecord",
    "VectorUpdate",
]
