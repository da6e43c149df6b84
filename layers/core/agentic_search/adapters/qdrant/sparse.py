"""BM25 through Qdrant sparse vectors (server mode): a sparse ``bm25`` vector per point with
the IDF modifier computed by Qdrant and the term-frequency weights computed here
(:mod:`agentic_search.domain.bm25`, the same analyzer as every keyword index)."""

from __future__ import annotations

from collections.abc import Sequence

from agentic_search.adapters.qdrant.filters import to_qdrant
from agentic_search.adapters.qdrant.store import QdrantStore
from agentic_search.domain.bm25 import (
    DEFAULT_B,
    DEFAULT_K1,
    document_vector,
    query_vector,
    term_index,
)
from agentic_search.domain.schema import DomainSchema
from agentic_search.domain.text import Analyzer, default_analyzer
from agentic_search.state import Filter, ScoredRecord, SparseVector


class QdrantSparseKeywordIndex:
    """BM25 through Qdrant sparse vectors (server mode)."""

    name = "qdrant-sparse-bm25"

    def __init__(
        self,
        store: QdrantStore,
        analyzer: Analyzer | None = None,
        avg_doc_len: float = 256.0,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
    ) -> None:
        self.store = store
        self.analyzer = analyzer or default_analyzer()
        self.avg_doc_len = avg_doc_len
        self.k1 = k1
        self.b = b

    def sparse_vector(self, text: str) -> SparseVector | None:
        """BM25 TF weights of a document's terms (IDF is applied by Qdrant)."""
        return document_vector(self.analyzer, text, self.avg_doc_len, self.k1, self.b)

    def query_vector(self, text: str) -> SparseVector:
        """Query-side vector: weight 1 per distinct term."""
        return query_vector(self.analyzer, text)

    def search(
        self,
        schema: DomainSchema,
        text: str,
        top_k: int,
        filters: Sequence[Filter] = (),
        exclude_ids: Sequence[str] = (),
    ) -> list[ScoredRecord]:
        """Sparse search on the server, filters compiled to a Qdrant payload filter."""
        vec = self.query_vector(text)
        if not vec.indices:
            return []
        return self.store.query_sparse(schema, vec, top_k, to_qdrant(schema, filters, exclude_ids))

    def refresh(self, schema: DomainSchema) -> None:
        """Nothing to do: sparse vectors are written with the points."""

    def term_presence(
        self, schema: DomainSchema, terms: Sequence[str], record_ids: Sequence[str]
    ) -> dict[str, set[str]]:
        """Unknown here (the server holds hashed term indexes): every id is absent."""
        return {}

    def known_terms(self, schema: DomainSchema, terms: Sequence[str]) -> set[str] | None:
        """The ``terms`` some point's sparse vector holds: one single-term sparse query each
        (top 1), on the CRC-32 index the documents were written with."""
        out: set[str] = set()
        for term in dict.fromkeys(terms):
            idx = term_index(term)
            vec = SparseVector(indices=[idx], values=[1.0])
            if self.store.query_sparse(schema, vec, 1, None):
                out.add(term)
        return out
