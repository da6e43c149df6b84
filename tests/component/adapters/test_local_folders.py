"""Qdrant local mode, one folder per collection: a store written in the earlier shared layout
is moved in on first use, nothing lost; a second domain's damaged folder does not stop this
one."""

from __future__ import annotations

import pytest
from qdrant_client import QdrantClient
from qdrant_client import models as qm

from agentic_search.adapters.qdrant.ids import point_id
from agentic_search.adapters.qdrant.local import LocalQdrantStore
from agentic_search.config import Settings
from agentic_search.logic.schema import load_schema
from agentic_search.ports import VectorStoreError

TOOLS = load_schema("tools")
DOCS = load_schema("documents")


def _shared_layout(root, schema, n: int) -> None:
    """What an earlier version wrote: every collection in ``root`` itself."""
    client = QdrantClient(path=str(root))
    vectors = {a: qm.VectorParams(size=4, distance=qm.Distance.COSINE) for a in schema.aspect_names}
    client.create_collection(schema.name, vectors_config=vectors)
    client.upsert(
        schema.name,
        [
            qm.PointStruct(
                id=point_id(schema.name, f"r{i}"),
                vector={a: [1.0, float(i), 0.0, 1.0] for a in schema.aspect_names},
                payload={"id": f"r{i}"},
            )
            for i in range(n)
        ],
    )
    client.close()


def test_a_shared_folder_of_an_earlier_version_is_moved_in_collection_by_collection(tmp_path):
    root = tmp_path / "qdrant"
    _shared_layout(root, TOOLS, 5)
    _shared_layout(root, DOCS, 3)
    store = LocalQdrantStore(Settings(qdrant_path=root))
    try:
        # WHEN one domain is opened THEN only it moves, with every point
        assert store.count(TOOLS) == 5
        assert (root / "tools" / "meta.json").is_file()
        assert (root / "meta.json").is_file()  # documents still in the shared folder
        # AND the other follows when it is opened, and the shared folder goes with the last
        assert store.count(DOCS) == 3
        assert not (root / "meta.json").exists()
        assert {p["id"] for p in store.scroll(TOOLS)} == {f"r{i}" for i in range(5)}
    finally:
        store.close()
    again = LocalQdrantStore(Settings(qdrant_path=root))
    try:
        assert (again.count(TOOLS), again.count(DOCS)) == (5, 3)
    finally:
        again.close()


def test_a_damaged_collection_folder_fails_only_its_domain(tmp_path):
    root = tmp_path / "qdrant"
    _shared_layout(root, TOOLS, 2)
    _shared_layout(root, DOCS, 2)
    store = LocalQdrantStore(Settings(qdrant_path=root))
    assert (store.count(TOOLS), store.count(DOCS)) == (2, 2)
    store.close()
    (root / "documents" / "meta.json").write_text("{not json")
    store = LocalQdrantStore(Settings(qdrant_path=root))
    try:
        assert store.count(TOOLS) == 2
        with pytest.raises(VectorStoreError) as err:
            store.count(DOCS)
        assert "\n" not in str(err.value) and "--rebuild --domain documents" in str(err.value)
        store.drop(DOCS)  # the repair's first step works on an unreadable folder
        assert not (root / "documents").exists() and store.count(DOCS) == 0
    finally:
        store.close()
