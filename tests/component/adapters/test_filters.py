"""Structured filters: allowlist validation, and compiled queries RUN against real engines.

Each compiled MongoDB query is executed in mongomock and each compiled Qdrant filter in Qdrant
local mode (in memory), over the bundled catalog; the ids they return are compared with the
Python reference ``filters.matches``. The structured stores (MongoDB, Qdrant payload) are then
compared with each other and with ``rank_structured`` over the same records.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from typing import Any

import mongomock
import pytest
from pydantic import ValidationError
from qdrant_client import QdrantClient
from qdrant_client import models as qm

from agentic_search.adapters.mongo import MongoStructuredStore, to_mongo
from agentic_search.adapters.qdrant.filters import to_qdrant
from agentic_search.adapters.qdrant.local import LocalQdrantStore
from agentic_search.adapters.qdrant.structured import QdrantPayloadStructuredStore
from agentic_search.config import Settings
from agentic_search.logic.filters import (
    MAX_CONTAINS_LEN,
    FilterError,
    filter_problems,
    matches,
    validate_filters,
)
from agentic_search.logic.schema import DomainSchema
from agentic_search.logic.structured import rank_structured
from agentic_search.wire import Filter, PointWrite

# ----- fixtures: the bundled catalog in mongomock and in Qdrant local mode ----------------------


@pytest.fixture(scope="module")
def mongo_db(catalog_records: list[dict]) -> Iterator[Any]:
    """A mongomock database whose ``tools`` collection holds the bundled catalog."""
    client = mongomock.MongoClient()
    db = client["agentic_search_test"]
    # insert_many adds ``_id`` to the dicts it is given: insert copies.
    db["tools"].insert_many([dict(r) for r in catalog_records])
    yield db
    client.close()


@pytest.fixture(scope="module")
def qdrant_store(
    tools_schema: DomainSchema, catalog_records: list[dict]
) -> Iterator[LocalQdrantStore]:
    """A LocalQdrantStore over an in-memory local-mode client, one tiny dummy vector per aspect."""
    settings = Settings(qdrant_url=None, collection_prefix="")
    store = LocalQdrantStore(settings, client=QdrantClient(":memory:"))
    store.ensure_collection(tools_schema, dim=2)
    store.upsert(
        tools_schema,
        [
            PointWrite(r["id"], {a: [1.0, 0.0] for a in tools_schema.aspect_names}, dict(r))
            for r in catalog_records
        ],
    )
    yield store
    store.close()


def _mongo_ids(db: Any, query: dict[str, Any]) -> set[str]:
    return {doc["id"] for doc in db["tools"].find(query, projection={"id": True})}


def _qdrant_ids(store: LocalQdrantStore, schema: DomainSchema, flt: qm.Filter | None) -> set[str]:
    points, offset = store.client.scroll(
        store.collection(schema), scroll_filter=flt, limit=10_000, with_payload=True
    )
    assert offset is None  # everything came back in one page
    return {p.payload["id"] for p in points if p.payload}


def _expected_ids(schema: DomainSchema, records: list[dict], filters: list[Filter]) -> set[str]:
    return {r["id"] for r in records if all(matches(schema, f, r) for f in filters)}


def test_fixtures_hold_the_whole_catalog(
    tools_schema: DomainSchema,
    catalog_records: list[dict],
    mongo_db: Any,
    qdrant_store: LocalQdrantStore,
) -> None:
    """GIVEN the fixtures WHEN queried without a filter THEN both hold every catalog record."""
    all_ids = {r["id"] for r in catalog_records}
    assert len(all_ids) == len(catalog_records) > 100
    assert _mongo_ids(mongo_db, {}) == all_ids
    assert _qdrant_ids(qdrant_store, tools_schema, None) == all_ids
    # The catalog has null prices, which the range tests rely on.
    assert any(r["price_monthly_usd"] is None for r in catalog_records)


# ----- each operator, run in both engines -------------------------------------------------------

OPERATOR_CASES: list[tuple[str, str, Any]] = [
    # string field with a vocabulary
    ("category", "eq", "IDE"),
    ("category", "ne", "IDE"),
    ("category", "in", ["IDE", "Testing"]),
    ("category", "nin", ["IDE", "Testing", "Code Assistant"]),
    ("pricing_model", "ne", "Paid"),
    # free string field
    ("name", "eq", "Cursor"),
    ("name", "ne", "Cursor"),
    ("name", "contains", "studio"),
    ("name", "contains", "STUDIO"),
    ("name", "contains", "Visual Studio"),
    # list fields (any element matches)
    ("deployment", "in", ["Local"]),
    ("deployment", "in", ["Self-hosted", "Hybrid"]),
    ("deployment", "nin", ["Cloud"]),
    ("functionality", "in", ["Code Completion"]),
    ("industries", "in", ["Healthcare"]),
    ("industries", "nin", ["Software Development"]),
    # number field with null prices
    ("price_monthly_usd", "lt", 10),
    ("price_monthly_usd", "lte", 10),
    ("price_monthly_usd", "gt", 20),
    ("price_monthly_usd", "gte", 20.0),
    ("price_monthly_usd", "lt", 9.995),
    ("price_monthly_usd", "gt", 0),
    # boolean field
    ("open_source", "eq", True),
    ("open_source", "eq", False),
]


def _case_id(case: tuple[str, str, Any]) -> str:
    return f"{case[0]}-{case[1]}-{case[2]}"


@pytest.mark.parametrize("case", OPERATOR_CASES, ids=_case_id)
def test_operator_mongo_matches_reference(
    case: tuple[str, str, Any],
    tools_schema: DomainSchema,
    catalog_records: list[dict],
    mongo_db: Any,
) -> None:
    """GIVEN one filter WHEN compiled by to_mongo and run in mongomock
    THEN the ids equal those ``matches()`` admits, a proper non-empty subset of the catalog."""
    flt = Filter(field=case[0], operator=case[1], value=case[2])
    expected = _expected_ids(tools_schema, catalog_records, [flt])
    assert 0 < len(expected) < len(catalog_records)
    assert _mongo_ids(mongo_db, to_mongo(tools_schema, [flt])) == expected


@pytest.mark.parametrize("case", OPERATOR_CASES, ids=_case_id)
def test_operator_qdrant_matches_reference(
    case: tuple[str, str, Any],
    tools_schema: DomainSchema,
    catalog_records: list[dict],
    qdrant_store: LocalQdrantStore,
) -> None:
    """GIVEN one filter WHEN compiled by to_qdrant and scrolled in Qdrant local mode
    THEN the ids equal those ``matches()`` admits, a proper non-empty subset of the catalog."""
    flt = Filter(field=case[0], operator=case[1], value=case[2])
    expected = _expected_ids(tools_schema, catalog_records, [flt])
    assert 0 < len(expected) < len(catalog_records)
    assert _qdrant_ids(qdrant_store, tools_schema, to_qdrant(tools_schema, [flt])) == expected


def test_matches_reference_spot_checks(tools_schema: DomainSchema) -> None:
    """GIVEN hand-made records WHEN ``matches`` evaluates filters THEN Mongo-like semantics:
    list fields match when any element does, missing/null values fail range tests but pass
    ne/nin, and contains is a case-insensitive whole-word phrase test."""
    rec = {"name": "GitHub Copilot", "deployment": ["Cloud", "Local"], "price_monthly_usd": None}

    def m(field: str, op: str, value: Any, record: dict = rec) -> bool:
        return matches(tools_schema, Filter(field=field, operator=op, value=value), record)

    assert m("deployment", "in", ["Local"])
    assert not m("deployment", "nin", ["Local"])
    assert m("deployment", "nin", ["Hybrid"])
    assert not m("price_monthly_usd", "lt", 100)
    assert not m("price_monthly_usd", "gte", 0)
    assert m("category", "ne", "IDE")  # missing field
    assert m("name", "contains", "copilot")
    assert m("name", "contains", "GITHUB copilot")
    assert not m("name", "contains", "co-pilot")
    assert not m("name", "contains", "pilot")  # whole words only
    assert m("price_monthly_usd", "lte", 5, {"price_monthly_usd": 5.0})
    assert not m("price_monthly_usd", "lt", 5, {"price_monthly_usd": 5.0})


@pytest.mark.parametrize("threshold", [0, 10, 19.99, 20, 50])
def test_null_prices_fall_outside_every_range(
    threshold: float,
    tools_schema: DomainSchema,
    catalog_records: list[dict],
    mongo_db: Any,
    qdrant_store: LocalQdrantStore,
) -> None:
    """GIVEN a threshold WHEN ``price < t`` and ``price >= t`` are run in both engines
    THEN they partition exactly the records with a price: null prices are in neither."""
    priced = {r["id"] for r in catalog_records if r["price_monthly_usd"] is not None}
    below = Filter(field="price_monthly_usd", operator="lt", value=threshold)
    at_or_above = Filter(field="price_monthly_usd", operator="gte", value=threshold)
    for run in (
        lambda f: _mongo_ids(mongo_db, to_mongo(tools_schema, [f])),
        lambda f: _qdrant_ids(qdrant_store, tools_schema, to_qdrant(tools_schema, [f])),
    ):
        lo, hi = run(below), run(at_or_above)
        assert lo.isdisjoint(hi)
        assert lo | hi == priced
        assert len(priced) < len(catalog_records)


def test_price_eq_in_mongo(
    tools_schema: DomainSchema, catalog_records: list[dict], mongo_db: Any
) -> None:
    """GIVEN price eq 20 and eq 0 WHEN run in mongomock THEN 20 matches the stored 20.0 (the
    reference agrees), and 0 finds the free tools."""
    for value in (20, 0, 9.99):
        flt = Filter(field="price_monthly_usd", operator="eq", value=value)
        expected = _expected_ids(tools_schema, catalog_records, [flt])
        assert expected
        assert _mongo_ids(mongo_db, to_mongo(tools_schema, [flt])) == expected


@pytest.mark.parametrize("value", [20, 0])
def test_price_eq_integer_value_in_qdrant(
    value: int,
    tools_schema: DomainSchema,
    catalog_records: list[dict],
    qdrant_store: LocalQdrantStore,
) -> None:
    """GIVEN price eq <int> (allowed by the schema) WHEN compiled by to_qdrant and scrolled
    THEN the same records as ``matches()`` (and MongoDB) are returned."""
    flt = Filter(field="price_monthly_usd", operator="eq", value=value)
    expected = _expected_ids(tools_schema, catalog_records, [flt])
    assert expected
    assert _qdrant_ids(qdrant_store, tools_schema, to_qdrant(tools_schema, [flt])) == expected


def test_price_eq_float_value_compiles_for_qdrant(
    tools_schema: DomainSchema, catalog_records: list[dict], qdrant_store: LocalQdrantStore
) -> None:
    """GIVEN price eq 9.99 (valid per the allowlist) WHEN compiled by to_qdrant
    THEN it compiles, and scrolling returns the records priced 9.99."""
    flt = Filter(field="price_monthly_usd", operator="eq", value=9.99)
    validate_filters(tools_schema, [flt])  # the allowlist accepts it
    compiled = to_qdrant(tools_schema, [flt])
    expected = _expected_ids(tools_schema, catalog_records, [flt])
    assert _qdrant_ids(qdrant_store, tools_schema, compiled) == expected


@pytest.mark.parametrize("text", ["pilot", "code", "whisper", "copilot", "stable diffusion"])
def test_contains_whole_words_agrees_in_all_engines(
    text: str,
    tools_schema: DomainSchema,
    catalog_records: list[dict],
    mongo_db: Any,
    qdrant_store: LocalQdrantStore,
) -> None:
    """GIVEN name contains <text> (whole-word phrase semantics, as Qdrant's MatchPhrase)
    WHEN run in both engines THEN Qdrant returns the same ids as MongoDB and ``matches()``;
    a part of a word ("pilot" in "Copilot") matches nothing."""
    flt = Filter(field="name", operator="contains", value=text)
    expected = _expected_ids(tools_schema, catalog_records, [flt])
    if text == "pilot":
        assert expected == set()
    else:
        assert expected
    assert _mongo_ids(mongo_db, to_mongo(tools_schema, [flt])) == expected
    assert _qdrant_ids(qdrant_store, tools_schema, to_qdrant(tools_schema, [flt])) == expected


def test_combined_filters_are_anded(
    tools_schema: DomainSchema,
    catalog_records: list[dict],
    mongo_db: Any,
    qdrant_store: LocalQdrantStore,
) -> None:
    """GIVEN category in [...], price < 30, open_source = False and deployment nin [Local]
    WHEN compiled and run in both engines THEN the intersection, identical everywhere."""
    filters = [
        Filter(field="category", operator="in", value=["Code Assistant", "IDE", "LLM API"]),
        Filter(field="price_monthly_usd", operator="lt", value=30),
        Filter(field="open_source", operator="eq", value=False),
        Filter(field="deployment", operator="nin", value=["Local"]),
    ]
    expected = _expected_ids(tools_schema, catalog_records, filters)
    singles = [_expected_ids(tools_schema, catalog_records, [f]) for f in filters]
    assert expected == set.intersection(*singles)
    assert 0 < len(expected) < min(len(s) for s in singles)
    query = to_mongo(tools_schema, filters)
    assert list(query) == ["$and"] and len(query["$and"]) == 4
    assert _mongo_ids(mongo_db, query) == expected
    assert _qdrant_ids(qdrant_store, tools_schema, to_qdrant(tools_schema, filters)) == expected


# ----- compiled shapes --------------------------------------------------------------------------


def test_to_mongo_shapes(tools_schema: DomainSchema) -> None:
    """GIVEN zero, one or two filters WHEN compiled THEN {}, a bare clause, or an $and."""
    eq = Filter(field="category", operator="eq", value="IDE")
    lt = Filter(field="price_monthly_usd", operator="lt", value=10)
    assert to_mongo(tools_schema, []) == {}
    assert to_mongo(tools_schema, [eq]) == {"category": {"$eq": "IDE"}}
    assert to_mongo(tools_schema, [eq, lt]) == {
        "$and": [{"category": {"$eq": "IDE"}}, {"price_monthly_usd": {"$lt": 10}}]
    }
    assert to_mongo(tools_schema, [], exclude_ids=["a", "b"]) == {"id": {"$nin": ["a", "b"]}}


def test_to_qdrant_shapes(tools_schema: DomainSchema) -> None:
    """GIVEN no filter THEN None; GIVEN ne/nin THEN must_not; eq/in/range THEN must."""
    assert to_qdrant(tools_schema, []) is None
    compiled = to_qdrant(
        tools_schema,
        [
            Filter(field="category", operator="ne", value="IDE"),
            Filter(field="deployment", operator="in", value=["Local"]),
            Filter(field="price_monthly_usd", operator="lte", value=10),
        ],
    )
    assert compiled is not None
    assert [c.key for c in compiled.must] == ["deployment", "price_monthly_usd"]
    assert [c.key for c in compiled.must_not] == ["category"]
    assert compiled.must[1].range == qm.Range(lte=10.0)


# ----- exclude_ids ------------------------------------------------------------------------------


def test_exclude_ids_alone_and_with_filters(
    tools_schema: DomainSchema,
    catalog_records: list[dict],
    mongo_db: Any,
    qdrant_store: LocalQdrantStore,
) -> None:
    """GIVEN ids to exclude, with and without a filter WHEN run in both engines
    THEN exactly those ids are missing from what the filter alone returns."""
    all_ids = {r["id"] for r in catalog_records}
    excluded = ["cursor", "github-copilot", "not-a-real-id"]
    assert to_qdrant(tools_schema, [], exclude_ids=excluded) is not None
    assert _mongo_ids(mongo_db, to_mongo(tools_schema, [], excluded)) == all_ids - set(excluded)
    assert _qdrant_ids(
        qdrant_store, tools_schema, to_qdrant(tools_schema, [], excluded)
    ) == all_ids - set(excluded)

    flt = Filter(field="category", operator="in", value=["IDE", "Code Assistant"])
    base = _expected_ids(tools_schema, catalog_records, [flt])
    assert {"cursor", "github-copilot"} <= base
    want = base - set(excluded)
    assert len(want) == len(base) - 2
    assert _mongo_ids(mongo_db, to_mongo(tools_schema, [flt], excluded)) == want
    assert _qdrant_ids(qdrant_store, tools_schema, to_qdrant(tools_schema, [flt], excluded)) == want


# ----- regex injection through contains -------------------------------------------------------


@pytest.mark.parametrize("text", [".*", "(a+)+$", "a|b", "[", "\\", "^C"])
def test_contains_is_an_escaped_literal(
    text: str,
    tools_schema: DomainSchema,
    catalog_records: list[dict],
    mongo_db: Any,
) -> None:
    """GIVEN a regex-shaped ``contains`` text WHEN compiled to Mongo
    THEN the $regex is re.escape(text) between word-boundary guards (case-insensitive), and
    mongomock returns only records whose name literally contains the text: none does."""
    flt = Filter(field="name", operator="contains", value=text)
    query = to_mongo(tools_schema, [flt])
    assert query == {"name": {"$regex": r"(?<!\w)" + re.escape(text) + r"(?!\w)", "$options": "i"}}
    assert not any(text.lower() in r["name"].lower() for r in catalog_records)
    assert _mongo_ids(mongo_db, query) == set()
    assert _expected_ids(tools_schema, catalog_records, [flt]) == set()


def test_contains_dot_is_a_literal_dot(
    tools_schema: DomainSchema, catalog_records: list[dict], mongo_db: Any
) -> None:
    """GIVEN name contains "llama.cpp" WHEN run in mongomock THEN the dot is literal: only
    llama.cpp matches, and "llamaXcpp" (which an unescaped "." would accept) does not."""
    flt = Filter(field="name", operator="contains", value="llama.cpp")
    got = _mongo_ids(mongo_db, to_mongo(tools_schema, [flt]))
    assert got == {r["id"] for r in catalog_records if "llama.cpp" in r["name"].lower()}
    assert got
    mongo_db["probe"].insert_many([{"name": "llamaXcpp"}, {"name": "llama.cpp"}])
    hits = list(mongo_db["probe"].find(to_mongo(tools_schema, [flt]), {"_id": 0}))
    assert hits == [{"name": "llama.cpp"}]


# ----- rejections -------------------------------------------------------------------------------

REJECTIONS: list[tuple[str, str, str, Any, str]] = [
    # (test id, field, operator, value, text the reason must contain)
    ("unknown-field", "license", "eq", "MIT", "not filterable"),
    ("declared-not-filterable", "vendor", "eq", "Anysphere", "not filterable"),
    ("dollar-where-field", "$where", "eq", "1", "not filterable"),
    ("dollar-or-field", "$or", "in", ["x"], "not filterable"),
    ("dotted-field", "a.b", "eq", "x", "not filterable"),
    ("dotted-known-prefix", "category.0", "eq", "IDE", "not filterable"),
    ("op-eq-on-list", "functionality", "eq", "Chat", "operator 'eq' is not allowed"),
    ("op-ne-on-bool", "open_source", "ne", True, "operator 'ne' is not allowed"),
    ("op-in-on-name", "name", "in", ["Cursor"], "operator 'in' is not allowed"),
    ("op-contains-on-number", "price_monthly_usd", "contains", "20", "operator 'contains'"),
    ("op-lt-on-category", "category", "lt", "IDE", "operator 'lt' is not allowed"),
    ("dict-where", "name", "eq", {"$where": "sleep(1000)"}, "is not a string value"),
    ("dict-gt-empty", "name", "ne", {"$gt": ""}, "is not a string value"),
    ("dict-on-number", "price_monthly_usd", "gt", {"$gt": ""}, "is not a number value"),
    ("dict-in-list", "category", "in", [{"$ne": None}], "is not a string value"),
    ("dict-contains", "name", "contains", {"$regex": ".*"}, "is not a string value"),
    ("list-for-eq", "category", "eq", ["IDE"], "is not a string value"),
    ("vocab-unknown", "category", "eq", "Spaceships", "not in vocabulary 'categories'"),
    ("vocab-case", "category", "eq", "ide", "not in vocabulary"),
    ("vocab-in-list", "deployment", "in", ["Local", "Moon"], "'Moon' is not in vocabulary"),
    ("in-not-a-list", "category", "in", "IDE", "value must be a non-empty list"),
    ("nin-not-a-list", "deployment", "nin", "Cloud", "value must be a non-empty list"),
    ("in-empty-list", "category", "in", [], "value must be a non-empty list"),
    ("in-too-many", "category", "in", ["IDE"] * 51, "at most 50 values"),
    ("bool-for-number", "price_monthly_usd", "lt", True, "is not a number value"),
    ("string-for-number", "price_monthly_usd", "gte", "10", "is not a number value"),
    ("none-for-number", "price_monthly_usd", "lt", None, "is not a number value"),
    ("nan", "price_monthly_usd", "lt", math.nan, "is not a number value"),
    ("inf", "price_monthly_usd", "gt", math.inf, "is not a number value"),
    ("minus-inf", "price_monthly_usd", "gte", -math.inf, "is not a number value"),
    ("int-for-bool", "open_source", "eq", 1, "is not a boolean value"),
    ("string-for-bool", "open_source", "eq", "true", "is not a boolean value"),
    ("contains-too-long", "name", "contains", "a" * (MAX_CONTAINS_LEN + 1), "over 200"),
    ("contains-blank", "name", "contains", "   ", "empty text"),
]


@pytest.mark.parametrize("compile_", [to_mongo, to_qdrant], ids=["mongo", "qdrant"])
@pytest.mark.parametrize(
    ("field", "op", "value", "reason"),
    [case[1:] for case in REJECTIONS],
    ids=[case[0] for case in REJECTIONS],
)
def test_rejected_filter(
    field: str,
    op: str,
    value: Any,
    reason: str,
    compile_: Callable[..., Any],
    tools_schema: DomainSchema,
) -> None:
    """GIVEN a filter the allowlist forbids WHEN compiled for either engine
    THEN FilterError (a ValueError) whose single reason names the field and the problem."""
    flt = Filter(field=field, operator=op, value=value)
    with pytest.raises(FilterError) as info:
        compile_(tools_schema, [flt])
    assert isinstance(info.value, ValueError)
    assert len(info.value.reasons) >= 1
    assert all(field in r for r in info.value.reasons)
    assert any(reason in r for r in info.value.reasons)
    assert filter_problems(tools_schema, flt) == info.value.reasons


def test_contains_at_the_length_limit_is_accepted(tools_schema: DomainSchema) -> None:
    """GIVEN contains text of exactly 200 characters THEN it is allowed (limit is inclusive)."""
    flt = Filter(field="name", operator="contains", value="a" * MAX_CONTAINS_LEN)
    assert filter_problems(tools_schema, flt) == []
    assert "a" * MAX_CONTAINS_LEN in to_mongo(tools_schema, [flt])["name"]["$regex"]


def test_every_problem_is_reported(tools_schema: DomainSchema) -> None:
    """GIVEN one good and two bad filters WHEN validated THEN both problems are listed, in
    order, and the message joins them."""
    filters = [
        Filter(field="category", operator="eq", value="IDE"),
        Filter(field="$where", operator="eq", value="1"),
        Filter(field="price_monthly_usd", operator="lt", value=math.nan),
    ]
    with pytest.raises(FilterError) as info:
        validate_filters(tools_schema, filters)
    assert len(info.value.reasons) == 2
    assert "$where" in info.value.reasons[0]
    assert "price_monthly_usd" in info.value.reasons[1]
    assert str(info.value) == "; ".join(info.value.reasons)


def test_exclude_ids_do_not_bypass_validation(tools_schema: DomainSchema) -> None:
    """GIVEN a bad filter plus exclude_ids WHEN compiled THEN still rejected."""
    bad = Filter(field="$where", operator="eq", value="1")
    with pytest.raises(FilterError):
        to_mongo(tools_schema, [bad], exclude_ids=["cursor"])
    with pytest.raises(FilterError):
        to_qdrant(tools_schema, [bad], exclude_ids=["cursor"])


@pytest.mark.parametrize("op", ["$where", "regex", "$regex", "EQ", ""])
def test_unknown_operator_is_rejected_by_the_model(op: str) -> None:
    """GIVEN an operator outside the Operator literal WHEN a Filter is built
    THEN pydantic rejects it before any compiler sees it."""
    with pytest.raises(ValidationError):
        Filter(field="name", operator=op, value="x")


# ----- structured stores: MongoDB and Qdrant payload agree --------------------------------------


@pytest.fixture(scope="module")
def mongo_structured(mongo_db: Any) -> MongoStructuredStore:
    """MongoStructuredStore over the mongomock database (collection ``tools``)."""
    return MongoStructuredStore(mongo_db)


@pytest.fixture(scope="module")
def qdrant_structured(qdrant_store: LocalQdrantStore) -> QdrantPayloadStructuredStore:
    """QdrantPayloadStructuredStore over the in-memory local-mode store."""
    return QdrantPayloadStructuredStore(qdrant_store)


def _f(field: str, op: str, value: Any) -> Filter:
    return Filter(field=field, operator=op, value=value)


STORE_CASES: list[tuple[str, list[Filter], list[Filter], int, list[str]]] = [
    (
        "prefs-only",
        [],
        [_f("functionality", "in", ["Code Completion"]), _f("deployment", "in", ["Local"])],
        400,
        [],
    ),
    (
        "filters-and-prefs",
        [_f("open_source", "eq", True)],
        [_f("category", "in", ["IDE", "Code Assistant"]), _f("interface", "in", ["CLI"])],
        400,
        [],
    ),
    (
        "filters-only-top-k",
        [_f("price_monthly_usd", "lt", 25), _f("category", "ne", "Testing")],
        [],
        20,
        [],
    ),
    (
        "three-prefs-excluded",
        [_f("deployment", "nin", ["Cloud"])],
        [
            _f("functionality", "in", ["Chat", "Text Generation"]),
            _f("platforms", "in", ["Linux"]),
            _f("interface", "in", ["Desktop"]),
        ],
        30,
        ["ollama", "lm-studio", "jan"],
    ),
    (
        "contains-whole-word",
        [_f("name", "contains", "studio")],
        [_f("pricing_model", "in", ["Free", "Open Source"])],
        10,
        [],
    ),
]


@pytest.mark.parametrize(
    ("filters", "prefs", "top_k", "exclude"),
    [c[1:] for c in STORE_CASES],
    ids=[c[0] for c in STORE_CASES],
)
def test_structured_stores_agree(
    filters: list[Filter],
    prefs: list[Filter],
    top_k: int,
    exclude: list[str],
    tools_schema: DomainSchema,
    catalog_records: list[dict],
    mongo_structured: MongoStructuredStore,
    qdrant_structured: QdrantPayloadStructuredStore,
) -> None:
    """GIVEN filters, soft preferences, top_k and excluded ids
    WHEN both structured stores ``find``
    THEN they return the same ranked ids and scores, equal to ``rank_structured`` over the
    admitted records: preferences matched (desc), then ``name`` (asc); score = share matched.
    """
    mongo_hits = mongo_structured.find(tools_schema, filters, prefs, top_k, exclude)
    qdrant_hits = qdrant_structured.find(tools_schema, filters, prefs, top_k, exclude)

    admitted = [
        r
        for r in catalog_records
        if r["id"] not in exclude and all(matches(tools_schema, f, r) for f in filters)
    ]
    reference = rank_structured(tools_schema, admitted, prefs, top_k)

    assert [h.id for h in mongo_hits] == [h.id for h in reference]
    assert [h.id for h in qdrant_hits] == [h.id for h in reference]
    assert [h.score for h in mongo_hits] == pytest.approx([h.score for h in reference])
    assert [h.score for h in qdrant_hits] == pytest.approx([h.score for h in reference])
    assert 0 < len(reference) <= top_k
    assert not set(exclude) & {h.id for h in qdrant_hits}

    # The ranking itself, checked independently of rank_structured.
    by_id = {r["id"]: r for r in catalog_records}
    n = max(1, len(prefs))
    keys = []
    for h in mongo_hits:
        rec = by_id[h.id]
        hits = sum(matches(tools_schema, p, rec) for p in prefs)
        assert h.score == pytest.approx(hits / n if prefs else 1.0)
        assert not prefs or hits > 0
        keys.append((-hits, rec["name"]))
    assert keys == sorted(keys)


def test_structured_ranking_hand_checked(
    tools_schema: DomainSchema,
    mongo_structured: MongoStructuredStore,
    qdrant_structured: QdrantPayloadStructuredStore,
) -> None:
    """GIVEN category in [IDE] with preferences open_source (eq True) and deployment in
    [Local] WHEN both stores rank THEN records matching both preferences come first (score
    1.0), then one of two (0.5), each group in name order."""
    filters = [_f("category", "in", ["IDE"])]
    prefs = [_f("open_source", "eq", True), _f("deployment", "in", ["Local"])]
    mongo_hits = mongo_structured.find(tools_schema, filters, prefs, 100)
    qdrant_hits = qdrant_structured.find(tools_schema, filters, prefs, 100)
    assert [h.id for h in mongo_hits] == [h.id for h in qdrant_hits]
    scores = [h.score for h in mongo_hits]
    assert scores == sorted(scores, reverse=True)
    assert set(scores) <= {1.0, 0.5}
    assert scores[0] == 1.0
    for score in (1.0, 0.5):
        names = [h.payload["name"] for h in mongo_hits if h.score == score]
        assert names == sorted(names)
    for h in mongo_hits:
        both = h.payload["open_source"] is True and "Local" in h.payload["deployment"]
        assert (h.score == 1.0) == both


def test_structured_stores_reject_bad_preferences(
    tools_schema: DomainSchema,
    mongo_structured: MongoStructuredStore,
    qdrant_structured: QdrantPayloadStructuredStore,
) -> None:
    """GIVEN a preference with an injection-shaped value WHEN either store finds
    THEN FilterError before any query is run."""
    bad = [_f("category", "in", [{"$ne": None}])]
    for store in (mongo_structured, qdrant_structured):
        with pytest.raises(FilterError):
            store.find(tools_schema, [], bad, 10)


def test_structured_stores_agree_with_negative_preference(
    tools_schema: DomainSchema,
    mongo_structured: MongoStructuredStore,
    qdrant_structured: QdrantPayloadStructuredStore,
) -> None:
    """GIVEN preferences category in [IDE] and pricing_model ne Paid, filter open_source eq
    False WHEN both stores find THEN the same ranked ids (non-IDE, non-Paid records with 0.5)."""
    filters = [_f("open_source", "eq", False)]
    prefs = [_f("category", "in", ["IDE"]), _f("pricing_model", "ne", "Paid")]
    mongo_ids = [h.id for h in mongo_structured.find(tools_schema, filters, prefs, 400)]
    qdrant_ids = [h.id for h in qdrant_structured.find(tools_schema, filters, prefs, 400)]
    assert len(mongo_ids) > 20
    assert qdrant_ids == mongo_ids
