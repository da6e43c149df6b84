"""The planner and the intent reader take their roles from the domain YAML (``roles``,
``constraint_fields.hard_values``, ``temporal``, ``structured_sort``): a domain whose aspects
and vocabularies share no name with the tools domain is routed as the tools domain is, a
minimal YAML searches every aspect it declares, and time is read from the declared field."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentic_search.logic.intent import CatalogLookup
from agentic_search.logic.intent_rules import RuleBasedIntentExtractor
from agentic_search.logic.planner import RuleBasedPlanner
from agentic_search.logic.schema import DomainSchema, SchemaError, load_schema
from agentic_search.logic.structured import rank_structured
from agentic_search.logic.text import default_analyzer
from agentic_search.wire import Filter

ROOT = Path(__file__).resolve().parents[3]
TOOLS_YAML = ROOT / "layers/core/agentic_search/domains/tools.yaml"
GOLDEN = ROOT / "cli/agentic_search_cli/data/tools_golden.jsonl"
TOOLS_QUERIES = ROOT / "benchmarks/tools_queries/queries.jsonl"

#: tools aspect -> a name that shares nothing with it
ASPECTS = {"identity": "about", "functionality": "purpose", "usecases": "audience",
           "interface": "runtime", "record": "whole", "needs": "asks"}  # fmt: skip
#: tools vocabulary -> a name that shares nothing with it
VOCABS = {"categories": "kinds", "functionality": "topics", "pricing_models": "plans",
          "deployment": "hosting", "interface": "surfaces", "platforms": "systems",
          "industries": "sectors", "user_types": "people"}  # fmt: skip


def _schema(tmp_path: Path, data: dict[str, Any], name: str = "domain.yaml") -> DomainSchema:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return load_schema(path)


def _renamed_tools(tmp_path: Path) -> DomainSchema:
    """The tools schema with every aspect and vocabulary renamed (fields keep their names, so
    the bundled records stay valid), the roles declared under the new names."""
    data = yaml.safe_load(TOOLS_YAML.read_text())
    data["name"] = "renamed"
    data["vocabularies"] = {VOCABS[k]: v for k, v in data["vocabularies"].items()}
    for fdef in data["fields"].values():
        if fdef.get("vocabulary"):
            fdef["vocabulary"] = VOCABS[fdef["vocabulary"]]
    data["vocabulary_fields"] = {VOCABS[k]: v for k, v in data["vocabulary_fields"].items()}
    for aspect in data["aspects"]:
        aspect["name"] = ASPECTS[aspect["name"]]
    for item in data["intent_fields"]:
        if item.get("vocabulary"):
            item["vocabulary"] = VOCABS[item["vocabulary"]]
            item["name"] = VOCABS.get(item["name"], item["name"])
    if data.get("enrichment", {}).get("route_aspect"):
        data["enrichment"]["route_aspect"] = ASPECTS[data["enrichment"]["route_aspect"]]
    rel = data["entities"]["relations"]
    rel["similar_aspect"] = ASPECTS[rel["similar_aspect"]]
    data["capabilities"]["vocabularies"] = [VOCABS[v] for v in data["capabilities"]["vocabularies"]]
    roles = data["roles"]
    roles["aspects"] = {role: ASPECTS[a] for role, a in roles["aspects"].items()}
    roles["vocabularies"] = {VOCABS[v]: r for v, r in roles["vocabularies"].items()}
    roles["reference_profile"] = [VOCABS[v] for v in roles["reference_profile"]]
    hard = data["constraint_fields"]["hard_values"]
    data["constraint_fields"]["hard_values"] = {VOCABS[v]: vals for v, vals in hard.items()}
    schema = _schema(tmp_path, data)
    assert not set(schema.aspect_names) & set(ASPECTS)
    assert not set(schema.vocabularies) & set(VOCABS)
    return schema


def _lookup(schema: DomainSchema, records: list[dict]) -> CatalogLookup:
    analyzer = default_analyzer()
    vocabulary = {t for r in records for t in analyzer.terms(" ".join(map(str, r.values())))}
    return CatalogLookup.of(
        schema, records, known=lambda terms: {t for t in terms if t in vocabulary},
        analyzer=analyzer,
    )  # fmt: skip


def _queries() -> list[str]:
    golden = [json.loads(x)["query"] for x in GOLDEN.read_text().splitlines() if x.strip()]
    judged = [json.loads(x)["text"] for x in TOOLS_QUERIES.read_text().splitlines() if x.strip()]
    return golden + judged


def _plan_shape(schema: DomainSchema, query: str, lookup: CatalogLookup,
                aspects: dict[str, str], vocabs: dict[str, str]) -> dict[str, Any]:  # fmt: skip
    """What the plan of ``query`` routes where, with aspect and vocabulary names mapped back
    to the tools domain's by ``aspects`` and ``vocabs``."""
    intent = RuleBasedIntentExtractor(schema, lookup, today=lambda: date(2026, 11, 24)).extract(
        query
    )
    plan = RuleBasedPlanner(schema).plan(intent)
    return {
        "matches": {vocabs.get(k, k): v for k, v in intent.matches.items()},
        "profile": {vocabs.get(k, k): v for k, v in intent.reference_profile.items()},
        "constraints": [f.label() for f in intent.constraints],
        "strategy": plan.strategy,
        "vectors": [
            (aspects.get(v.aspect, v.aspect), v.query_vector_source, v.text, v.top_k)
            for v in plan.vector_sources
        ],
        "structured": [[p.label() for p in s.preferences] for s in plan.structured_sources],
        "filters": [f.label() for f in plan.filters],
        "fusion": plan.fusion,
    }


