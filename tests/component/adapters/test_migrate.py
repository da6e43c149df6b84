"""A qdrant-client local-mode store (an earlier version's default: no sparse vector, BM25 in
bm25s files beside it) moves into Qdrant Edge: every point, payload and dense vector as it
was, the BM25 sparse vectors computed from the payloads with the corpus' average length; the
copy is checked before the old folder is moved aside; a failed copy leaves it in place and
the next run completes it; an Edge shard of its own is not overwritten without --force; it
happens on first use and with ``agentic-search migrate`` (with progress lines)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from component.adapters.test_edge_store import lucene_bm25
from qdrant_client import QdrantClient
from qdrant_client import models as qm

from agentic_search.adapters.edge.sparse import EdgeSparseKeywordIndex
from agentic_search.adapters.edge.store import EdgeStore
from agentic_search.adapters.qdrant.ids import point_id
from agentic_search.config import Settings
from agentic_search.logic.schema import load_schema
from agentic_search.logic.text import keyword_text
from agentic_search.ports import VectorStoreError
from agentic_search.wire import HASHES_KEY, PointWrite
from agentic_search.wiring import build_dependencies, local_store_pending, migrate_local_store

DOCS = load_schema("documents")
WORDS = ["vitamin", "bone", "density", "coral", "reef", "insulin", "glucose", "chess", "the"]
DIM = 8


def _old_local_store(home: Path, n: int = 300, seed: int = 4) -> dict[str, dict]:
    """``home/qdrant/documents`` as an earlier version wrote it (dense vectors only) and a
    bm25s folder; returns the payloads by id."""
    rng = np.random.default_rng(seed)
    client = QdrantClient(path=str(home / "qdrant" / "documents"))
    client.create_collection(
        "documents",
        vectors_config={
            a: qm.VectorParams(size=DIM, distance=qm.Distance.COSINE) for a in DOCS.aspect_names
        },
    )
    payloads = {}
    points = []
    for i in range(n):
        rid = f"d{i}"
        text = " ".join(rng.choice(WORDS, size=int(rng.integers(1, 30))))
        payloads[rid] = {"id": rid, "title": f"note {i}", "text": text, HASHES_KEY: {"c": str(i)}}
        points.append(
            qm.PointStruct(
                id=point_id("documents", rid),
                vector={a: rng.normal(size=DIM).tolist() for a in DOCS.aspect_names},
                payload=payloads[rid],
            )
        )
    client.upsert("documents", points=points)
    client.close()
    (home / "bm25" / "documents").mkdir(parents=True)
    (home / "bm25" / "documents" / "params.index.json").write_text("{}")
    return payloads


class _Bar:
    """A progress bar that remembers what it was told."""

    def __init__(self) -> None:
        self.tasks: dict[int, list] = {}

    def add_task(self, description: str, total: float | None = None, **_: object) -> int:
        self.tasks[len(self.tasks)] = [description, total, 0]
        return len(self.tasks) - 1

    def advance(self, task: int, advance: float = 1) -> None:
        self.tasks[task][2] += advance


def test_a_local_store_moves_into_edge_with_everything(tmp_path: Path) -> None:
    """GIVEN an earlier version's local-mode store of 300 points WHEN migrated THEN the Edge
    shard holds the same ids, payloads (content hashes too) and dense vectors, BM25 scores are
    (k1 + 1) x Lucene BM25's with the true average length, the progress bar reached its
    total, the old folders moved into qdrant.migrated, and nothing is pending any more."""
    home = tmp_path / "home"
    payloads = _old_local_store(home)
    local_vectors = {}
    client = QdrantClient(path=str(home / "qdrant" / "documents"))
    for p in client.scroll("documents", limit=1000, with_vectors=True)[0]:
        local_vectors[p.payload["id"]] = p.vector
    client.close()
    settings = Settings(agentic_search_home=home)
    assert [s.name for s in local_store_pending(settings)] == ["documents"]

    bar, lines = _Bar(), []
    done = migrate_local_store(settings, progress=bar, say=lines.append)

    assert [(m.domain, m.status, m.points) for m in done] == [("documents", "copied", 300)]
    assert len(lines) == 1 and "300 points" in lines[0] and "verified" in lines[0]
    [(description, total, advanced)] = bar.tasks.values()
    assert "documents" in description and advanced == total == 600
    assert not (home / "qdrant" / "documents").exists()
    assert (home / "qdrant.migrated" / "documents" / "meta.json").is_file()
    assert (home / "qdrant.migrated" / "documents.bm25s" / "params.index.json").is_file()
    assert not (home / "bm25" / "documents").exists()
    assert local_store_pending(settings) == []
    assert migrate_local_store(settings) == []

    edge = EdgeStore(settings)
    got = edge.retrieve_records(DOCS, list(payloads), with_vectors=True)
    assert set(got) == set(payloads) and edge.count(DOCS) == 300
    for rid, rec in got.items():
        assert rec.payload == payloads[rid]
        for aspect in DOCS.aspect_names:
            want = np.asarray(local_vectors[rid][aspect])  # Edge keeps cosine vectors unit
            assert rec.vectors[aspect] == pytest.approx(want / np.linalg.norm(want), abs=1e-5)
    kw = EdgeSparseKeywordIndex(edge, schema=DOCS)
    terms = {rid: kw.analyzer.terms(keyword_text(DOCS, p)) for rid, p in payloads.items()}
    assert kw.avg_doc_len_of(DOCS) == pytest.approx(sum(map(len, terms.values())) / 300)
    assert kw.refresh(DOCS) is False  # already weighted with the corpus' average
    expected = lucene_bm25(terms, ["coral", "insulin"], kw.k1, kw.b)
    hits = kw.search(DOCS, "coral insulin", 300)
    assert {h.id for h in hits} == set(expected)
    for h in hits:
        assert math.isclose(h.score, (kw.k1 + 1) * expected[h.id], rel_tol=1e-4)
    edge.close()


def test_a_copy_that_does_not_verify_keeps_the_local_folder_and_the_next_run_completes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN a copy that loses points (an upsert that drops its last point) WHEN migrated
    THEN a one-line error naming the counts, the local folder still in place and pending;
    WHEN run again with a sound engine THEN the copy completes over the partial shard."""
    home = tmp_path / "home"
    payloads = _old_local_store(home, n=40)
    settings = Settings(agentic_search_home=home)
    real = EdgeStore.upsert

    def lossy(self: EdgeStore, schema, points: list[PointWrite]) -> None:  # type: ignore[no-untyped-def]
        real(self, schema, points[:-1])

    monkeypatch.setattr(EdgeStore, "upsert", lossy)
    with pytest.raises(VectorStoreError) as err:
        migrate_local_store(settings)
    assert "40 records there, 39 in Edge" in str(err.value) and "\n" not in str(err.value)
    assert (home / "qdrant" / "documents" / "meta.json").is_file()
    assert [s.name for s in local_store_pending(settings)] == ["documents"]

    monkeypatch.setattr(EdgeStore, "upsert", real)
    [done] = migrate_local_store(settings)
    assert (done.status, done.points) == ("copied", 40)
    edge = EdgeStore(settings)
    assert set(edge.retrieve_records(DOCS, list(payloads))) == set(payloads)
    assert not list(edge.root.glob("*.migrating.json"))
    edge.close()


