"""BM25 through the Edge shard's sparse ``bm25`` vector (``VECTOR_STORE=edge``): the same
document and query vectors as a Qdrant server (:mod:`agentic_search.domain.bm25`, the shared
analyzer, CRC-32 term indices), the IDF applied by the engine (``Modifier.Idf``, Lucene's
``ln(1 + (N - n + 0.5) / (n + 0.5))``, as bm25s). A score is ``(k1 + 1)`` times bm25s's for the
same ``k1``, ``b`` and average document length, so the two rank alike."""

from __future__ import annotations

from collections.abc import Sequence

from agentic_search.adapters.edge.filters import to_edge
from agentic_search.adapters.edge.store import EdgeStore
from agentic_search.domain.bm25 import (
    DEFAULT_B,
    DEFAULT_K1,
    document_vector,
    query_vector,
    term_index,
)
from agentic_search.domain.schema import DomainSchema
from agentic_search.domain.text import Analyzer, default_analyzer
from agentic_search.state import SPARSE_VECTOR, Filter, ScoredRecord, SparseVector


class EdgeSparseKeywordIndex:
    """The :class:`~agentic_search.ports.KeywordIndex` over an :class:`EdgeStore`."""

    name = "edge-sparse-bm25"

    def __init__(
        self,
        store: EdgeStore,
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
        """BM25 TF weights of a document's terms (the engine applies the IDF)."""
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
        """Sparse hits with a positive score, best first, filters pushed down.

        Raises:
            FilterError: when a filter is not allowed.
        """
        flt = to_edge(schema, filters, exclude_ids)
        vec = self.query_vector(text)
        if not vec.indices or not self.store.exists(schema):
            return []
        return [h for h in self.store.query_sparse(schema, vec, top_k, flt) if h.score > 0]

    def refresh(self, schema: DomainSchema) -> None:
        """Nothing to do: sparse vectors are written with the points."""

    def term_presence(
        self, schema: DomainSchema, terms: Sequence[str], record_ids: Sequence[str]
    ) -> dict[str, set[str]]:
        """Which of ``terms`` each record contains, read from the records' stored sparse
        vectors (a term is present when its CRC-32 index is; records absent from the store
        are absent here)."""
        if not record_ids or not self.store.exists(schema):
            return {}
        wanted = {term_index(t): t for t in dict.fromkeys(terms)}
        found = self.store.vectors_of(schema, record_ids, SPARSE_VECTOR)
        out: dict[str, set[str]] = {}
        for rid, vec in found.items():
            indices = set(vec.indices) if isinstance(vec, SparseVector) else set()
            out[rid] = {t for i, t in wanted.items() if i in indices}
        return out

    def known_terms(self, schema: DomainSchema, terms: Sequence[str]) -> set[str] | None:
        """The ``terms`` some point's sparse vector holds: one single-term sparse query each
        (top 1)."""
        if not self.store.exists(schema):
            return set()
        out: set[str] = set()
        for term in dict.fromkeys(terms):
            vec = SparseVector(indices=[term_index(term)], values=[1.0])
            if self.store.query_sparse(schema, vec, 1, None):
                out.add(term)
        return out


__all__ = ["EdgeSparseKeywordIndex"]