def test_renamed_aspects_and_vocabularies_are_routed_as_the_standard_names(
    tmp_path: Path, tools_schema: DomainSchema, catalog_records: list[dict]
) -> None:
    renamed = _renamed_tools(tmp_path)
    back_a = {new: old for old, new in ASPECTS.items()}
    back_v = {new: old for old, new in VOCABS.items()}
    tools_lookup, renamed_lookup = (
        _lookup(tools_schema, catalog_records),
        _lookup(renamed, catalog_records),
    )
    routed: set[str] = set()
    for query in _queries():
        want = _plan_shape(tools_schema, query, tools_lookup, {}, {})
        got = _plan_shape(renamed, query, renamed_lookup, back_a, back_v)
        assert got == want, query
        routed |= {v[0] for v in want["vectors"]}
    # the queries exercise every role: identity, capability, usecase and platform aspects
    assert routed == set(ASPECTS)


def test_each_role_of_a_renamed_domain_is_searched(tmp_path: Path, catalog_records) -> None:
    renamed = _renamed_tools(tmp_path)
    lookup = _lookup(renamed, catalog_records)
    extractor, planner = RuleBasedIntentExtractor(renamed, lookup), RuleBasedPlanner(renamed)

    def aspects(query: str) -> dict[str, set[str]]:
        plan = planner.plan(extractor.extract(query))
        out: dict[str, set[str]] = {}
        for v in plan.vector_sources:
            out.setdefault(v.aspect, set()).add(v.query_vector_source)
        return out

    assert aspects("vector database")["purpose"] == {"query_text"}  # capability
    assert "audience" in aspects("transcription for podcasters")  # usecase
    assert "runtime" in aspects("code editor for Linux")  # platform
    by_example = aspects("alternative to Cursor")
    assert by_example["about"] == {"reference_tool"} and "reference_tool" in by_example["purpose"]
    intent = extractor.extract("code editor for Linux")
    assert [f.label() for f in intent.constraints] == ["platforms in [Linux]"]
    plan = planner.plan(intent)
    prefs = {p.field for s in plan.structured_sources for p in s.preferences}
    assert prefs == {"category", "platforms"}


MINIMAL = {
    "name": "shop",
    "version": 1,
    "title_field": "title",
    "text_field": "blurb",
    "vocabularies": {"topics": {"Garden": ["garden", "gardening"], "Kitchen": ["kitchen"]}},
    "fields": {
        "id": {"type": "string", "required": True},
        "title": {"type": "string", "required": True},
        "blurb": {"type": "string"},
        "purpose_text": {"type": "string"},
        "topic": {"type": "list", "vocabulary": "topics", "filter": ["in", "nin"]},
        "rating": {"type": "number"},
        "uploaded": {"type": "integer", "filter": ["gte", "lt"]},
    },
    "vocabulary_fields": {"topics": "topic"},
    "aspects": [
        {"name": "description", "fields": ["title", "blurb"]},
        {"name": "purpose", "fields": ["purpose_text"]},
    ],
    "keyword_fields": ["title", "blurb"],
    "temporal": {"field": "uploaded", "label": "uploaded"},
}


def test_a_minimal_yaml_searches_every_aspect_and_builds_a_structured_source(
    tmp_path: Path,
) -> None:
    schema = _schema(tmp_path, MINIMAL)
    assert schema.structured_sort == []  # not required
    assert schema.role_aspect("identity") == "description"
    intent = RuleBasedIntentExtractor(schema).extract("gardening gloves")
    assert intent.matches == {"topics": ["Garden"]}
    plan = RuleBasedPlanner(schema).plan(intent)
    assert [v.aspect for v in plan.vector_sources] == ["description", "purpose"]
    assert [[p.label() for p in s.preferences] for s in plan.structured_sources] == [
        ["topic in [Garden]"]
    ]


