"""bm25s postings answer "which query terms does this record contain" exactly as analysing
the record's keyword text does (the executor's matched_terms use them instead)."""

from __future__ import annotations

import numpy as np
from qdrant_client import QdrantClient
from qdrant_client import models as qm

from agentic_search.adapters.bm25s import Bm25sKeywordIndex
from agentic_search.adapters.qdrant.store import QdrantStore
from agentic_search.config import Settings
from agentic_search.domain.schema import load_schema
from agentic_search.domain.text import default_analyzer, keyword_text
from agentic_search.state import PointWrite

SCHEMA = load_schema("documents")
WORDS = [
    "Vitamin",
    "bones",
    "density",
    "the",
    "of",
    "running",
    "runs",
    "coral",
    "reefs",
    "insulin",
    "glucose",
    "T-cells",
    "IL-6",
    "a",
    "x",
]


def test_term_presence_equals_analysing_each_text(tmp_path) -> None:
    """GIVEN 80 random records indexed by bm25s
    WHEN asked which of some stems (present, absent, stopword-like) records contain
    THEN each known id gets exactly query stems & analysed stems of its keyword text, and ids
    the index does not hold are absent."""
    store = QdrantStore(Settings(), client=QdrantClient(":memory:"))
    store.client.create_collection(
        store.collection(SCHEMA),
        vectors_config={"content": qm.VectorParams(size=2, distance=qm.Distance.COSINE)},
    )
    rng = np.random.default_rng(3)
    records = {}
    for i in range(80):
        rec = {
            "id": f"d{i}",
            "title": " ".join(rng.choice(WORDS, size=2)),
            "text": " ".join(rng.choice(WORDS, size=int(rng.integers(1, 12)))),
        }
        records[rec["id"]] = rec
    store.upsert(
        SCHEMA,
        [PointWrite(rid, {"content": [1.0, 0.5]}, r) for rid, r in records.items()],
    )
    kw = Bm25sKeywordIndex(store, tmp_path)
    kw.refresh(SCHEMA)
    analyzer = default_analyzer()
    for query in ["vitamin bone density", "running insulin coral", "IL-6 t-cells", "absent"]:
        terms = sorted(set(analyzer.terms(query)))
        ids = [f"d{i}" for i in rng.permutation(80)[:40]] + ["missing"]
        got = kw.term_presence(SCHEMA, terms, ids)
        assert "missing" not in got and set(got) == set(ids) - {"missing"}
        for rid, present in got.items():
            want = set(terms) & set(analyzer.terms(keyword_text(SCHEMA, records[rid])))
            assert present == want, (query, rid)
