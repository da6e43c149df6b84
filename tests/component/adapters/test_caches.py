"""The exact-match result cache: keys, TTL, the catalog version, and its three backends.

SqliteCache runs on a real file; DynamoDBCache on moto's DynamoDB with the table template.yaml
declares; the end-to-end cases use a small real engine (Qdrant local mode, the real embedder) on
a temporary home with ``CACHE_BACKEND=sqlite``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from cfnlint.decode import cfn_yaml
from moto import mock_aws
from support.paths import REPO

from agentic_search.adapters.caches import DynamoDBCache, NullCache, SqliteCache
from agentic_search.config import Settings
from agentic_search.logic.cache_keys import cache_key, normalize_query
from agentic_search.pipeline.cache import cache_check, cache_store
from agentic_search.pipeline.runner import LocalRunner
from agentic_search.ports import CacheError
from agentic_search.service import SearchService
from agentic_search.wire import CacheInfo, SearchRequest, SearchState
from agentic_search.wiring import build_cache

HEX64 = re.compile(r"^[0-9a-f]{64}$")
BASE = {
    "limit": 10,
    "rounds": None,
    "domain": "tools",
    "schema_fingerprint": "1",
    "catalog_version": 0,
}


class Clock:
    """A settable clock (epoch seconds)."""

    def __init__(self, now: float = 1_767_225_600.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


# ----- keys ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Free Code Editor", "free code editor"),  # case
        ("  free\tcode \n editor  ", "free code editor"),  # whitespace
        # NFKC: full-width letters and the ideographic space
        ("ｆｒｅｅ　ｃｏｄｅ　ｅｄｉｔｏｒ", "free code editor"),
        ("ﬁle converter", "file converter"),  # NFKC: the fi ligature
        ("STRASSE map", "straße map"),  # case folding, not just lowering
    ],
)
def test_queries_that_read_the_same_share_one_key(a, b):
    assert normalize_query(a) == normalize_query(b)
    assert cache_key(a, **BASE) == cache_key(b, **BASE)
    assert HEX64.match(cache_key(a, **BASE))


def test_every_input_the_response_depends_on_changes_the_key():
    variants = [
        BASE,
        {**BASE, "limit": 11},
        {**BASE, "rounds": 3},  # explicit rounds differ from the deployment default
        {**BASE, "domain": "documents"},
        {**BASE, "schema_fingerprint": "2"},
        {**BASE, "catalog_version": 1},
    ]
    keys = [cache_key("free code editor", **v) for v in variants]
    keys.append(cache_key("paid code editor", **BASE))  # one word apart: opposite filters
    assert len(set(keys)) == len(keys)


# ----- SqliteCache --------------------------------------------------------------------------------


@pytest.fixture()
def clock() -> Clock:
    return Clock()


@pytest.fixture()
def sqlite_cache(tmp_path: Path, clock: Clock) -> Iterator[SqliteCache]:
    cache = SqliteCache(tmp_path / "cache" / "cache.sqlite", clock=clock)
    yield cache
    cache.close()


def test_sqlite_entry_lives_until_its_ttl_and_is_deleted_once_expired(sqlite_cache, clock):
    # GIVEN an entry stored for 60 s
    sqlite_cache.put("k", {"candidates": [{"id": "vs-code"}]}, ttl_s=60)
    # THEN it is served until just before the TTL
    clock.now += 59.9
    assert sqlite_cache.get("k") == {"candidates": [{"id": "vs-code"}]}
    # AND not at the TTL
    clock.now += 0.1
    assert sqlite_cache.get("k") is None
    # AND the expired row is gone, not merely hidden: turning the clock back does not revive it
    clock.now -= 30
    assert sqlite_cache.get("k") is None


def test_sqlite_put_replaces_and_restarts_the_ttl(sqlite_cache, clock):
    sqlite_cache.put("k", {"v": 1}, ttl_s=10)
    clock.now += 8
    sqlite_cache.put("k", {"v": 2}, ttl_s=10)
    clock.now += 8
    assert sqlite_cache.get("k") == {"v": 2}
    assert sqlite_cache.get("other") is None


def test_sqlite_catalog_version_counts_per_domain(sqlite_cache):
    assert sqlite_cache.catalog_version("tools") == 0
    assert sqlite_cache.bump_catalog_version("tools") == 1
    assert sqlite_cache.bump_catalog_version("tools") == 2
    assert sqlite_cache.catalog_version("tools") == 2
    assert sqlite_cache.catalog_version("documents") == 0


def test_sqlite_bumps_from_many_threads_are_not_lost(sqlite_cache):
    def bump() -> None:
        for _ in range(25):
            sqlite_cache.bump_catalog_version("tools")

    threads = [threading.Thread(target=bump) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sqlite_cache.catalog_version("tools") == 200


def test_sqlite_cache_survives_a_reopen_of_the_same_file(tmp_path, clock):
    path = tmp_path / "cache.sqlite"
    first = SqliteCache(path, clock=clock)
    first.put("k", {"query": "free code editor", "score": 0.5}, ttl_s=3600)
    first.bump_catalog_version("tools")
    first.close()
    # WHEN another process (a new connection) opens the file
    again = SqliteCache(path, clock=clock)
    try:
        assert again.get("k") == {"query": "free code editor", "score": 0.5}
        assert again.catalog_version("tools") == 1
    finally:
        again.close()


def test_a_failing_sqlite_cache_raises_cache_error(tmp_path):
    cache = SqliteCache(tmp_path / "cache.sqlite")
    cache.close()  # every call now fails inside sqlite3
    with pytest.raises(CacheError):
        cache.get("k")
    with pytest.raises(CacheError):
        cache.put("k", {}, 60)


# ----- DynamoDBCache ------------------------------------------------------------------------------


def _template_table() -> dict[str, Any]:
    template = cfn_yaml.load(str(REPO / "template.yaml"))
    table = template["Resources"]["PlanCacheTable"]  # the other tables belong to the sync
    assert table["Type"] == "AWS::DynamoDB::Table"
    return table["Properties"]


@pytest.fixture()
def dynamodb(monkeypatch: pytest.MonkeyPatch, clock: Clock) -> Iterator[DynamoDBCache]:
    """DynamoDBCache on moto, with the key schema and TTL attribute of template.yaml's table."""
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.setenv(var, "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    props = _template_table()
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName="search-cache",
            AttributeDefinitions=props["AttributeDefinitions"],
            KeySchema=props["KeySchema"],
            BillingMode=props["BillingMode"],
        )
        ttl = props["TimeToLiveSpecification"]
        client.update_time_to_live(
            TableName="search-cache",
            TimeToLiveSpecification={
                "AttributeName": ttl["AttributeName"],
                "Enabled": ttl["Enabled"],
            },
        )
        yield DynamoDBCache("search-cache", client=client, clock=clock)


