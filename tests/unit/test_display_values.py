"""Whole numbers stored as floats (JSON, the engines) are shown as people write them:
"released>=2025", "price_monthly_usd=10", a candidate's ``released`` 2023, never "2025.0" or
"10.0"; fractions, strings and booleans keep their form."""

from __future__ import annotations

from agentic_search.logic.schema import load_schema
from agentic_search.pipeline.hydrate import matched_values
from agentic_search.wire import Filter, IntentState, value_text


def test_a_filter_label_writes_a_whole_float_as_an_integer():
    assert Filter(field="released", operator="gte", value=2025.0).label() == "released>=2025"
    assert Filter(field="price_monthly_usd", operator="lt", value=20.0).label() == (
        "price_monthly_usd<20"
    )
    assert Filter(field="price_monthly_usd", operator="lte", value=9.99).label() == (
        "price_monthly_usd<=9.99"
    )
    assert Filter(field="released", operator="in", value=[2023.0, 2024]).label() == (
        "released in [2023, 2024]"
    )
    assert Filter(field="open_source", operator="eq", value=True).label() == "open_source=True"


def test_matched_values_show_the_record_value_without_a_trailing_zero():
    schema = load_schema("tools")
    intent = IntentState(
        query="q",
        normalized_query="q",
        constraints=[
            Filter(field="price_monthly_usd", operator="lt", value=20.0),
            Filter(field="released", operator="gte", value=2023.0),
        ],
    )
    payload = {"price_monthly_usd": 10.0, "released": 2023.0}
    assert matched_values(schema, intent, payload) == {
        "price_monthly_usd": ["10"],
        "released": ["2023"],
    }


def test_value_text():
    assert [value_text(v) for v in (10.0, 9.5, 3, None, False, [1.0, "a"])] == [
        "10",
        "9.5",
        "3",
        "",
        "no",
        "1, a",
    ]


def test_candidate_metadata_writes_a_whole_float_as_an_integer():
    # a `number` field is validated to a float at ingest: the payload holds the year as 2023.0
    from agentic_search.pipeline.hydrate import metadata

    schema = load_schema("tools")
    payload = {"name": "X", "released": 2023.0, "price_monthly_usd": 9.99, "open_source": True}
    meta = metadata(schema, payload)
    assert meta["released"] == 2023 and isinstance(meta["released"], int)
    assert meta["price_monthly_usd"] == 9.99
    assert meta["name"] == "X"
    assert metadata(schema, {"price_monthly_usd": 0.0})["price_monthly_usd"] == 0
