"""Ingest robustness and change detection, against Qdrant local mode and the real embedder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agentic_search.config import Settings
from agentic_search.ports import VectorStoreError
from agentic_search.service import SearchService
from agentic_search.sync.files import read_catalog
from agentic_search.sync.indexer import Indexer


def _record(rid: str, name: str, **over) -> dict:
    rec = {
        "id": rid,
        "name": name,
        "vendor": "Acme",
        "description": f"{name} is a local code completion assistant for Python and Rust.",
        "category": "Code Assistant",
        "functionality": ["Code Completion"],
        "features": ["inline suggestions", "runs a small model on the laptop"],
        "use_cases": ["autocomplete code offline"],
        "pricing_model": "Open Source",
        "price_monthly_usd": 0,
        "platforms": ["Linux", "macOS"],
        "deployment": ["Local"],
        "interface": ["IDE Extension"],
        "industries": ["Software Development"],
        "user_types": ["Developers"],
        "open_source": True,
    }
    rec.update(over)
    return rec


@pytest.fixture
def messy_catalog(tmp_path: Path) -> Path:
    good = [_record(f"tool-{i}", f"Tool {i}") for i in range(5)]
    missing = {k: v for k, v in _record("no-desc", "No Desc").items() if k != "description"}
    lines = [
        json.dumps(good[0]),  # 1 ok
        '{"id": "broken", "name": ',  # 2 malformed JSON
        json.dumps(good[1]),  # 3 ok
        json.dumps(missing),  # 4 missing required field
        json.dumps(_record("tool-0", "Tool 0 again")),  # 5 duplicate id
        "",  # 6 blank: skipped silently
        json.dumps(_record("bad-vocab", "Bad", category="Spaceship")),  # 7 not in vocabulary
        json.dumps(good[2]),  # 8 ok
        "[1, 2, 3]",  # 9 not an object
        json.dumps(good[3]),  # 10 ok
        json.dumps(good[4]),  # 11 ok
    ]
    path = tmp_path / "messy.jsonl"
    path.write_bytes(("\n".join(lines) + "\n").encode() + b'{"id": "\xff\xfe"}\n')  # 12 bad UTF-8
    return path


@pytest.fixture
def engine(tmp_path: Path, embedder) -> SearchService:
    eng = SearchService.create(
        Settings(agentic_search_home=tmp_path / "home"), "tools", embedder=embedder
    )
    yield eng
    eng.close()


def test_messy_file_ingests_good_lines_and_reports_bad_ones(engine, messy_catalog):
    # WHEN a file with malformed, duplicate, missing-field, off-vocabulary lines is ingested
    report = engine.ingest_file(messy_catalog)
    # THEN the five good records are in and each bad line is reported by number
    assert report.valid == 5
    assert report.stats.inserted == 5
    assert engine.deps.store.count(engine.schema) == 5
    by_line = {e.line: e for e in report.errors}
    assert sorted(by_line) == [2, 4, 5, 7, 9, 12]
    assert "malformed JSON" in by_line[2].reason
    assert "description" in by_line[4].reason and by_line[4].record_id == "no-desc"
    assert "duplicate id, first seen on line 1" in by_line[5].reason
    assert "category" in by_line[7].reason
    assert "JSON object" in by_line[9].reason
    assert "UTF-8" in by_line[12].reason


def test_reingest_changes_nothing_and_modifications_reembed_only_changed_aspects(
    engine, messy_catalog, tmp_path
):
    engine.ingest_file(messy_catalog)
    before = engine.deps.store.retrieve_records(engine.schema, ["tool-1"], with_vectors=True)[
        "tool-1"
    ]

    # WHEN the same file is ingested again THEN nothing is embedded or written
    again = engine.ingest_file(messy_catalog)
    assert again.stats.unchanged == 5
    assert again.stats.embedded_texts == 0 and not again.stats.changed

    # WHEN only the price changes THEN the payload is updated and nothing is embedded
    records = read_catalog(messy_catalog, engine.schema).records
    records[1] = {**records[1], "price_monthly_usd": 7.0}
    stats = engine.ingest_records(records)
    assert stats.updated_payload == 1 and stats.embedded_texts == 0
    payload = engine.deps.store.retrieve_records(engine.schema, ["tool-1"])["tool-1"].payload
    assert payload["price_monthly_usd"] == 7.0

    # WHEN the features change THEN only the aspects that read them are re-embedded: the
    # functionality aspect and the whole record
    records[1] = {**records[1], "features": ["voice control", "music playlists"]}
    stats = engine.ingest_records(records)
    assert stats.updated_vectors == 1
    assert stats.embedded_aspects == {"functionality": 1, "record": 1}
    after = engine.deps.store.retrieve_records(engine.schema, ["tool-1"], with_vectors=True)[
        "tool-1"
    ]
    assert np.allclose(after.vectors["identity"], before.vectors["identity"])
    assert not np.allclose(after.vectors["functionality"], before.vectors["functionality"])

    # AND the keyword index follows: the new feature words are searchable
    hits = engine.deps.keyword.search(engine.schema, "music playlists", 5)
    assert hits and hits[0].id == "tool-1"


def test_delete_removes_from_vectors_and_keywords(engine, messy_catalog):
    engine.ingest_file(messy_catalog)
    c = engine.deps
    stats = Indexer(c.store, c.embedder, c.keyword).delete(engine.schema, ["tool-2", "not-there"])
    assert stats.deleted == 1
    assert engine.deps.store.count(engine.schema) == 4
    ids = {h.id for h in engine.deps.keyword.search(engine.schema, "tool", 10)}
    assert "tool-2" not in ids and ids


class _TinyEmbedder:
    """An embedder of another dimension (the edge of the system, to provoke a mismatch)."""

    name = "tiny"
    dim = 8

    def embed_documents(self, texts):
        return np.ones((len(texts), 8), dtype=np.float32)

    def embed_query(self, text):
        return np.ones(8, dtype=np.float32)


def test_dimension_mismatch_is_a_clear_error(engine, messy_catalog):
    engine.ingest_file(messy_catalog)
    indexer = Indexer(engine.deps.store, _TinyEmbedder(), engine.deps.keyword)
    with pytest.raises(VectorStoreError) as exc:
        indexer.upsert(engine.schema, [_record("new", "New")])
    message = str(exc.value)
    assert "all-MiniLM-L6-v2-int8 (384 dims" in message and "tiny (8 dims)" in message
    assert "ingest --rebuild" in message


def test_records_written_before_snippet_counts_are_backfilled_without_embedding(
    engine, messy_catalog
):
    from agentic_search.wire import TOKENS_KEY

    engine.ingest_file(messy_catalog)
    # GIVEN a record as an older version wrote it: no snippet token count in its payload
    old = engine.deps.store.retrieve_records(engine.schema, ["tool-2"])["tool-2"].payload
    assert TOKENS_KEY in old
    engine.deps.store.update_points(
        engine.schema, [], {"tool-2": {k: v for k, v in old.items() if k != TOKENS_KEY}}
    )
    # WHEN the same file is ingested again
    again = engine.ingest_file(messy_catalog)
    # THEN only that record's payload is rewritten, with its count, and nothing is embedded
    assert again.stats.updated_payload == 1 and again.stats.unchanged == 4
    assert again.stats.embedded_texts == 0
    new = engine.deps.store.retrieve_records(engine.schema, ["tool-2"])["tool-2"].payload
    assert new[TOKENS_KEY] == old[TOKENS_KEY]
