"""The site's reference pages are rendered from their one source each (scripts/docs_hooks.py).

GIVEN the CLI's parser, the OpenAPI document and the settings models WHEN the pages are
rendered THEN the CLI page holds every subcommand's own --help, the HTTP page every route and
schema of the document, and the configuration page every field as its environment variable with
its default and description, and every knob of a domain's tuning (a new option, route, setting
or knob reaches the docs with no edit).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os

import pytest
from support.paths import REPO

from agentic_search.config import Settings
from agentic_search_cli.main import build_parser
from agentic_search_lambda.settings import LambdaSettings


@pytest.fixture(scope="module")
def hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", REPO / "scripts" / "docs_hooks.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cli_page_is_every_commands_own_help(hooks):
    columns = os.environ.get("COLUMNS")
    page = hooks.cli_page()
    assert os.environ.get("COLUMNS") == columns  # the width is the page's, not the process's
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    with hooks.help_width():
        assert parser.format_help().rstrip() in page
        for name, command in sub.choices.items():
            assert f"## agentic-search {name}\n" in page
            assert command.format_help().rstrip() in page


def test_the_http_page_names_every_route_and_schema(hooks):
    document = hooks.openapi_json()
    doc = json.loads(document)
    page = hooks.http_api_page(document)
    for path, operations in doc["paths"].items():
        for method in operations:
            assert f"### {method.upper()} `{path}`" in page
    for name in doc["components"]["schemas"]:
        assert f"### {name} {{ #{hooks._anchor(name)} }}" in page
    assert "| `limit` | integer | no | ≥ 1, ≤ 100, default `10` |" in page


@pytest.mark.parametrize("model", [Settings, LambdaSettings], ids=lambda m: m.__name__)
def test_the_configuration_page_has_every_setting_with_its_description(hooks, model):
    page = hooks.configuration_page()
    for name, field in model.model_fields.items():
        assert field.description, f"{name} has no description for the reference page"
        row = next(line for line in page.splitlines() if line.startswith(f"| `{name.upper()}` |"))
        assert hooks._cell(field.description) in row
    assert "| `ROUND_BUDGET_MS` | float (> 0) | `2000.0` |" in page


def test_the_configuration_page_has_every_knob_of_a_domains_tuning(hooks):
    from agentic_search.logic.tuning import Tuning

    page = hooks.configuration_page()
    assert "{ #domain-tuning }" in page  # (the anchor docs/guides/own-domain.md links to)
    for group, field in Tuning.model_fields.items():
        assert f"### `tuning.{group}`" in page
        for name, knob in field.default_factory.model_fields.items():
            row = next(line for line in page.splitlines() if line.startswith(f"| `{name}` |"))
            assert hooks._cell(knob.description) in row, f"{group}.{name}"
    assert "| `term_weight` | float (> 0.0, ≤ 100.0) | `1.0` |" in page


def test_links_to_repository_files_are_sent_where_the_site_has_them(hooks):
    # GIVEN a page under docs/guides linking to ARCHITECTURE.md, a benchmarks file and a file
    # that does not exist, each by its relative path (right on GitHub)
    page = (
        "[walks](../../ARCHITECTURE.md#three-walks) [sync](../../benchmarks/sync/README.md) "
        "[gone](../../no-such-file.md) [web](https://example.org/x) [here](#a)"
    )
    docs = REPO / "docs"
    # WHEN the site renders it without a repository URL, and with one
    local = hooks.repository_links(page, "guides/x.md", docs, None)
    hosted = hooks.repository_links(page, "guides/x.md", docs, "https://github.com/o/r")
    # THEN ARCHITECTURE.md goes to its page, the file is named (or linked on the host), and the
    # missing file and the other links are left for the build's link check
    assert "[walks](../explanation/architecture.md#three-walks)" in local
    assert "sync (`benchmarks/sync/README.md`)" in local
    assert "[sync](https://github.com/o/r/blob/main/benchmarks/sync/README.md)" in hosted
    for kept in ("[gone](../../no-such-file.md)", "[web](https://example.org/x)", "[here](#a)"):
        assert kept in local and kept in hosted
