"""'alternative to X' on a package-like catalog, end to end on the real embedded store and
model: the records named after X (its add-ons) are never returned, and the walk of the records
that name X keeps those that name it as what they replace, not as what they plug into."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentic_search.config import Settings
from agentic_search.logic.schema import load_schema
from agentic_search.pipeline.graph import plugged_into, walk
from agentic_search.ports import KeywordIndexError
from agentic_search.service import SearchService
from agentic_search.wire import GraphSource

#: The npm benchmark's domain: one aspect over name and summary, records named by name
SCHEMA = Path(__file__).resolve().parents[3] / "benchmarks" / "npm_queries" / "npm-entities.yaml"

RECORDS = [
    ("webpack", "A bundler for JavaScript modules and their assets."),
    ("webpack-cli", "The command line interface of Webpack."),
    ("webpack-dev-server", "Serves a Webpack app with live reloading."),
    ("yaml-loader", "A Webpack loader for YAML files."),
    ("css-loader", "Resolves CSS imports for Webpack."),
    ("vite", "A fast build tool and dev server, a faster alternative to Webpack."),
    ("rollup", "A module bundler for JavaScript libraries."),
    ("esbuild", "An extremely fast JavaScript bundler and minifier."),
    ("lodash", "Utility functions for arrays, objects and strings."),
    ("chalk", "Terminal string styling."),
]


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory, embedder) -> Iterator[SearchService]:
    root = tmp_path_factory.mktemp("packages")
    engine = SearchService.create(
        Settings(agentic_search_home=root / "home", cache_backend="none"),
        load_schema(SCHEMA),
        embedder=embedder,
    )
    engine.ingest_records([{"id": n, "name": n, "summary": s} for n, s in RECORDS])
    yield engine
    engine.close()


def walked(engine: SearchService, mention_context: str) -> list[str]:
    source = GraphSource(
        seeds=["webpack"],
        placement="fused",
        kinds=["mention", "similar"],
        direction="in",
        reference="webpack",
        aspect="about",
        exclude=["webpack"],
        mention_context=mention_context,  # type: ignore[arg-type]
    )
    return [h.id for h in walk(engine.deps, source)]


def test_the_walk_keeps_what_names_x_as_what_it_replaces(packages: SearchService):
    # GIVEN records that name webpack as what they plug into and one that replaces it
    everything = walked(packages, "any")
    assert {"yaml-loader", "css-loader", "vite"} <= set(everything)
    # WHEN the walk asks for alternatives THEN the add-ons are left out, the alternative kept
    alternatives = walked(packages, "alternative")
    assert "vite" in alternatives
    assert not {"yaml-loader", "css-loader", "webpack-cli"} & set(alternatives)


def test_the_walk_never_returns_what_the_plan_excludes(packages: SearchService):
    source = GraphSource(
        seeds=["webpack"], placement="fused", direction="in", aspect="about", exclude=["webpack"]
    )
    assert "vite" in [h.id for h in walk(packages.deps, source)]
    assert "vite" not in [h.id for h in walk(packages.deps, source, exclude=["vite"])]


def test_an_alternative_is_neither_x_nor_one_of_its_addons(packages: SearchService):
    response = packages.search("alternative to webpack", limit=10, rounds=1)
    assert response.intent is not None
    assert response.intent.primary_goal == "alternative-to"
    # named after webpack first (shortest name first), then what names it as what it plugs into
    addons = response.intent.reference_addons
    assert addons[:2] == ["webpack-cli", "webpack-dev-server"]
    assert sorted(addons[2:]) == ["css-loader", "yaml-loader"]
    ids = [c.id for c in response.output.candidates]
    assert ids, "the alternatives are found"
    assert not {"webpack", *addons} & set(ids)
    assert ids[0] == "vite"


def test_a_damaged_keyword_index_still_reads_the_addons_from_the_graph(
    packages: SearchService, monkeypatch: pytest.MonkeyPatch
):
    # GIVEN the keyword index cannot be read (the BM25 source reports it as its error)
    def damaged(*_args, **_kwargs):
        raise KeywordIndexError("keyword index damaged: rebuild it")

    monkeypatch.setattr(packages.deps.keyword, "search", damaged)
    # WHEN an alternative is asked THEN the add-ons the mention edges name are still excluded
    # ("The command line interface of Webpack" names it, but not as what it plugs into)
    assert sorted(plugged_into(packages.deps, "webpack", "webpack", top_k=50)) == [
        "css-loader",
        "webpack-dev-server",
        "yaml-loader",
    ]
    response = packages.search("alternative to webpack", limit=10, rounds=1)
    ids = [c.id for c in response.output.candidates]
    assert ids and not {"webpack", "yaml-loader", "css-loader"} & set(ids)
    assert [e.error for e in response.output.errors] == ["KeywordIndexError"]
