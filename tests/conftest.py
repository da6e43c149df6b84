"""Shared fixtures of every tier: the schema and the bundled catalog (pure), and the real
embedded things (Qdrant Edge by default, MiniLM ONNX) for the tiers that may use them.

Tiers (by folder, each marked so ``-m`` selects it): ``unit`` (pure: no model, no index, no
AWS; its conftest refuses the fixtures below that load them), ``component`` (real embedded
stores and model), ``aws`` (moto, the ASL interpreter, the template, the events), ``e2e`` (the
CLI, serve, the golden set, eval, bench, load, fuzzing, faults).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.aws import REGION, create_idempotency_table, create_status_table
from support.budgets import UNBOUNDED_ENV
from support.fakes import CountingEmbedder
from support.tmp_retention import (  # noqa: F401 - registered here, for every tier
    pytest_runtest_makereport,
    session_folders_removed,
)

from agentic_search.config import Settings
from agentic_search.logic.intent import CatalogLookup
from agentic_search.logic.schema import DomainSchema, load_schema
from agentic_search.logic.text import default_analyzer
from agentic_search.sync.files import bundled_catalog_path, read_catalog

# Tests search without the result cache unless a test opts in: a fault-injection test must not
# be answered from a cache filled by an earlier healthy search of the same query.
os.environ.setdefault("CACHE_BACKEND", "none")
# Rounds must not stop for a latency budget, nor a source for its deadline, on a loaded machine:
# what a test checks must not depend on how busy the host is (a test of the budget or of a
# deadline sets a small one itself). Set, not defaulted: a value exported in the shell (a
# benchmark's ROUND_BUDGET_MS=2000) must not reach the tests either.
os.environ.update(UNBOUNDED_ENV)

TIERS = ("unit", "component", "aws", "e2e", "llm_server")
#: Terminal size variables a pytest-xdist worker finds set (COLUMNS=80, LINES=24) though the
#: command that started pytest had neither: the CLI would then wrap the piped reports of the
#: subprocesses the tests run at 80 columns. A worker takes the controller's values instead.
TERMINAL_SIZE = ("COLUMNS", "LINES")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """(pytest-xdist, controller) Hand each worker the terminal size variables of this run."""
    node.workerinput["terminal_size"] = {k: os.environ.get(k) for k in TERMINAL_SIZE}


def pytest_configure(config: pytest.Config) -> None:
    """In a pytest-xdist worker, the environment's terminal size is the controller's."""
    given = getattr(config, "workerinput", {}).get("terminal_size")
    for name, value in (given or {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test with its tier (the first folder under tests/)."""
    root = Path(__file__).parent
    for item in items:
        parts = Path(item.fspath).resolve().relative_to(root).parts
        if parts and parts[0] in TIERS:
            item.add_marker(getattr(pytest.mark, parts[0]))


@pytest.fixture(scope="session", autouse=True)
def user_data_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The per-user data folder, the working folder's default (platformdirs reads
    ``XDG_DATA_HOME`` on Linux), in the session's temp folder: a test or a command it runs
    that leaves ``AGENTIC_SEARCH_HOME`` unset never reads or writes the user's own index."""
    path = tmp_path_factory.mktemp("user-data")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_DATA_HOME", str(path))
        yield path


# ----- pure ---------------------------------------------------------------------------------------


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
def catalog_lookup(tools_schema: DomainSchema, catalog_records: list[dict]) -> CatalogLookup:
    """A CatalogLookup over the bundled catalog without any store (for intent tests): the
    query linker over its names and aliases, "known" words those of the catalog's texts."""
    analyzer = default_analyzer()
    vocabulary = {
        t for r in catalog_records for t in analyzer.terms(" ".join(map(str, r.values())))
    }
    return CatalogLookup.of(
        tools_schema,
        catalog_records,
        known=lambda terms: {t for t in terms if t in vocabulary},
        analyzer=analyzer,
    )


# ----- the real embedded things (component, aws, e2e) ---------------------------------------------


@pytest.fixture(scope="session")
def session_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working folder for the session's embedded stores and model cache."""
    return tmp_path_factory.mktemp("agentic-search-home")


@pytest.fixture(scope="session")
def embedder(session_home: Path):
    """The real local MiniLM int8 embedder (loaded once per session)."""
    from agentic_search.adapters.embedders import LocalMiniLMEmbedder

    return LocalMiniLMEmbedder(cache_dir=session_home / "models", max_length=256)


def make_settings(home: Path, **overrides) -> Settings:
    """Settings pointing every embedded store at ``home``."""
    return Settings(agentic_search_home=home, **overrides)


@pytest.fixture(scope="session")
def tools_engine(session_home: Path, embedder):
    """A SearchService over the bundled catalog in the default store (ingested once)."""
    from agentic_search.service import SearchService

    engine = SearchService.create(make_settings(session_home / "tools"), "tools", embedder=embedder)
    report = engine.ensure_bundled_catalog()
    assert report is not None and not report.errors
    yield engine
    engine.close()


@pytest.fixture()
def counting(embedder) -> CountingEmbedder:
    """The session's real MiniLM embedder, counted."""
    return CountingEmbedder(embedder)


@pytest.fixture()
def sync_engine(tmp_path: Path, counting: CountingEmbedder, catalog_records):
    """A service over a fresh local store holding 4 bundled records, cache in SQLite."""
    from agentic_search.service import SearchService

    settings = Settings(agentic_search_home=tmp_path / "home", cache_backend="sqlite")
    engine = SearchService.create(settings, "tools", embedder=counting)
    engine.ingest_records(catalog_records[:4])
    counting.texts = counting.calls = 0
    yield engine
    engine.close()


@pytest.fixture()
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """moto for every AWS call, with fake credentials."""
    from moto import mock_aws
    from support.aws import fake_credentials

    fake_credentials(monkeypatch)
    with mock_aws():
        yield


@pytest.fixture()
def wired(aws, sync_engine, monkeypatch: pytest.MonkeyPatch):
    """The Lambda sync glue over ``sync_engine``: the container runtime with a moto status
    table and idempotency table; yields ``(glue module, status store)``."""
    import boto3
    from support.lambdas import runtime_over, use_runtime

    from agentic_search.adapters.sync_status import DynamoDBSyncStatus
    from agentic_search_lambda import sync as glue
    from agentic_search_lambda.settings import LambdaSettings

    ddb = boto3.client("dynamodb", region_name=REGION)
    status = DynamoDBSyncStatus(create_status_table(ddb), client=ddb)
    settings = LambdaSettings(idempotency_table=create_idempotency_table(ddb))
    rt = runtime_over(sync_engine, lambda_settings=settings, sync_status=status)
    with use_runtime(rt):
        yield glue, status