def test_dynamodb_entry_round_trips_and_expires_by_its_ttl_attribute(dynamodb, clock):
    assert dynamodb.get("k") is None
    dynamodb.put("k", {"candidates": [{"id": "cursor", "score": 0.9}]}, ttl_s=60)
    assert dynamodb.get("k") == {"candidates": [{"id": "cursor", "score": 0.9}]}
    # the item carries the epoch-seconds number DynamoDB's TTL deletes by, under the table's key
    item = dynamodb._client.get_item(TableName="search-cache", Key={"pk": {"S": "result#k"}})
    ttl_attribute = _template_table()["TimeToLiveSpecification"]["AttributeName"]
    assert item["Item"][ttl_attribute] == {"N": str(int(clock.now + 60))}
    # DynamoDB deletes expired items only eventually: get checks the TTL itself
    clock.now += 60
    assert dynamodb.get("k") is None


def test_dynamodb_catalog_version_counts_per_domain(dynamodb):
    assert dynamodb.catalog_version("tools") == 0
    assert dynamodb.bump_catalog_version("tools") == 1
    assert dynamodb.bump_catalog_version("tools") == 2
    assert dynamodb.catalog_version("tools") == 2
    assert dynamodb.catalog_version("documents") == 0
    # versions and results live side by side in the one table without colliding
    dynamodb.put("tools", {"v": 1}, 60)
    assert dynamodb.catalog_version("tools") == 2


