"""The rule-based extractor reads the fields its constraint phrases set from the domain YAML
(``constraint_fields``), and the schema rejects declarations that could not work."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agentic_search.logic.intent import CatalogLookup
from agentic_search.logic.intent_rules import RuleBasedIntentExtractor
from agentic_search.logic.schema import DomainSchema, SchemaError, load_schema

TOOLS_YAML = Path(__file__).resolve().parents[3] / "layers/core/agentic_search/domains/tools.yaml"


def _schema(tmp_path: Path, text: str) -> DomainSchema:
    path = tmp_path / "domain.yaml"
    path.write_text(text)
    return load_schema(path)


def _triples(schema: DomainSchema, query: str) -> set[tuple[str, str, str]]:
    intent = RuleBasedIntentExtractor(schema, CatalogLookup.empty()).extract(query)
    return {(f.field, f.operator, repr(f.value)) for f in intent.constraints}


def test_bundled_schema_declares_the_constraint_fields(tools_schema: DomainSchema) -> None:
    roles = tools_schema.constraint_fields
    assert roles.price == "price_monthly_usd"
    assert roles.pricing == "pricing_model" and roles.paid_values == ["Paid"]
    assert roles.deployment == "deployment"


def test_renamed_fields_are_read_from_the_yaml(tmp_path: Path) -> None:
    data = yaml.safe_load(TOOLS_YAML.read_text())
    renames = {
        "price_monthly_usd": "monthly_price",
        "pricing_model": "plan",
        "open_source": "oss_licence",
        "deployment": "runs_on",
    }
    data["fields"] = {renames.get(k, k): v for k, v in data["fields"].items()}
    data["vocabulary_fields"] = {k: renames.get(v, v) for k, v in data["vocabulary_fields"].items()}
    for key in ("candidate_metadata",):
        data[key] = {k: renames.get(v, v) for k, v in data[key].items()}
    data["keyword_fields"] = [renames.get(f, f) for f in data["keyword_fields"]]
    for aspect in data["aspects"]:
        aspect["fields"] = [renames.get(f, f) for f in aspect["fields"]]
    for key in ("fields", "sets"):
        data["comparison"][key] = [renames.get(f, f) for f in data["comparison"][key]]
    roles = data["constraint_fields"]
    for role in ("price", "pricing", "open_source", "deployment"):
        roles[role] = renames[roles[role]]
    schema = _schema(tmp_path, yaml.safe_dump(data))
    got = _triples(schema, "free self-hosted open source chat under $20")
    assert ("monthly_price", "lt", "20.0") in got
    assert ("plan", "in", repr(["Free", "Freemium", "Open Source"])) in got
    assert ("oss_licence", "eq", "True") in got
    assert ("runs_on", "in", repr(["Self-hosted"])) in got


def test_without_declarations_no_constraint_phrase_is_read(tmp_path: Path) -> None:
    data = yaml.safe_load(TOOLS_YAML.read_text())
    del data["constraint_fields"]
    schema = _schema(tmp_path, yaml.safe_dump(data))
    assert _triples(schema, "free self-hosted chat under $20") == set()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"price": "nope"}, "unknown field 'nope'"),
        ({"price": "name"}, "is a string"),
        ({"open_source": "released"}, "is a number"),
        ({"free_values": ["Gratis"]}, "'Gratis' is not in the vocabulary"),
        ({"pricing": None}, "values for pricing but no field"),
    ],
)
def test_bad_constraint_fields_are_rejected(tmp_path: Path, change: dict, message: str) -> None:
    data = yaml.safe_load(TOOLS_YAML.read_text())
    data["constraint_fields"].update(change)
    with pytest.raises(SchemaError, match=message):
        _schema(tmp_path, yaml.safe_dump(data))


def test_unknown_capability_vocabulary_is_rejected(tmp_path: Path) -> None:
    data = yaml.safe_load(TOOLS_YAML.read_text())
    data["capabilities"]["vocabularies"] = ["functionality", "skills"]
    with pytest.raises(SchemaError, match="unknown vocabulary 'skills'"):
        _schema(tmp_path, yaml.safe_dump(data))
