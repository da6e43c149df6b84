"""``SearchRequest.drop``: the parts of an understood intent a client leaves out (the search
page's removed chips), how the plan follows, and the cache keys that keep them apart."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from support.builders import LOCAL, intent_for

from agentic_search.logic.cache_keys import added_filters, cache_key, plan_cache_key
from agentic_search.logic.intent_overrides import with_filters, without
from agentic_search.logic.planner import excluded_ids
from agentic_search.wire import EntityLink, Filter, SearchRequest

SINCE_2021 = Filter(field="released", operator="gte", value=2021.0, origin="after 2020")
FREE = Filter(field="pricing_model", operator="in", value=["Free"], origin="free")


def _alternative():
    return intent_for(
        primary_goal="alternative-to",
        reference_tool="github-copilot",
        reference_profile={"functionality": ["Code Completion"]},
        constraints=[LOCAL, SINCE_2021, FREE],
        matches={"functionality": ["Code Completion", "Chat"], "interface": ["CLI"]},
        excluded_tools=["tabnine"],
        entities=[
            EntityLink(id="github-copilot", name="GitHub Copilot", surface="copilot", score=1.0),
            EntityLink(id="vim", name="Vim", surface="vim", score=1.0),
        ],
    )


def test_a_dropped_filter_leaves_only_the_other_constraints():
    out = without(_alternative(), ["filter:released:gte"])
    assert out.constraints == [LOCAL, FREE]
    # the same field with another operator is another filter
    assert without(_alternative(), ["filter:released:lte"]).constraints == [LOCAL, SINCE_2021, FREE]


def test_a_dropped_preference_removes_one_value_and_an_emptied_vocabulary():
    out = without(_alternative(), ["prefer:functionality=Chat", "prefer:interface=CLI"])
    assert out.matches == {"functionality": ["Code Completion"]}


def test_dropping_the_reference_ends_the_alternative_and_its_exclusion():
    intent = _alternative()
    assert excluded_ids(intent) == ["github-copilot", "tabnine"]
    out = without(intent, ["entity:github-copilot", "exclude:tabnine"])
    assert (out.reference_tool, out.reference_tool_name, out.reference_profile) == (None, None, {})
    assert out.primary_goal == "find"
    assert [e.id for e in out.entities] == ["vim"]
    assert excluded_ids(out) == []


def test_a_name_that_matches_nothing_changes_nothing_and_the_input_is_not_touched():
    intent = _alternative()
    before = intent.model_dump()
    assert without(intent, ["entity:nothing", "prefer:platforms=BeOS"]) == intent
    without(intent, ["filter:released:gte", "entity:github-copilot"])
    assert intent.model_dump() == before


def test_the_request_validates_each_part():
    assert SearchRequest(query="q", drop=["filter:released:gte"]).drop == ["filter:released:gte"]
    for bad in [
        "released",
        "filter:Released:gte",
        "filter:released",
        "entity:",
        "x:y",
        "prefer:\n",
    ]:
        with pytest.raises(ValidationError):
            SearchRequest(query="q", drop=[bad])
    with pytest.raises(ValidationError):
        SearchRequest(query="q", drop=[f"entity:e{i}" for i in range(33)])


def test_cache_keys_tell_dropped_parts_apart_in_any_order():
    base = {"limit": 5, "domain": "tools", "schema_version": "1", "catalog_version": 3}
    plain = cache_key("free code editor", rounds=None, **base)
    assert cache_key("free code editor", rounds=None, drop=None, **base) == plain
    assert cache_key("free code editor", rounds=None, drop=[], **base) == plain
    one = cache_key("free code editor", rounds=None, drop=["a:1", "b:2"], **base)
    assert one != plain
    assert cache_key("free code editor", rounds=None, drop=["b:2", "a:1"], **base) == one
    plan = {"planner": "llm:x", **{k: v for k, v in base.items()}}
    assert plan_cache_key("q", **plan) != plan_cache_key("q", drop=["entity:x"], **plan)


# ----- SearchRequest.filters: hard filters a client adds ------------------------------------------

OPEN = Filter(field="open_source", operator="eq", value=True)


def test_an_added_filter_replaces_the_intents_own_on_its_field_and_operator_only():
    cheaper = Filter(field="released", operator="gte", value=2024.0)
    out = with_filters(_alternative(), [cheaper, OPEN])
    assert [(f.field, f.operator, f.value) for f in out.constraints] == [
        (LOCAL.field, LOCAL.operator, LOCAL.value),
        (FREE.field, FREE.operator, FREE.value),
        ("released", "gte", 2024.0),
        ("open_source", "eq", True),
    ]
    assert {f.origin for f in out.constraints[2:]} == {"request"}  # where each came from
    assert with_filters(out, [cheaper, OPEN]) == out  # applied again: nothing changes
    assert _alternative().constraints == [LOCAL, SINCE_2021, FREE]  # the input is left alone


def test_cache_keys_tell_added_filters_apart_in_any_order():
    base = {"limit": 5, "domain": "tools", "schema_version": "1", "catalog_version": 3}
    plain = cache_key("q", rounds=None, **base)
    assert cache_key("q", rounds=None, filters=None, **base) == plain
    both = added_filters([OPEN, FREE])
    assert both is not None and added_filters([]) is None
    keyed = cache_key("q", rounds=None, filters=both, **base)
    assert keyed != plain
    assert cache_key("q", rounds=None, filters=added_filters([FREE, OPEN]), **base) == keyed
    other = added_filters([OPEN.model_copy(update={"value": False}), FREE])
    assert cache_key("q", rounds=None, filters=other, **base) != keyed
    plan = {"planner": "llm:x", **base}
    assert plan_cache_key("q", **plan) != plan_cache_key("q", filters=both, **plan)