def test_a_missing_dynamodb_table_raises_cache_error(dynamodb):
    gone = DynamoDBCache("no-such-table", client=dynamodb._client)
    with pytest.raises(CacheError, match="read failed"):
        gone.get("k")
    with pytest.raises(CacheError, match="write failed"):
        gone.put("k", {}, 60)
    with pytest.raises(CacheError):
        gone.bump_catalog_version("tools")


# ----- NullCache and the backend choice -----------------------------------------------------------


def test_null_cache_stores_nothing_and_never_versions():
    cache = NullCache()
    cache.put("k", {"v": 1}, 60)
    assert cache.get("k") is None
    assert cache.bump_catalog_version("tools") == 0
    assert cache.catalog_version("tools") == 0


def test_build_cache_follows_cache_backend(tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    home = {"agentic_search_home": tmp_path}
    assert isinstance(build_cache(Settings(**home, cache_backend="none")), NullCache)
    auto = build_cache(Settings(**home, cache_backend="auto", cache_table="t"))
    assert isinstance(auto, DynamoDBCache) and auto.table == "t"
    local = build_cache(Settings(**home, cache_backend="auto", cache_table=None))
    assert isinstance(local, SqliteCache) and local.path == tmp_path / "cache.sqlite"
    local.close()
    with pytest.raises(ValueError, match="CACHE_TABLE"):
        build_cache(Settings(**home, cache_backend="dynamodb", cache_table=None))


# ----- with a real engine -------------------------------------------------------------------------


def _record(rid: str, name: str, description: str) -> dict[str, Any]:
    return {
        "id": rid,
        "name": name,
        "vendor": "Acme",
        "description": description,
        "category": "Code Assistant",
        "functionality": ["Code Completion"],
        "features": ["inline suggestions"],
        "use_cases": ["autocomplete code offline"],
        "pricing_model": "Open Source",
        "price_monthly_usd": 0,
        "platforms": ["Linux", "macOS"],
        "deployment": ["Local"],
        "interface": ["IDE Extension"],
        "industries": ["Software Development"],
        "user_types": ["Developers"],
        "open_source": True,
    }


RECORDS = [
    _record("tabby-lite", "Tabby Lite", "A local code completion assistant for Python and Rust."),
    _record("autocomp", "AutoComp", "Offline autocomplete for code, running a small model."),
]


@pytest.fixture()
def small_engine(tmp_path: Path, embedder) -> Iterator[SearchService]:
    """A real engine on a temporary home, two records, the SQLite result cache."""
    settings = Settings(
        agentic_search_home=tmp_path / "home",
        qdrant_path=None,
        qdrant_url=None,
        mongodb_uri=None,
        cache_backend="sqlite",
        max_rounds=1,
    )
    engine = SearchService.create(settings, "tools", embedder=embedder)
    engine.ingest_records(RECORDS)
    yield engine
    engine.close()


def _search(runner: LocalRunner, query: str = "local code completion") -> SearchState:
    state = runner.run(SearchRequest(query=query, limit=5)).state
    assert state.cache is not None and state.response is not None
    return state


def test_an_ingest_that_changes_the_catalog_retires_cached_answers(small_engine):
    runner = LocalRunner(lambda _: small_engine.deps)
    version = small_engine.deps.cache.catalog_version("tools")
    assert version >= 1, "the first ingest bumped the version"
    # GIVEN a search answered once, then served from the cache
    first = _search(runner)
    assert first.cache.hit is False
    again = _search(runner)
    assert again.cache.hit is True and again.cache.key == first.cache.key
    assert again.response["candidates"] == first.response["candidates"]
    # WHEN an ingest changes nothing, the cache still answers
    small_engine.ingest_records(RECORDS)
    assert small_engine.deps.cache.catalog_version("tools") == version
    assert _search(runner).cache.hit is True
    # WHEN an ingest adds a record
    added = _record("codeflow", "CodeFlow", "A local code completion engine for Go and Rust.")
    small_engine.ingest_records([*RECORDS, added])
    # THEN the catalog version moved, the key with it, and the search runs on the new catalog
    assert small_engine.deps.cache.catalog_version("tools") == version + 1
    fresh = _search(runner)
    assert fresh.cache.hit is False and fresh.cache.key != first.cache.key
    assert "codeflow" in {c["id"] for c in fresh.response["candidates"]}
    runner.close()


def _finalized(engine: SearchService, response: dict[str, Any]) -> SearchState:
    """A state as Finalize leaves it, for the request "local code completion"."""
    state = cache_check(
        SearchState(request=SearchRequest(query="local code completion")), engine.deps
    )
    assert state.cache is not None and not state.cache.hit
    state.response = response
    return state


def test_a_response_listing_errors_is_not_cached(small_engine):
    c = small_engine.deps
    cache = c.cache
    # GIVEN a partial answer: one source failed
    partial = _finalized(
        small_engine,
        {
            "candidates": [{"id": "tabby-lite"}],
            "errors": [{"source": "sparse:bm25s", "error": "TimeoutError", "message": "5 s"}],
        },
    )
    # WHEN CacheStore runs
    cache_store(partial, c)
    # THEN nothing is stored: the next identical search is computed again
    assert cache.get(partial.cache.key) is None
    # WHILE the same answer without errors is stored
    whole = _finalized(small_engine, {"candidates": [{"id": "tabby-lite"}], "errors": []})
    cache_store(whole, c)
    stored = cache.get(whole.cache.key)
    assert stored is not None and stored.pop("cache")["computedAt"]  # what a hit shows
    assert stored == {"candidates": [{"id": "tabby-lite"}], "errors": []}


def test_a_cache_hit_is_not_stored_again_and_a_keyless_state_is_skipped(small_engine, clock):
    cache = SqliteCache(small_engine.settings.agentic_search_home / "other.sqlite", clock=clock)
    c = small_engine.deps.derive(cache=cache)
    state = SearchState(
        request=SearchRequest(query="q"),
        cache=CacheInfo(key="k" * 64, hit=True, backend="sqlite"),
        response={"candidates": [], "errors": []},
    )
    cache_store(state, c)
    assert cache.get("k" * 64) is None
    state.cache = CacheInfo(key="", hit=False)
    cache_store(state, c)
    assert cache.get("") is None
    cache.close()


def test_a_failing_cache_never_fails_the_search_steps(small_engine, tmp_path):
    broken = SqliteCache(tmp_path / "broken.sqlite")
    broken.close()
    c = small_engine.deps.derive(cache=broken)
    # CacheCheck: a miss that says why
    state = cache_check(SearchState(request=SearchRequest(query="local code completion")), c)
    assert state.cache is not None and state.cache.hit is False
    assert state.cache.error and "sqlite" in state.cache.error
    # CacheStore: the answer comes back with the cache error noted
    state.cache = CacheInfo(key="a" * 64, backend="sqlite")
    state.response = {"candidates": [{"id": "autocomp"}], "errors": []}
    out = cache_store(state, c)
    assert out.response is not None and out.response["cache"]["error"]
    assert out.response["candidates"] == [{"id": "autocomp"}]


def test_an_unreadable_cache_file_does_not_fail_an_ingest(tmp_path, embedder):
    # GIVEN a home whose cache file is not an SQLite database (corrupted, truncated, ...)
    home = tmp_path / "home"
    home.mkdir()
    (home / "cache.sqlite").write_bytes(b"this is not an sqlite database\n" * 200)
    settings = Settings(agentic_search_home=home, qdrant_url=None, cache_backend="sqlite")
    engine = SearchService.create(settings, "tools", embedder=embedder)
    try:
        # WHEN records are ingested (which bumps the catalog version in the cache)
        stats = engine.ingest_records(RECORDS)
        # THEN the records are in: the cache's entries expire by TTL, the ingest goes on
        assert stats.inserted == len(RECORDS)
        assert engine.deps.store.count(engine.schema) == len(RECORDS)
    finally:
        engine.close()
