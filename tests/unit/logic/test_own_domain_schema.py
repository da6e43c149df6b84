"""A user's domain YAML as a new user writes it: ``version: 1`` (a YAML number), integer
fields, and the registry that finds a domain by name once it was ingested (pure: files only)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.own_domain import YAML

from agentic_search.logic.schema import (
    DOMAINS_FOLDER,
    RecordError,
    SchemaError,
    domain_argument,
    load_domain,
    load_schema,
    register_domain,
    registered_domains,
)
from agentic_search.sync.files import read_catalog


@pytest.fixture()
def yaml_path(tmp_path: Path) -> Path:
    path = tmp_path / "mine" / "pkgs.yaml"
    path.parent.mkdir()
    path.write_text(YAML)
    return path


def test_a_numeric_version_is_accepted_as_its_text(yaml_path: Path) -> None:
    assert load_schema(yaml_path).version == "1"
    yaml_path.write_text(YAML.replace("version: 1", "version: 2.5"))
    assert load_schema(yaml_path).version == "2.5"


def test_an_integer_field_keeps_whole_numbers_and_refuses_fractions(
    yaml_path: Path, tmp_path: Path
) -> None:
    schema = load_schema(yaml_path)
    base = {"id": "x", "name": "x", "summary": "s"}
    rec = schema.validate_record({**base, "released": 2026.0, "downloads": "12"})
    assert rec["released"] == 2026 and type(rec["released"]) is int
    assert type(rec["downloads"]) is int
    with pytest.raises(RecordError, match="released"):
        schema.validate_record({**base, "released": 2026.5})
    csv = tmp_path / "c.csv"
    csv.write_text("id,name,summary,downloads,released\nx,x,s,12,2026\n")
    (row,) = read_catalog(csv, schema).records
    assert type(row["released"]) is int and row["released"] == 2026


def test_an_integer_field_allows_the_number_operators_only(yaml_path: Path) -> None:
    text = YAML.replace("downloads: {type: integer}", "downloads: {type: integer, maximum: 5}")
    yaml_path.write_text(text.replace("filter: [gte, lt, lte, gt]", "filter: [contains]"))
    with pytest.raises(SchemaError, match=r"released.*allows \['contains'\]"):
        load_schema(yaml_path)


def test_ingest_registration_makes_the_name_find_the_yaml(yaml_path: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    schema = load_schema(yaml_path)
    # before: the name is unknown, and the message says how a domain is registered
    with pytest.raises(SchemaError, match="ingest FILE --domain"):
        load_domain("pkgs", home)
    assert list(registered_domains(home)) == ["documents", "tools"]
    # registering copies the YAML into <home>/domains under the schema's name
    dest = register_domain(home, schema)
    assert dest == home / DOMAINS_FOLDER / "pkgs.yaml"
    assert dest.read_text() == YAML
    assert registered_domains(home) == {"documents": None, "tools": None, "pkgs": dest}
    found = load_domain("pkgs", home)
    assert found.fingerprint == schema.fingerprint
    # a registered domain is named again by its name, one read elsewhere by its path
    assert domain_argument(found) == "pkgs"
    assert domain_argument(schema) == str(yaml_path.resolve())
    assert domain_argument(load_schema("tools")) == "tools"


def test_a_built_in_name_is_never_registered_nor_served_from_a_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    own_tools = tmp_path / "tools.yaml"
    own_tools.write_text(YAML.replace("name: pkgs", "name: tools"))
    assert register_domain(home, load_schema(own_tools)) is None
    assert not (home / DOMAINS_FOLDER).exists()
    with pytest.raises(SchemaError, match="built-in"):
        registered_domains(home, [own_tools])


def test_a_served_file_replaces_the_registered_copy_of_its_name(
    yaml_path: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    register_domain(home, load_schema(yaml_path))
    newer = tmp_path / "newer.yaml"
    newer.write_text(YAML.replace("version: 1", "version: 2"))
    assert registered_domains(home, [newer])["pkgs"] == newer
    assert load_domain("pkgs", home, [newer]).version == "2"
