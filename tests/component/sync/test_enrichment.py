"""Index-time enrichment through the real ingest, the real Edge store and MiniLM, with the LLM
at the provider edge recorded (tests/support/fake_llm.py: an OpenAI-compatible server on
loopback that logs every request): what is written, what is asked again, what a failure does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentic_search.logic.enrichment import CATALOG_PROMPT
from agentic_search.logic.text import keyword_text
from agentic_search.service import SearchService
from agentic_search.sync.files import bundled_catalog_path, read_catalog
from agentic_search.wire import ENTITY_KEY, INTERNAL_KEYS
from agentic_search.wire.records import CATEGORY_KEY, ENRICHMENT_KEY, NEEDS_KEY
from tests.support.fake_llm import FakeLLM, enrich_settings

#: Enough records for the filter to measure the catalog's mean record itself (the first
#: test); the others take fewer (the filter then keeps to its name and duplicate rules).
N = 56
N_SMALL = 12


@pytest.fixture
def records(request: pytest.FixtureRequest) -> list[dict]:
    n = N if "filtered_needs" in request.node.name else N_SMALL
    lines = bundled_catalog_path().read_text().splitlines()
    return [json.loads(ln) for ln in lines[:n]]


@pytest.fixture
def catalog(tmp_path: Path, records: list[dict]) -> Path:
    path = tmp_path / "part.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeLLM]:
    server = FakeLLM(tmp_path / "asked.jsonl").start()
    yield server
    server.stop()


def _engine(home: Path, fake: FakeLLM, embedder, enrich: str = "openai") -> SearchService:
    return SearchService.create(enrich_settings(home, fake, enrich), "tools", embedder=embedder)


def _payloads(engine: SearchService) -> dict[str, dict]:
    schema = engine.schema
    return {str(p[schema.id_field]): p for p in engine.deps.store.scroll(schema)}


def test_an_enriched_ingest_writes_filtered_needs_beside_the_unchanged_fields(
    tmp_path, fake, embedder, catalog, records
):
    engine = _engine(tmp_path / "home", fake, embedder)
    try:
        report = engine.ingest_file(catalog)
        e = report.stats.enrichment
        # every record was asked once, and each answer was filtered
        assert e.asked == N and not e.failed
        assert sorted(fake.asked()) == sorted(r["name"] for r in records)
        assert 0 < e.kept < e.generated
        payloads = _payloads(engine)
        validated = {r["id"]: r for r in read_catalog(catalog, engine.schema).records}
        for rec in records:
            p = payloads[rec["id"]]
            # the record's own fields are stored as they were read
            own = {k: v for k, v in p.items() if k not in INTERNAL_KEYS | {ENTITY_KEY}}
            assert own == validated[rec["id"]]
            meta = p[ENRICHMENT_KEY]
            assert meta["prompt"] == CATALOG_PROMPT.version and meta["model"] == "fake-enricher"
            needs = p.get(NEEDS_KEY, [])
            # the named need and the duplicate the recorded LLM writes are gone
            assert all(rec["name"].lower() not in n.lower() for n in needs)
            assert len(needs) == len({n.lower() for n in needs})
            assert p[CATEGORY_KEY] == "handy software"
        # the tools domain keeps the needs' words out of BM25 (keyword_weight 0): the indexed
        # text is the record's own; a domain that weights them reads them as a field of
        # their own, repeated keyword_weight times
        spec = engine.schema.enrichment
        assert spec is not None and spec.keyword_weight == 0
        one = payloads[records[0]["id"]]
        assert "handy" not in keyword_text(engine.schema, one)
        weighted = engine.schema.model_copy(
            update={"enrichment": spec.model_copy(update={"keyword_weight": 2})}
        )
        assert keyword_text(weighted, one).count("handy software") == 2
        assert keyword_text(weighted, validated[records[0]["id"]]) == keyword_text(
            engine.schema, one
        )  # a record without enrichment: the same text under either weight
        # and the needs aspect holds a vector per record that kept a need
        kept = [rid for rid, p in payloads.items() if p.get(NEEDS_KEY)]
        vec = embedder.embed_query(payloads[kept[0]][NEEDS_KEY][0])
        top = engine.deps.store.query_dense(engine.schema, "needs", vec, 5)
        assert kept[0] in [h.id for h in top]
    finally:
        engine.close()


def test_an_unchanged_record_is_never_asked_again_and_a_changed_one_is(
    tmp_path, fake, embedder, catalog, records
):
    home = tmp_path / "home"
    engine = _engine(home, fake, embedder)
    try:
        engine.ingest_file(catalog)
        first = len(fake.asked())
        again = engine.ingest_file(catalog)
        assert len(fake.asked()) == first  # nothing asked
        assert again.stats.enrichment.from_index == N_SMALL
        assert again.stats.unchanged == N_SMALL
        before = _payloads(engine)[records[3]["id"]][ENRICHMENT_KEY]
        changed = [dict(r) for r in records]
        changed[3]["use_cases"] = [*changed[3]["use_cases"], "plan a garden"]
        catalog.write_text("".join(json.dumps(r) + "\n" for r in changed))
        third = engine.ingest_file(catalog)
        assert fake.asked()[first:] == [records[3]["name"]]
        assert third.stats.enrichment.asked == 1
        after = _payloads(engine)[records[3]["id"]]
        assert after[ENRICHMENT_KEY]["text"] != before["text"]
        assert after[ENRICHMENT_KEY]["generated"] == before["generated"] + 1
        assert after["use_cases"][-1] == "plan a garden"
    finally:
        engine.close()
    # a fresh index over the same home reads the kept answers: nothing is asked
    (home / "edge").rename(home / "edge-old")
    engine = _engine(home, fake, embedder)
    try:
        before = len(fake.asked())
        report = engine.ingest_file(catalog)
        assert len(fake.asked()) == before
        assert report.stats.enrichment.from_cache == N_SMALL
    finally:
        engine.close()


def test_a_failed_enrichment_is_indexed_without_listed_and_asked_again_next_time(
    tmp_path, embedder, catalog, records
):
    failing = records[5]["name"]
    fake = FakeLLM(tmp_path / "asked.jsonl", fail={failing}).start()
    home = tmp_path / "home"
    try:
        engine = _engine(home, fake, embedder)
        try:
            report = engine.ingest_file(catalog)
            e = report.stats.enrichment
            assert list(e.failed) == [records[5]["id"]]
            assert report.stats.inserted == N_SMALL  # the ingest did not fail
            p = _payloads(engine)[records[5]["id"]]
            assert NEEDS_KEY not in p and ENRICHMENT_KEY not in p
            assert engine.deps.enrichment_store.failures("tools") == e.failed
        finally:
            engine.close()
        fake.fail.clear()
        engine = _engine(home, fake, embedder)
        try:
            before = len(fake.asked())
            report = engine.ingest_file(catalog)
            assert fake.asked()[before:] == [failing]
            assert not report.stats.enrichment.failed
            assert NEEDS_KEY in _payloads(engine)[records[5]["id"]]
            assert engine.deps.enrichment_store.failures("tools") == {}
        finally:
            engine.close()
    finally:
        fake.stop()


def test_enrich_off_asks_nothing_and_keeps_what_was_written(
    tmp_path, fake, embedder, catalog, records
):
    home = tmp_path / "home"
    engine = _engine(home, fake, embedder)
    try:
        engine.ingest_file(catalog)
    finally:
        engine.close()
    asked = len(fake.asked())
    engine = _engine(home, fake, embedder, enrich="off")
    try:
        report = engine.ingest_file(catalog)
        assert len(fake.asked()) == asked
        assert report.stats.enrichment.from_index == N_SMALL
        assert report.stats.unchanged == N_SMALL
        assert engine.deps.index_enriched()
    finally:
        engine.close()


def test_a_task_phrased_query_searches_the_needs_only_where_the_index_has_them(
    tmp_path, fake, embedder, catalog
):
    # WITHOUT any enrichment the plan is what it was (no source that finds nothing)
    plain = _engine(tmp_path / "plain", fake, embedder, enrich="off")
    enriched = _engine(tmp_path / "enriched", fake, embedder)
    try:
        plain.ingest_file(catalog)
        enriched.ingest_file(catalog)
        query = "I want to cheer up my grandmother on her birthday"
        aspects = {}
        for name, engine in (("plain", plain), ("enriched", enriched)):
            out = engine.search(query, limit=5)
            aspects[name] = {s.aspect for s in out.plan.vector_sources}
        assert "needs" not in aspects["plain"]
        assert "needs" in aspects["enriched"]
        assert aspects["enriched"] - {"needs"} == aspects["plain"]
    finally:
        plain.close()
        enriched.close()


def test_each_chunk_of_a_long_document_gets_its_situating_context(tmp_path, fake, embedder):
    words = [f"w{i}" for i in range(900)]
    docs = [
        {"_id": "long", "title": "A long study", "text": " ".join(words)},
        {"_id": "short", "title": "A short note", "text": "nothing to situate here"},
    ]
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    settings = enrich_settings(tmp_path / "home", fake)
    engine = SearchService.create(settings, "documents", embedder=embedder)
    try:
        report = engine.ingest_file(path, id_key="_id")
        payloads = _payloads(engine)
        chunks = sorted(k for k in payloads if k.startswith("long"))
        assert len(chunks) == 3 and report.stats.enrichment.asked == 3
        for rid in chunks:
            context = payloads[rid]["_context"]
            first = payloads[rid]["text"].split()[0]
            assert context.startswith("This passage of the document covers " + first)
        assert "_context" not in payloads["short"]  # a one-chunk document has no parent
        hits = engine.deps.keyword.search(engine.schema, "passage document covers", 10)
        assert sorted(h.id for h in hits) == chunks
    finally:
        engine.close()
