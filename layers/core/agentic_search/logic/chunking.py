"""Chunking at ingest: long documents become overlapping word windows, one point each.

Identity is ``doc_id`` + ``chunk_id``: chunk 0 keeps the document's id (so a document that
fits in one chunk is stored exactly as before), chunk ``n >= 1`` gets the id
``{doc_id}::{n}``. Every chunk carries the document's other fields (the title above all, so
each chunk's embedded text starts with it) plus ``doc_id`` and ``chunk_id`` in its payload.
Windows are counted in whitespace-separated words, not model tokens: the split is stable
whatever the embedder, and ``max_words`` is chosen under the embedder's max length.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from agentic_search.logic.schema import DomainSchema

CHUNK_SEP = "::"

T = TypeVar("T")


def chunk_record(schema: DomainSchema, record: dict[str, Any]) -> list[dict[str, Any]]:
    """The chunk records of one validated record (a single record when the schema has no
    ``chunking`` or the text fits in ``max_words``).

    Windows start every ``max_words - overlap_words`` words; the last window ends at the
    text's end (a window is never only overlap).
    """
    spec = schema.chunking
    rid = str(record[schema.id_field])
    text = record.get(schema.text_field)
    words = text.split() if isinstance(text, str) else []
    if spec is None or len(words) <= spec.max_words:
        return [{**record, "doc_id": rid, "chunk_id": 0}] if spec is not None else [record]
    step = spec.max_words - spec.overlap_words
    starts = list(range(0, max(1, len(words) - spec.overlap_words), step))
    out = []
    for n, start in enumerate(starts):
        chunk = dict(record)
        chunk[schema.id_field] = rid if n == 0 else f"{rid}{CHUNK_SEP}{n}"
        chunk[schema.text_field] = " ".join(words[start : start + spec.max_words])
        chunk["doc_id"] = rid
        chunk["chunk_id"] = n
        out.append(chunk)
    return out


def chunk_records(schema: DomainSchema, records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """:func:`chunk_record` over many records, in order."""
    return [c for r in records for c in chunk_record(schema, r)]


def doc_id_of(record_id: str) -> str:
    """The document id of a point's record id (``d1::2`` -> ``d1``; ``d1`` -> ``d1``)."""
    return record_id.split(CHUNK_SEP, 1)[0]


def best_chunks(ranking: Sequence[T], key: Callable[[T], str]) -> list[T]:
    """The entries of a ranking of chunks (best first) with each document once, at its best
    chunk's rank: the first entry whose ``key`` (a point's record id) maps to a document id
    not yet seen. Unchunked ids pass through unchanged."""
    seen: set[str] = set()
    out = []
    for entry in ranking:
        doc = doc_id_of(key(entry))
        if doc not in seen:
            seen.add(doc)
            out.append(entry)
    return out


def doc_ranking(ids: Sequence[str]) -> list[str]:
    """Document ids of a ranking of chunk ids: each document at its best chunk's rank."""
    return list(dict.fromkeys(doc_id_of(i) for i in ids))
