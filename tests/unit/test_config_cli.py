"""``agentic-search config``: a domain's effective tuning, what its YAML overrides marked.

GIVEN a domain YAML with a partial ``tuning:`` block WHEN ``config --domain FILE`` runs THEN it
prints every knob as a YAML ``tuning:`` block (valid YAML, the same values a load gives), the
keys the domain sets marked with their default; ``--json`` gives the same as data with the
overrides; a built-in domain prints the defaults with none marked; an unknown domain or an
invalid block is a usage error (exit 2) in one line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agentic_search.logic.schema import load_schema
from agentic_search.logic.tuning import Tuning
from agentic_search_cli.main import build_parser, main

DOMAIN = """\
name: recipes
version: "1.0.0"
id_field: id
title_field: title
text_field: text
fields:
  id: {type: string, required: true}
  title: {type: string}
  text: {type: string, required: true}
aspects:
  - name: content
    fields: [title, text]
keyword_fields: [title, text]
"""
BLOCK = (
    "tuning:\n  coverage: {term_weight: 2}\n  executor: {max_docs: 12, feedback_vector: embed}\n"
)


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTIC_SEARCH_HOME", str(tmp_path / "home"))


def _domain(tmp_path: Path, block: str = BLOCK) -> Path:
    path = tmp_path / "recipes.yaml"
    path.write_text(DOMAIN + block, encoding="utf-8")
    return path


def test_the_yaml_is_the_effective_tuning_with_the_overrides_marked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _domain(tmp_path)
    assert main(["config", "--domain", str(path)]) == 0
    out = capsys.readouterr().out
    # valid YAML: every knob, at the values the domain searches with
    parsed = yaml.safe_load(out)
    assert Tuning.model_validate(parsed["tuning"]) == load_schema(path).tuning
    assert parsed["tuning"]["executor"]["max_docs"] == 12
    assert parsed["tuning"]["graph"] == Tuning().graph.model_dump(mode="json")
    marked = [line.strip() for line in out.splitlines() if "# set by the domain" in line]
    assert marked == [
        "term_weight: 2.0  # set by the domain (default 1.0)",
        "max_docs: 12  # set by the domain (default 8)",
        "feedback_vector: embed  # set by the domain (default none)",
    ]
    assert "'recipes'" in out.splitlines()[0] and "3 key(s)" in out.splitlines()[0]


def test_json_gives_the_tuning_and_the_overrides(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    path = _domain(tmp_path)
    assert main(["config", "--domain", str(path), "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert (body["domain"], body["source"]) == ("recipes", str(path))
    assert body["overrides"] == {
        "coverage": {"term_weight": 2.0},
        "executor": {"max_docs": 12, "feedback_vector": "embed"},
    }
    assert body["tuning"] == load_schema(path).tuning.model_dump(mode="json")


def test_a_built_in_domain_is_on_the_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config"]) == 0  # the tools domain
    out = capsys.readouterr().out
    assert "none overridden" in out.splitlines()[0] and "# set by the domain" not in out
    assert Tuning.model_validate(yaml.safe_load(out)["tuning"]) == Tuning()


def test_a_registered_name_is_found_in_the_home(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home" / "domains"
    home.mkdir(parents=True)
    (home / "recipes.yaml").write_text(DOMAIN + BLOCK, encoding="utf-8")
    assert main(["config", "--domain", "recipes", "--json"]) == 0
    assert '"max_docs": 12' in capsys.readouterr().out


@pytest.mark.parametrize(
    ("domain", "says"),
    [
        ("nope", "unknown domain 'nope'"),
        ("BAD", "tuning.coverage.term_weightt: Extra inputs are not permitted"),
    ],
)
def test_an_unknown_domain_or_an_invalid_block_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], domain: str, says: str
) -> None:
    if domain == "BAD":
        domain = str(_domain(tmp_path, "tuning:\n  coverage: {term_weightt: 2}\n"))
    with pytest.raises(SystemExit) as exc:
        main(["config", "--domain", domain])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and says in err, err


def test_the_help_teaches_the_block() -> None:
    (sub,) = [a for a in build_parser()._actions if hasattr(a, "choices") and a.choices]
    text = sub.choices["config"].format_help()
    for taught in ("tuning:", "coverage", "executor", "--json", "exit codes", "fingerprint"):
        assert taught in text, taught
