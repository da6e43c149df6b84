"""Process-wide tuning for searching: frozen heap after warm-up, one BLAS thread, and a
single-thread session for query embeddings that gives the same vectors as the batch one."""

from __future__ import annotations

import gc

import numpy as np
from threadpoolctl import threadpool_info

from agentic_search.config import Settings
from agentic_search.process_tuning import (
    DEFAULT_THRESHOLDS,
    YOUNG_THRESHOLD,
    freeze_long_lived,
    limit_blas_threads,
    unfreeze,
)
from agentic_search.service import SearchService


def test_freeze_moves_the_live_heap_out_of_collections():
    try:
        # WHEN the heap is frozen after warm-up
        frozen = freeze_long_lived()
        # THEN what was alive is in the permanent generation, not in the collected ones
        assert frozen == gc.get_freeze_count() > 1000
        assert sum(gc.get_count()) < frozen
        # AND young collections come every YOUNG_THRESHOLD allocations, not CPython's 700
        # (the older generations keep theirs)
        assert gc.get_threshold() == (YOUNG_THRESHOLD, *DEFAULT_THRESHOLDS[1:])
    finally:
        unfreeze()
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == DEFAULT_THRESHOLDS


def test_an_engine_caps_blas_at_its_setting(tmp_path, embedder):
    def blas_threads() -> set[int]:
        return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    try:
        limit_blas_threads(2)
        assert blas_threads() == {2}
        # WHEN an engine is made with the default settings (BLAS_THREADS=1) and its store, the
        # first thing a search computes with BLAS, is opened
        engine = SearchService.create(
            Settings(agentic_search_home=tmp_path), "tools", embedder=embedder
        )
        engine.deps.store  # noqa: B018 - built on first use
        engine.close()
        # THEN the process's BLAS pools run one thread
        assert blas_threads() == {1}
        # AND BLAS_THREADS=0 leaves them alone
        limit_blas_threads(2)
        engine = SearchService.create(
            Settings(agentic_search_home=tmp_path, blas_threads=0), "tools", embedder=embedder
        )
        engine.deps.store  # noqa: B018
        engine.close()
        assert blas_threads() == {2}
    finally:
        limit_blas_threads(1)


def test_query_session_gives_the_batch_sessions_vectors_on_one_thread(embedder):
    texts = ["free alternative to Cursor", "vitamin D and bone density in older adults"]
    # WHEN queries are embedded by the query session and by the batch session
    queries = embedder.embed_queries(texts)
    documents = embedder.embed_documents(texts)
    # THEN the vectors are the same (same model file, pooling and normalization)
    assert queries.shape == (2, 384) and queries.dtype == np.float32
    assert np.allclose(queries, documents, atol=1e-5)
    assert np.allclose(embedder.embed_query(texts[1]), documents[1], atol=1e-5)
    # AND the query session runs on the configured single intra-op thread
    session = embedder._query_model.model.model
    assert session.get_session_options().intra_op_num_threads == 1
    assert embedder.embed_queries([]).shape == (0, 384)
