"""What an "alternative to X" leaves out (pure): the records named after X, and the records
whose text names X as what they plug into rather than what they replace."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_search.logic.entities import fold, named_after
from agentic_search.logic.graph_edges import names_as_addon, names_as_alternative
from agentic_search.logic.intent import CatalogLookup, with_addons
from agentic_search.logic.intent_rules import RuleBasedIntentExtractor
from agentic_search.logic.planner import excluded_ids
from agentic_search.logic.schema import load_schema

ROOT = Path(__file__).resolve().parents[3]
NPM = load_schema(ROOT / "benchmarks" / "npm_queries" / "npm-entities.yaml")
NAMES = ["webpack", "webpack-cli", "@storybook/builder-webpack", "webpackbar", "vite", "jest"]


@pytest.mark.parametrize(
    ("text", "alternative"),
    [
        ("A fast build tool, a faster alternative to Webpack.", True),
        ("Drop-in replacement for webpack with a Rust core", True),
        ("Started as a fork of Webpack", True),
        ("Search suite forked from Webpack and its dashboards", True),
        ("Webpack-compatible bundler", True),
        ("A webpack-like bundler", True),
        ("Imitates the webpack dev server", True),
        ("Lighter than webpack and twice as fast", True),
        ("A webpack loader for YAML files", False),
        ("Resolves CSS imports for Webpack.", False),
        ("Runs webpack in watch mode", False),
        ("A bundler for JavaScript modules", False),  # no mention at all
    ],
)
def test_a_text_names_x_as_what_it_replaces_or_as_what_it_plugs_into(text: str, alternative):
    assert names_as_alternative(text, ["webpack"]) is alternative


@pytest.mark.parametrize(
    ("text", "addon"),
    [
        ("A file loader module for webpack", True),
        ("A Webpack loader for YAML files", True),
        ("Free, open-source VS Code extension that brings completions", True),
        ("Runs webpack builds faster, built on webpack", True),
        ("A faster alternative to webpack, with a webpack plugin for migrations", False),
        ("Supermaven was acquired by Anysphere, the maker of Cursor", False),  # a relation
        ("A bundler for JavaScript modules", False),  # no mention at all
    ],
)
def test_a_text_names_x_as_what_it_plugs_into(text: str, addon: bool):
    names = ["webpack", "vs code", "cursor"]
    assert names_as_addon(text, names) is addon


def test_a_name_of_several_words_is_matched_whole():
    assert names_as_alternative("an open alternative to GitHub Copilot", ["github copilot"])
    assert not names_as_alternative("an alternative to GitHub Actions", ["github copilot"])


def test_named_after_is_whole_words():
    assert named_after([fold("webpack-cli")], ["webpack"])
    assert named_after([fold("Amazon DynamoDB Streams")], ["amazon dynamodb"])
    assert not named_after([fold("webpackbar")], ["webpack"])
    assert not named_after(["webpack"], [""])


def test_the_derivatives_of_the_reference_are_excluded_from_the_plan():
    lookup = CatalogLookup.of(NPM, [{"id": n, "name": n} for n in NAMES])
    intent = RuleBasedIntentExtractor(NPM, lookup).extract("alternative to webpack")
    assert (intent.primary_goal, intent.reference_tool) == ("alternative-to", "webpack")
    intent = with_addons(intent, lookup, 100)
    # shortest names first; "webpackbar" is a word of its own, not named after webpack
    assert intent.reference_addons == ["webpack-cli", "@storybook/builder-webpack"]
    assert excluded_ids(intent) == ["webpack", "webpack-cli", "@storybook/builder-webpack"]
    assert with_addons(intent, lookup, 1).reference_addons == ["webpack-cli"]


def test_no_derivatives_without_an_alternative_reading():
    lookup = CatalogLookup.of(NPM, [{"id": n, "name": n} for n in NAMES])
    intent = RuleBasedIntentExtractor(NPM, lookup).extract("webpack plugins for css")
    assert with_addons(intent, lookup, 100).reference_addons == []
