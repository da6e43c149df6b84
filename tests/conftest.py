"""Shared fixtures: real embedded stores (Qdrant local mode, bm25s, MiniLM ONNX), no mocks."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentic_search.adapters.embedders import LocalMiniLMEmbedder
from agentic_search.config import Settings
from agentic_search.domain.intent import CatalogLookup
from agentic_search.domain.schema import DomainSchema, load_schema
from agentic_search.engine import SearchEngine
from agentic_search.sync.files import bundled_catalog_path, read_catalog

REPO = Path(__file__).resolve().parents[1]

# Tests search without the result cache unless a test opts in: a fault-injection test must not
# be answered from a cache filled by an earlier healthy search of the same query.
os.environ.setdefault("CACHE_BACKEND", "none")


@pytest.fixture(scope="session")
def tools_schema() -> DomainSchema:
    """The bundled tools domain schema."""
    return load_schema("tools")


@pytest.fixture(scope="session")
def catalog_records(tools_schema: DomainSchema) -> list[dict]:
    """The bundled catalog, validated."""
    read = read_catalog(bundled_catalog_path(), tools_schema)
    assert not read.errors, read.errors[:3]
    return read.records


@pytest.fixture(scope="session")
def catalog_by_id(catalog_records: list[dict]) -> dict[str, dict]:
    """Bundled catalog records keyed by id."""
    return {r["id"]: r for r in catalog_records}


@pytest.fixture(scope="session")
def catalog_lookup(catalog_records: list[dict]) -> CatalogLookup:
    """A CatalogLookup over the bundled catalog without any store (for intent tests)."""
    by_id = {r["id"]: r for r in catalog_records}
    names = {r["name"].lower(): r["id"] for r in catalog_records}
    return CatalogLookup(names=names, record=by_id.get)


@pytest.fixture(scope="session")
def session_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working folder for the session's embedded stores and model cache."""
    return tmp_path_factory.mktemp("agentic-search-home")


@pytest.fixture(scope="session")
def embedder(session_home: Path) -> LocalMiniLMEmbedder:
    """The real local MiniLM int8 embedder (loaded once per session)."""
    return LocalMiniLMEmbedder(cache_dir=session_home / "models", max_length=256)


def make_settings(home: Path, **overrides) -> Settings:
    """Settings pointing every embedded store at ``home``."""
    return Settings(agentic_search_home=home, **overrides)


@pytest.fixture(scope="session")
def tools_engine(session_home: Path, embedder: LocalMiniLMEmbedder) -> Iterator[SearchEngine]:
    """A SearchEngine over the bundled catalog in Qdrant local mode (ingested once)."""
    engine = SearchEngine(make_settings(session_home / "tools"), "tools", embedder=embedder)
    report = engine.ensure_bundled_catalog()
    assert report is not None and not report.errors
    yield engine
    engine.close()