def test_with_roles_declared_only_the_always_aspects_join_every_plan(tmp_path: Path) -> None:
    roles = {"aspects": {"identity": "description"}}
    schema = _schema(tmp_path, dict(MINIMAL, roles=roles))
    plan = RuleBasedPlanner(schema).plan(RuleBasedIntentExtractor(schema).extract("gloves"))
    assert [v.aspect for v in plan.vector_sources] == ["description"]
    schema = _schema(tmp_path, dict(MINIMAL, roles=dict(roles, always=["purpose"])))
    plan = RuleBasedPlanner(schema).plan(RuleBasedIntentExtractor(schema).extract("gloves"))
    assert [v.aspect for v in plan.vector_sources] == ["description", "purpose"]


def test_a_domain_with_no_vocabularies_needs_no_structured_sort(tmp_path: Path) -> None:
    data = {k: v for k, v in MINIMAL.items() if k not in ("vocabularies", "vocabulary_fields")}
    data["fields"] = {k: v for k, v in MINIMAL["fields"].items() if k != "topic"}
    schema = _schema(tmp_path, data)
    plan = RuleBasedPlanner(schema).plan(RuleBasedIntentExtractor(schema).extract("gloves"))
    assert plan.structured_sources == [] and len(plan.vector_sources) == 2


def test_structured_hits_are_ranked_by_the_declared_preference_fields(tmp_path: Path) -> None:
    data = dict(MINIMAL, structured_sort=[{"field": "rating", "order": "desc"}])
    schema = _schema(tmp_path, data)
    records = [
        {"id": "a", "topic": ["Garden"], "rating": 3.0},
        {"id": "b", "topic": ["Garden", "Kitchen"], "rating": 1.0},
        {"id": "c", "topic": ["Garden"], "rating": 4.5},
        {"id": "d", "topic": ["Garden"]},
    ]
    prefs = [Filter(field="topic", operator="in", value=["Garden"]),
             Filter(field="topic", operator="in", value=["Kitchen"])]  # fmt: skip
    ranked = [r.id for r in rank_structured(schema, records, prefs, 10)]
    assert ranked == ["b", "c", "a", "d"]  # most matched first, then by rating, missing last


@pytest.mark.parametrize(
    ("query", "want"),
    [
        ("garden hose uploaded in 2025 or later", ["uploaded>=2025"]),
        ("garden hose released in 2025 or later", ["uploaded>=2025"]),
        ("garden hose since 2024", ["uploaded>=2024"]),
        ("garden hose 2023 onwards", ["uploaded>=2023"]),
        ("garden hose this year", ["uploaded>=2026"]),
        ("garden hose in the last 6 months", ["uploaded>=2026"]),
    ],
)
def test_a_time_phrase_is_read_on_the_declared_time_field(
    tmp_path: Path, query: str, want: list[str]
) -> None:
    schema = _schema(tmp_path, MINIMAL)
    lookup = CatalogLookup(names={}, record=lambda _id: None, dated=True)
    intent = RuleBasedIntentExtractor(schema, lookup, today=lambda: date(2026, 11, 24)).extract(
        query
    )
    assert [f.label() for f in intent.constraints] == want
    # no time word is a keyword: the need is what is left
    assert intent.keywords == ["garden", "hose"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"aspects": {"capability": "nope"}}, "unknown aspect 'nope'"),
        ({"vocabularies": {"colours": None}}, "unknown vocabulary 'colours'"),
        ({"vocabularies": {"topics": "usecase"}}, "routes to 'usecase': no aspect has it"),
        ({"reference_profile": ["sizes"]}, "unknown vocabulary 'sizes'"),
        ({"always": ["needs"]}, "roles.always names unknown aspect 'needs'"),
    ],
)
def test_bad_roles_are_rejected(tmp_path: Path, change: dict, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        _schema(tmp_path, dict(MINIMAL, roles=change))


def test_the_needs_aspect_is_searched_for_use_case_intents_only(catalog_records) -> None:
    """A record added without enrichment has no needs vector: a plain phrase that searched it
    would let every enriched record outvote the record the query names. Over the golden and
    judged tools queries, a plan searches the needs exactly when it read a use case."""
    schema = load_schema(TOOLS_YAML)
    extractor = RuleBasedIntentExtractor(
        schema, _lookup(schema, catalog_records), today=lambda: date(2026, 11, 24)
    )
    enriched = RuleBasedPlanner(schema, enriched=lambda: True)
    plain = RuleBasedPlanner(schema, enriched=lambda: False)
    seen = set()
    for query in _queries():
        intent = extractor.extract(query)
        plan = enriched.plan(intent)
        aspects = [s.aspect for s in plan.vector_sources]
        read_use_case = "'usecase'" in plan.rationale[0]  # "strategy X: signals [...]"
        assert ("needs" in aspects) == read_use_case, (query, plan.rationale[0], aspects)
        seen.add(read_use_case)
        # an index without enriched records never searches it
        assert "needs" not in [s.aspect for s in plain.plan(intent).vector_sources], query
    assert seen == {True, False}  # both kinds are among the queries
