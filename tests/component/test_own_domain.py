"""A user's own domain (tests/support/own_domain.py: a minimal YAML, no entities) is searched
like a built-in one: its time field filters, its numbers stay integers, an edit of its YAML is
never answered from the old cache, a keyword_fields change reaches the BM25 side on re-ingest,
and an added aspect names the rebuild that works. Real Qdrant Edge and MiniLM."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.own_domain import write

from agentic_search.config import Settings
from agentic_search.logic.schema import load_schema
from agentic_search.ports import VectorStoreError
from agentic_search.service import SearchService
from agentic_search.wire.errors import SearchFailed


@pytest.fixture()
def own(tmp_path: Path, embedder):
    """(service over the ingested pkgs domain with a SQLite result cache, YAML path,
    catalog path, settings)."""
    yaml_path, catalog, _ = write(tmp_path / "data")
    settings = Settings(agentic_search_home=tmp_path / "home", cache_backend="sqlite")
    service = SearchService.create(settings, str(yaml_path), embedder=embedder)
    report = service.ingest_file(catalog)
    assert report.valid == 24 and not report.errors
    yield service, yaml_path, catalog, settings
    service.close()


def _reopen(settings: Settings, yaml_path: Path, embedder) -> SearchService:
    return SearchService.create(settings, str(yaml_path), embedder=embedder)


def test_a_declared_time_field_filters_without_an_entities_block(own) -> None:
    # GIVEN a schema that declares `temporal: {field: released}` and no `entities`
    service, *_ = own
    # WHEN a query bounds the time
    resp = service.search("terminal colors released since 2024", rounds=1)
    # THEN the range is a hard filter on the declared field, and every candidate keeps it
    filters = {(f.field, f.operator, f.value) for f in resp.intent.constraints}
    assert ("released", "gte", 2024) in filters
    found = {c.id: c for c in resp.output.candidates}
    assert found, "the catalog has terminal colour packages released since 2024"
    assert {"supports-color", "picocolors"} <= set(found)
    assert "chalk" not in found  # released 2023


def test_integer_fields_come_back_as_integers(own) -> None:
    # GIVEN `released: {type: integer}` and records carrying 2024
    service, *_ = own
    rec = service.deps.store.retrieve_records(service.schema, ["axios"])["axios"]
    # THEN the stored payload is the integer, not 2024.0
    assert rec.payload["released"] == 2024 and type(rec.payload["released"]) is int
    assert type(rec.payload["downloads"]) is int


def test_an_edited_yaml_is_not_answered_from_the_old_cache(own, embedder) -> None:
    # GIVEN an answer cached under the YAML as ingested
    service, yaml_path, _, settings = own
    first = service.search("parse yaml files", limit=5)
    assert first.paths["cache"].get("hit") is not True
    again = service.search("parse yaml files", limit=5)
    assert again.paths["cache"].get("hit") is True
    service.close()
    # WHEN the YAML is edited (abstention thresholds added) and its `version` left as it is
    yaml_path.write_text(
        yaml_path.read_text() + "quality: {min_relevance: 0.9, candidate_relevance: 0.95}\n"
    )
    edited = _reopen(settings, yaml_path, embedder)
    try:
        resp = edited.search("parse yaml files", limit=5)
        # THEN the search runs under the edited schema, not from the cache
        assert resp.paths["cache"].get("hit") is not True
        assert edited.schema.version == load_schema(yaml_path).version == "1"
    finally:
        edited.close()


def test_a_keyword_fields_change_is_applied_on_re_ingest(own, embedder) -> None:
    # GIVEN "millisecond" only in the summary of `ms`, found by BM25 over name + summary
    service, yaml_path, catalog, settings = own
    hits = service.deps.keyword.search(service.schema, "millisecond", 5)
    assert [h.id for h in hits] == ["ms"]
    service.close()
    # WHEN the YAML's keyword_fields drop the summary and the same file is ingested again
    yaml_path.write_text(
        yaml_path.read_text().replace("keyword_fields: [name, summary]", "keyword_fields: [name]")
    )
    edited = _reopen(settings, yaml_path, embedder)
    try:
        report = edited.ingest_file(catalog)
        # THEN each record's BM25 vector is written anew (nothing re-embedded), and the
        # keyword index no longer finds a summary word
        assert report.stats.unchanged == 0 and report.stats.updated_payload == 24
        assert report.stats.embedded_texts == 0
        assert edited.deps.keyword.search(edited.schema, "millisecond", 5) == []
        assert [h.id for h in edited.deps.keyword.search(edited.schema, "axios", 5)] == ["axios"]
    finally:
        edited.close()


def test_an_added_aspect_names_the_rebuild_with_the_yaml_path(own, embedder) -> None:
    # GIVEN an index built before an aspect was added to the YAML
    service, yaml_path, catalog, settings = own
    service.close()
    grown = yaml_path.with_name("pkgs-grown.yaml")
    grown.write_text(
        yaml_path.read_text().replace(
            "    fields: [name, summary]\n",
            "    fields: [name, summary]\n  - name: title\n    fields: [name]\n",
        )
    )
    advice = f"agentic-search ingest FILE --rebuild --domain {grown.resolve()}"
    # WHEN it is searched, and when the file is ingested, with the grown YAML
    searching = _reopen(settings, grown, embedder)
    try:
        with pytest.raises(SearchFailed) as searched:  # the walk's failure, the store's reason
            searching.search("parse yaml files")
    finally:
        searching.close()
    ingesting = _reopen(settings, grown, embedder)
    try:
        with pytest.raises(VectorStoreError) as ingested:
            ingesting.ingest_file(catalog)
    finally:
        ingesting.close()
    # THEN both say which vector is missing and name the rebuild with the YAML's path
    for exc in (searched.value, ingested.value):
        assert "missing named vector 'title'" in str(exc)
        assert advice in str(exc)
    # AND that rebuild works
    rebuilt = _reopen(settings, grown, embedder)
    try:
        report, _ = rebuilt.rebuild(catalog.resolve())
        assert report.valid == 24
        assert rebuilt.search("parse yaml files", rounds=1).output.candidates
    finally:
        rebuilt.close()


def test_entities_added_to_the_yaml_of_an_unchanged_catalog_get_their_graph(own, embedder):
    # GIVEN the catalog ingested under the minimal YAML (no entities: no `_entity` payloads)
    from agentic_search.wire import ENTITY_KEY

    service, yaml_path, catalog, settings = own
    rows = list(service.deps.store.scroll(service.schema, payload=["id", ENTITY_KEY]))
    assert rows and not any(ENTITY_KEY in r for r in rows)
    service.close()
    # WHEN an `entities:` block is added and the same, unchanged catalog ingested again
    yaml_path.write_text(yaml_path.read_text() + "entities: {names: [name]}\n")
    named = _reopen(settings, yaml_path, embedder)
    try:
        report = named.ingest_file(catalog)
        # THEN no record is written, yet every record carries its entity names
        assert not report.stats.changed
        rows = list(named.deps.store.scroll(named.schema, payload=["id", ENTITY_KEY]))
        assert rows and all(ENTITY_KEY in r for r in rows)
        # AND a reference is read by name ("alternative to chalk" names the record chalk)
        resp = named.search("alternative to chalk", rounds=1)
        assert resp.intent.primary_goal == "alternative-to"
        assert resp.intent.reference_tool == "chalk"
    finally:
        named.close()
