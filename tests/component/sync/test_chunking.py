"""Chunking at ingest: windows, overlap, identity and title carried into every chunk."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agentic_search.logic.chunking import chunk_record, doc_id_of, doc_ranking
from agentic_search.logic.schema import ChunkSpec, load_schema


@pytest.fixture()
def schema():
    base = load_schema("documents")
    return base.model_copy(update={"chunking": ChunkSpec(max_words=4, overlap_words=1)})


def _doc(n_words: int) -> dict:
    return {"id": "d1", "title": "Title", "text": " ".join(f"w{i}" for i in range(n_words))}


def test_a_short_text_is_one_chunk_with_the_document_id(schema):
    (only,) = chunk_record(schema, _doc(4))
    assert only["id"] == "d1" and only["doc_id"] == "d1" and only["chunk_id"] == 0
    assert only["text"] == "w0 w1 w2 w3"


def test_long_text_windows_overlap_and_carry_the_title(schema):
    # 10 words, windows of 4 with overlap 1 -> starts every 3 words: 0, 3, 6
    # (a start at 9 would hold only the overlap word w9, which the window at 6 already has)
    chunks = chunk_record(schema, _doc(10))
    assert [c["text"] for c in chunks] == ["w0 w1 w2 w3", "w3 w4 w5 w6", "w6 w7 w8 w9"]
    assert [c["id"] for c in chunks] == ["d1", "d1::1", "d1::2"]
    assert [c["chunk_id"] for c in chunks] == [0, 1, 2]
    assert all(c["doc_id"] == "d1" and c["title"] == "Title" for c in chunks)


def test_no_chunking_spec_leaves_the_record_untouched():
    schema = load_schema("tools")
    record = {"id": "x", "name": "X", "description": "a " * 1000}
    assert chunk_record(schema, record) == [record]


def test_overlap_must_be_smaller_than_the_window():
    with pytest.raises(ValidationError, match="overlap_words must be smaller"):
        ChunkSpec(max_words=10, overlap_words=10)


def test_rankings_of_chunks_map_to_documents_at_their_best_rank():
    assert doc_id_of("d1::2") == "d1" and doc_id_of("d1") == "d1"
    assert doc_ranking(["d2::1", "d1", "d2", "d3::4", "d1::1"]) == ["d2", "d1", "d3"]


def test_ingest_progress_counts_records_not_their_chunks(tmp_path, embedder):
    from agentic_search.config import Settings
    from agentic_search.service import SearchService

    # GIVEN three documents, one long enough for three chunks
    long_text = " ".join(f"w{i}" for i in range(900))
    records = [
        {"id": "a", "title": "A", "text": "short one"},
        {"id": "b", "title": "B", "text": long_text},
        {"id": "c", "title": "C", "text": "short two"},
    ]
    engine = SearchService.create(
        Settings(agentic_search_home=tmp_path), "documents", embedder=embedder
    )
    done: list[int] = []
    try:
        # WHEN they are ingested in batches of two chunks
        stats = engine.ingest_records(records, batch_size=2, on_progress=done.append)
    finally:
        engine.close()
    # THEN five points went in, and progress adds up to the three records a caller counts
    assert stats.inserted == 5
    assert sum(done) == 3


def test_a_chunked_document_is_returned_once_with_its_best_chunk(tmp_path, embedder):
    from agentic_search.config import Settings
    from agentic_search.service import SearchService

    # GIVEN documents of 3 chunks each (400-word windows), every chunk about the same topic
    def body(topic: str, n: int) -> str:
        return " ".join(f"{topic} sentence {i} about {topic} and more {topic}." for i in range(n))

    records = [
        {"id": f"d{i}", "title": f"Notes {i} on {topic}", "text": body(topic, 150)}
        for i, topic in enumerate(["glaciers", "glaciers", "volcanoes", "glaciers", "tides"])
    ]
    engine = SearchService.create(
        Settings(agentic_search_home=tmp_path), "documents", embedder=embedder
    )
    try:
        stats = engine.ingest_records(records)
        assert stats.inserted > len(records)  # chunked: more points than documents
        # WHEN a query matching many chunks of several documents asks for 5 results
        out = engine.search("glaciers", limit=5).output
    finally:
        engine.close()
    # THEN each document appears once, named by its document id, its best chunk in provenance
    ids = [c.id for c in out.candidates]
    assert ids and len(ids) == len(set(ids))
    assert all("::" not in i for i in ids)
    assert {"d0", "d1", "d3"} <= set(ids)
    for cand in out.candidates:
        assert cand.provenance.chunk is not None
        assert doc_id_of(cand.provenance.chunk) == cand.id