def test_an_edge_shard_of_its_own_is_kept_unless_forced(tmp_path: Path) -> None:
    """GIVEN an Edge shard already written by Edge and a local-mode store beside it WHEN
    migrated THEN neither is touched and the report says why; WHEN forced THEN the shard
    holds the local-mode collection."""
    home = tmp_path / "home"
    payloads = _old_local_store(home, n=20)
    settings = Settings(agentic_search_home=home)
    edge = EdgeStore(settings)
    edge.ensure_collection(DOCS, DIM)
    edge.upsert(
        DOCS, [PointWrite("own", {a: [1.0] * DIM for a in DOCS.aspect_names}, {"id": "own"})]
    )
    edge.close()

    [skipped] = migrate_local_store(settings)
    assert skipped.status == "skipped" and "--force" in skipped.line()
    assert (home / "qdrant" / "documents" / "meta.json").is_file()

    [forced] = migrate_local_store(settings, force=True)
    assert (forced.status, forced.points) == ("copied", 20)
    edge = EdgeStore(settings)
    assert edge.count(DOCS) == 20 and not edge.retrieve_records(DOCS, ["own"])
    assert set(edge.retrieve_records(DOCS, list(payloads))) == set(payloads)
    edge.close()


def test_first_use_migrates_and_the_command_reports_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """GIVEN an earlier version's store WHEN the dependencies of its domain are first used
    (the default engine, Edge) THEN the store is migrated and searchable; GIVEN another one
    WHEN ``agentic-search migrate`` runs THEN it prints the progress line and the report,
    and a second run has nothing to do."""
    monkeypatch.delenv("VECTOR_STORE", raising=False)
    home = tmp_path / "auto"
    _old_local_store(home, n=30)
    c = build_dependencies(Settings(agentic_search_home=home), "documents")
    assert c.store.count(DOCS) == 30
    assert [h.id for h in c.keyword.search(DOCS, "chess", 30)]
    assert not (home / "qdrant" / "documents").exists()
    c.store.close()

    from agentic_search_cli.main import main

    home = tmp_path / "cli"
    _old_local_store(home, n=30)
    monkeypatch.setenv("AGENTIC_SEARCH_HOME", str(home))
    assert main(["migrate"]) == 0
    err = capsys.readouterr().err
    assert "migrating 'documents' to Qdrant Edge: 60/60 (100%)" in err
    assert "30 points moved from local mode into Qdrant Edge" in err
    assert main(["migrate"]) == 0
    assert "nothing to migrate" in capsys.readouterr().out
