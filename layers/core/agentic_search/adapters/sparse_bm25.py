"""BM25 through a store's sparse ``bm25`` vector, shared by every engine that has one (Qdrant
Edge, a Qdrant server, qdrant-client local mode): the same document and query vectors
(:mod:`agentic_search.logic.bm25`, the shared analyzer, CRC-32 term indices), the IDF
applied by the engine (``Modifier.IDF``, Lucene's ``ln(1 + (N - n + 0.5) / (n + 0.5))``, as
bm25s did). A score is ``(k1 + 1)`` times bm25s's for the same ``k1``, ``b`` and average
document length, so every engine ranks alike.

The average document length is the corpus' own: a document's weights depend on it, and a
fixed guess ranks measurably worse (HotpotQA with a guessed 256 against its true average:
docs/benchmarks.md). So :meth:`SparseBm25Index.refresh` (called after
every ingest and sync) keeps the average the vectors were written with (where is the
engine's business: :meth:`SparseBm25Index._load_stats`); when the point count has moved by
more than ``RECHECK_SHARE`` since the last check it measures the average again (on the first
``SAMPLE`` points in point-id order: UUIDv5 ids make that a uniform sample), and when that
drifted by more than ``DRIFT_SHARE`` it re-weights every point's sparse vector with the
exact average (one pass over the texts) before recording it. New documents are weighted with
the recorded average. Only a writer refreshes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from itertools import islice
from typing import TYPE_CHECKING

from agentic_search.logic.bm25 import (
    DEFAULT_B,
    DEFAULT_K1,
    document_vector,
    query_vector,
    term_index,
    terms_vector,
)
from agentic_search.logic.schema import DomainSchema
from agentic_search.logic.text import (
    Analyzer,
    default_analyzer,
    keyword_payload_fields,
    keyword_text,
)
from agentic_search.wire import SPARSE_VECTOR, Filter, ScoredRecord, SparseVector

if TYPE_CHECKING:
    from agentic_search.ports import VectorStore

#: Measure the average document length again when the point count moved this much.
RECHECK_SHARE = 0.05
#: Re-weight every document when the measured average moved this much from the one used.
DRIFT_SHARE = 0.05
#: Points the average is measured on (all of them when there are fewer).
SAMPLE = 2000
_REWRITE_BATCH = 256


class SparseBm25Index(ABC):
    """The :class:`~agentic_search.ports.KeywordIndex` over a
    :class:`~agentic_search.ports.VectorStore`'s sparse vector, for the domain ``schema``
    (whose recorded average length :meth:`sparse_vector` uses; without a schema,
    ``avg_doc_len``). Engines subclass it for where the statistics live
    (:meth:`_load_stats`, :meth:`_save_stats`); filters compile with the store's own
    :meth:`~agentic_search.ports.VectorStore.compile_filter`."""

    name = "sparse-bm25"

    def __init__(
        self,
        store: VectorStore,
        analyzer: Analyzer | None = None,
        avg_doc_len: float = 256.0,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
        schema: DomainSchema | None = None,
    ) -> None:
        self.store = store
        self.analyzer = analyzer or default_analyzer()
        self.avg_doc_len = avg_doc_len
        self.k1 = k1
        self.b = b
        self.schema = schema

    # ----- what an engine provides ------------------------------------------------------------

    @abstractmethod
    def _load_stats(self, schema: DomainSchema) -> dict[str, float] | None:
        """The recorded ``{"avgdl", "count"}`` of the domain, None when none is."""

    @abstractmethod
    def _save_stats(self, schema: DomainSchema, stats: dict[str, float]) -> None:
        """Record the domain's ``{"avgdl", "count"}`` where the engine keeps metadata."""

    # ----- the corpus' average document length ------------------------------------------------

    def avg_doc_len_of(self, schema: DomainSchema) -> float:
        """The average length the domain's document vectors are weighted with (terms)."""
        stats = self._load_stats(schema)
        return float(stats["avgdl"]) if stats else self.avg_doc_len

    def set_average(self, schema: DomainSchema, avgdl: float, count: int) -> None:
        """Record that the domain's ``count`` document vectors are (about to be) weighted with
        the average length ``avgdl`` (a bulk copy that computed it first)."""
        self._save_stats(schema, {"avgdl": avgdl, "count": count})

    def _lengths(self, schema: DomainSchema) -> Iterator[tuple[str, list[str]]]:
        fields = [schema.id_field, *keyword_payload_fields(schema)]
        for payload in self.store.scroll(schema, fields):
            terms = self.analyzer.terms(keyword_text(schema, payload))
            yield str(payload[schema.id_field]), terms

    def sparse_vector(self, text: str) -> SparseVector | None:
        """BM25 TF weights of a document's terms (the engine applies the IDF), with the
        domain's recorded average length."""
        avgdl = self.avg_doc_len_of(self.schema) if self.schema else self.avg_doc_len
        return document_vector(self.analyzer, text, avgdl, self.k1, self.b)

    def query_vector(self, text: str) -> SparseVector:
        """Query-side vector: each term weighted by its count in ``text``
        (:func:`agentic_search.logic.bm25.query_vector`)."""
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
        flt = self.store.compile_filter(schema, filters, exclude_ids)
        vec = self.query_vector(text)
        if not vec.indices or not self.store.exists(schema):
            return []
        return [h for h in self.store.query_sparse(schema, vec, top_k, flt) if h.score > 0]

    def refresh(self, schema: DomainSchema) -> bool:
        """Keep the document weights on the corpus' average length (see the module
        docstring); True when every sparse vector was re-weighted."""
        count = self.store.count(schema)
        stats = self._load_stats(schema)
        if count == 0 or (stats and abs(count - stats["count"]) <= RECHECK_SHARE * stats["count"]):
            return False
        sample = [len(t) for _, t in islice(self._lengths(schema), SAMPLE)]
        measured = sum(sample) / max(1, len(sample))
        used = self.avg_doc_len_of(schema)
        if abs(measured - used) <= DRIFT_SHARE * used:
            self._save_stats(schema, {"avgdl": used, "count": count})
            return False
        if count > len(sample):  # the exact average, over every point
            total = n = 0
            for _, terms in self._lengths(schema):
                total, n = total + len(terms), n + 1
            measured = total / max(1, n)
        batch: dict[str, SparseVector] = {}
        for rid, terms in self._lengths(schema):
            batch[rid] = terms_vector(terms, measured, self.k1, self.b)
            if len(batch) >= _REWRITE_BATCH:
                self.store.update_sparse(schema, batch)
                batch = {}
        self.store.update_sparse(schema, batch)
        self._save_stats(schema, {"avgdl": measured, "count": count})
        return True

    def term_presence(
        self, schema: DomainSchema, terms: Sequence[str], record_ids: Sequence[str]
    ) -> dict[str, set[str]]:
        """Which of ``terms`` each record contains, read from the records' stored sparse
        vectors (a term is present when its CRC-32 index is; records absent from the store
        are absent here)."""
        if not record_ids or not self.store.exists(schema):
            return {}
        wanted = {term_index(t): t for t in dict.fromkeys(terms)}
        asked = set(wanted)
        found = self.store.vectors_of(schema, record_ids, SPARSE_VECTOR)
        out: dict[str, set[str]] = {}
        for rid, vec in found.items():
            # the few query terms looked up in the record's indices (not a set of them all)
            present = asked.intersection(vec.indices) if isinstance(vec, SparseVector) else ()
            out[rid] = {wanted[i] for i in present}
        return out

    def known_terms(self, schema: DomainSchema, terms: Sequence[str]) -> set[str] | None:
        """The ``terms`` some point's sparse vector holds (one batched request:
        :meth:`~agentic_search.ports.VectorStore.sparse_counts` up to 1)."""
        if not self.store.exists(schema):
            return set()
        asked = list(dict.fromkeys(terms))
        counts = self.store.sparse_counts(schema, [term_index(t) for t in asked], 1)
        return {t for t, n in zip(asked, counts, strict=True) if n}


__all__ = ["DRIFT_SHARE", "RECHECK_SHARE", "SAMPLE", "SparseBm25Index"]
