"""BM25 as sparse vectors, with the shared analyzer (:mod:`agentic_search.logic.text`).

A document's vector holds BM25 term-frequency weights,
``tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))`` (Robertson and Zaragoza, "The
Probabilistic Relevance Framework: BM25 and Beyond", 2009); the IDF factor is applied by the
engine (Qdrant's ``Modifier.IDF``). A query's vector weighs each term by its count in the
query, so a term said twice adds its score twice, as Lucene's ``BooleanQuery`` of term clauses
and bm25s (``BM25.get_scores`` sums over the query's tokens, repeats included) do. Terms are
hashed to stable 31-bit indices (CRC-32), so a collection built anywhere ranks the same.
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Sequence

from agentic_search.logic.text import Analyzer, contains_phrase
from agentic_search.wire import SparseVector

DEFAULT_K1 = 1.2
DEFAULT_B = 0.75


def term_index(term: str) -> int:
    """Stable 31-bit index of a term for sparse vectors (CRC-32)."""
    return zlib.crc32(term.encode("utf-8")) & 0x7FFFFFFF


def document_vector(
    analyzer: Analyzer,
    text: str,
    avg_doc_len: float,
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
) -> SparseVector:
    """BM25 TF weights of a document's terms (no IDF), indices ascending."""
    return terms_vector(analyzer.terms(text), avg_doc_len, k1, b)


def terms_vector(
    terms: Sequence[str], avg_doc_len: float, k1: float = DEFAULT_K1, b: float = DEFAULT_B
) -> SparseVector:
    """:func:`document_vector` of terms already analysed (their count is the length)."""
    if not terms:
        return SparseVector(indices=[], values=[])
    tf = Counter(term_index(t) for t in terms)
    norm = k1 * (1 - b + b * len(terms) / avg_doc_len)
    indices = sorted(tf)
    values = [tf[i] * (k1 + 1) / (tf[i] + norm) for i in indices]
    return SparseVector(indices=indices, values=values)


def query_vector(analyzer: Analyzer, text: str) -> SparseVector:
    """Query-side vector: each analysed term weighted by its count in ``text`` (a query term
    occurring n times contributes n times its BM25 score, as in Lucene and bm25s), indices
    ascending; empty when ``text`` has no terms."""
    counts = Counter(term_index(t) for t in analyzer.terms(text))
    indices = sorted(counts)
    return SparseVector(indices=indices, values=[float(counts[i]) for i in indices])


def keyword_query(base: str, *extra: str) -> str:
    """The text of a BM25 query: ``base`` followed by each of ``extra`` that it does not
    already hold (whole words, case-insensitively; see :func:`contains_phrase`), so that what
    the query already says keeps its own count (:func:`query_vector`) and an addition (a
    quoted phrase, a corrected name, a missing term) is asked without an unplanned boost."""
    text = base.strip()
    for part in extra:
        part = part.strip()
        if part and not contains_phrase(text, part):
            text = f"{text} {part}" if text else part
    return text


__all__ = [
    "DEFAULT_B",
    "DEFAULT_K1",
    "document_vector",
    "keyword_query",
    "query_vector",
    "term_index",
    "terms_vector",
]
