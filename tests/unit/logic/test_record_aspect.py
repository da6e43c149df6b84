"""The whole-record aspect: one vector per record over every text field, searched by every
plan (so no routing choice drops what it finds), and what a schema may declare of it."""

from __future__ import annotations

import pytest
import yaml

from agentic_search.logic.intent import CatalogLookup
from agentic_search.logic.intent_rules import RuleBasedIntentExtractor
from agentic_search.logic.planner import RuleBasedPlanner
from agentic_search.logic.schema import DomainSchema, load_schema
from agentic_search.logic.text import aspect_text

QUERIES = [
    "AI code completion tools that work locally",  # capability + constraint
    "alternative to Cursor",  # by example only
    "something like Otter but without a bot joining the call",  # reference + text
    "Cursor vs Windsurf",  # comparison
    "tools for marketers",  # use case
    "turn my slide deck into a narrated explainer video",  # a task
    "vector database",  # a category
    "ollma on windows",  # typo + platform
    "Our team of five writes Python services and deploys on Kubernetes; we need something "
    "that reviews pull requests, explains failing tests and suggests fixes, runs in our own "
    "cloud account, with no code leaving it, and costs less than a seat per developer per "
    "month at the big vendors. Ideally it also writes the changelog.",  # a pasted paragraph
]


@pytest.fixture(scope="module")
def reader(
    tools_schema: DomainSchema, catalog_lookup: CatalogLookup
) -> tuple[RuleBasedIntentExtractor, RuleBasedPlanner]:
    return RuleBasedIntentExtractor(tools_schema, catalog_lookup), RuleBasedPlanner(tools_schema)


def test_the_tools_record_aspect_embeds_every_text_field(tools_schema, catalog_by_id) -> None:
    assert tools_schema.record_aspect == "record"
    text = aspect_text(tools_schema, "record", catalog_by_id["cursor"])
    record = catalog_by_id["cursor"]
    for f in ("name", "description"):
        assert record[f] in text
    for f in ("functionality", "use_cases", "features"):
        assert all(v in text for v in record[f])


@pytest.mark.parametrize("query", QUERIES)
def test_plans_search_the_whole_record_vector(reader, query: str) -> None:
    extractor, planner = reader
    intent = extractor.extract(query)
    plan = planner.plan(intent, limit=10)
    record = [s for s in plan.vector_sources if s.aspect == "record"]
    by_ref = [s for s in record if s.query_vector_source == "reference_tool"]
    by_text = [s for s in record if s.query_vector_source != "reference_tool"]
    capability = bool(intent.matches.get("functionality") or intent.matches.get("categories"))
    # THEN a query that names a record searches that record's own whole vector, at the
    # weight of its other vectors
    assert bool(by_ref) == bool(intent.reference_tool)
    assert all(s.weight == 1.0 for s in by_ref)
    # AND the query's text is searched on it wherever no capability was read (a capability
    # is carried by its own aspect and the structured source), and in a pasted paragraph,
    # at the weight the schema gives the aspect
    by_example_only = bool(intent.reference_tool) and not intent.semantic_variants
    long = plan.strategy and "long query" in " ".join(plan.rationale)
    assert bool(by_text) == ((not capability and not by_example_only) or bool(long)), plan
    assert all(s.weight == planner.schema.aspect("record").weight for s in by_text)


def test_a_one_aspect_schema_plans_exactly_as_before() -> None:
    # GIVEN the documents schema, whose one aspect is the whole record
    schema = load_schema("documents")
    assert schema.record_aspect == "content"
    from agentic_search.wire import IntentState

    intent = IntentState(query="does vitamin d reduce fracture risk", normalized_query="")
    plan = RuleBasedPlanner(schema).plan(intent, limit=10)
    # THEN the content vector is searched once, not twice
    assert [(s.aspect, s.weight) for s in plan.vector_sources] == [("content", 1.0)]


def _schema(aspects: list[dict]) -> dict:
    return {
        "name": "lamps",
        "version": 1,
        "title_field": "name",
        "text_field": "about",
        "fields": {
            "id": {"type": "string"},
            "name": {"type": "string"},
            "about": {"type": "string"},
        },
        "aspects": aspects,
        "keyword_fields": ["name", "about"],
        "structured_sort": {"field": "name"},
    }


def test_record_aspect_is_the_marked_one_else_none_of_several() -> None:
    two = [{"name": "title", "fields": ["name"]}, {"name": "body", "fields": ["about"]}]
    assert DomainSchema.model_validate(_schema(two)).record_aspect == ""
    two[1]["whole_record"] = True
    assert DomainSchema.model_validate(_schema(two)).record_aspect == "body"
    two[0]["whole_record"] = True
    with pytest.raises(ValueError, match="at most one may be"):
        DomainSchema.model_validate(_schema(two))


def test_an_aspect_weight_is_positive() -> None:
    bad = [{"name": "all", "fields": ["name", "about"], "weight": 0}]
    with pytest.raises(ValueError, match="weight"):
        DomainSchema.model_validate(yaml.safe_load(yaml.safe_dump(_schema(bad))))
