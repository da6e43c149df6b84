"""``agentic-search init-domain``: a domain drafted from a catalog's records loads as a schema
and reads the catalog's roles (id, title, text, low-cardinality, numbers, time) from the data
alone; ``ingest`` of a catalog of other fields with no ``--domain`` points to it."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml

from agentic_search.logic.schema import DomainSchema, load_schema
from agentic_search.sync.files import bundled_catalog_path, read_catalog
from agentic_search_cli.draft_domain import DraftError, draft_domain, read_sample
from agentic_search_cli.main import main


def _schema(text: str) -> DomainSchema:
    return DomainSchema.model_validate(yaml.safe_load(text))


def test_the_bundled_catalog_drafts_a_schema_with_its_roles() -> None:
    records, whole = read_sample(bundled_catalog_path())
    draft = draft_domain(records, "tools-draft", whole, "tools.jsonl")
    schema = _schema(draft.yaml)
    # THEN the id and title are the catalog's, its long text is embedded in one whole-record
    # aspect, which every plan searches
    assert (schema.id_field, schema.title_field, schema.text_field) == ("id", "name", "description")
    assert schema.record_aspect == "record"
    record = schema.aspect("record").fields
    assert record[:2] == ["name", "description"]
    assert {"features", "use_cases", "category", "functionality"} <= set(record)
    # AND a facet of few values (platforms: 6) is a filter, not embedded text
    assert "platforms" not in record and schema.fields["platforms"].filter == ["in", "nin"]
    # AND low-cardinality fields are vocabularies with the values the records hold
    tools = load_schema("tools")
    assert set(schema.vocabularies["category"]) == set(tools.vocabularies["categories"])
    assert schema.vocabulary_fields["pricing_model"] == "pricing_model"
    assert schema.vocabularies["pricing_model"]["Open Source"] == ["open source", "open-source"]
    # AND numbers are bounds, the year is the record's time, nullability is as seen
    assert schema.fields["price_monthly_usd"].type == "number"
    assert schema.fields["price_monthly_usd"].nullable
    assert "lt" in schema.fields["price_monthly_usd"].filter
    assert schema.temporal is not None and schema.temporal.field == "released"
    assert schema.fields["released"].type == "integer"
    assert schema.fields["description"].required
    assert schema.constraint_fields.price == "price_monthly_usd"
    assert schema.constraint_fields.open_source == "open_source"
    assert schema.entities is not None and schema.entities.aliases == "aliases"
    # AND the text fields are read for other records' names (mention edges, add-ons)
    assert schema.entities.link_fields == ["description", "use_cases", "features"]
    # AND every record of the catalog is valid against the draft, unedited
    read = read_catalog(bundled_catalog_path(), schema)
    assert not read.errors and len(read.records) == len(records) == 284
    # AND what it guessed and what to check are said
    assert any("title field: name" in g for g in draft.guessed)
    assert any("time field: released" in g for g in draft.guessed)
    assert draft.check


def test_a_sample_offers_values_without_constraining_the_field() -> None:
    records, whole = read_sample(bundled_catalog_path(), limit=50)
    assert not whole and len(records) == 50
    schema = _schema(draft_domain(records, "tools-sample", whole).yaml)
    # a value the first 50 records never hold must not make a later record invalid
    assert schema.fields["category"].vocabulary is None
    assert "category" in schema.vocabularies
    assert not read_catalog(bundled_catalog_path(), schema).errors


def test_a_csv_without_tags_gets_phrases_offered_commented_out(tmp_path: Path) -> None:
    path = tmp_path / "Lamp Shop.csv"
    topics = ["floor lamp with a marble base", "desk lamp with a clamp", "floor lamp for reading"]
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["sku", "title", "about", "price", "year", "rating", "tags"])
        for i in range(30):
            about = f"A {topics[i % 3]} and a dimmer switch, model {i} in warm brass or black"
            w.writerow([f"L{i:03d}", f"Lamp {i}", about, 20 + i, 2000 + i % 20, 4.5, f"t{i};u{i}"])
    assert main(["init-domain", str(path), "--out", str(tmp_path / "lamps.yaml")]) == 0
    text = (tmp_path / "lamps.yaml").read_text()
    schema = _schema(text)
    assert schema.name == "lamp-shop" and schema.id_field == "sku"
    assert schema.title_field == "title" and schema.text_field == "about"
    assert not schema.vocabularies  # never required
    assert "#     floor lamp: [floor lamp]" in text  # offered from the text, commented
    assert [(s.field, s.order) for s in schema.structured_sort] == [("rating", "desc")]
    assert schema.fields["tags"].type == "list" and schema.fields["price"].type == "integer"
    assert schema.temporal is not None and schema.temporal.field == "year"
    assert schema.constraint_fields.price == "price"
    # AND the CSV ingests against it
    read = read_catalog(path, schema)
    assert not read.errors and len(read.records) == 30
    assert read.records[0]["tags"] == ["t0", "u0"]
    # AND the draft is not overwritten unless asked
    with pytest.raises(SystemExit) as exc:
        main(["init-domain", str(path), "--out", str(tmp_path / "lamps.yaml")])
    assert exc.value.code == 2


def test_no_id_field_is_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_text("".join(json.dumps({"text": "same words"}) + "\n" for _ in range(3)))
    with pytest.raises(DraftError, match="no field looks like an id"):
        draft_domain(read_sample(path)[0], "notes")
    assert main(["init-domain", str(path), "--out", str(tmp_path / "n.yaml")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no field looks like an id" in err
    assert not (tmp_path / "n.yaml").exists()


def test_ingest_of_other_fields_without_a_domain_points_to_init_domain(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = tmp_path / "lamps.jsonl"
    path.write_text(json.dumps({"sku": "a", "title": "Arc", "about": "a lamp"}) + "\n")
    with pytest.raises(SystemExit) as exc:
        main(["ingest", str(path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "agentic-search init-domain" in err and "--domain lamps.yaml" in err
    assert "sku" in err
