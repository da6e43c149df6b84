"""Rule-based intent extraction and query planning over the bundled tools catalog.

The expectations below say what a user asking the query would want, not what the code happens
to output. Cases where the code disagrees are kept with the correct expectation and marked
``xfail(strict=True)`` with the reason, so that a fix turns them into failures to un-mark.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest

from agentic_search.logic.intent import CatalogLookup
from agentic_search.logic.intent_rules import RuleBasedIntentExtractor
from agentic_search.logic.plan_rules import PlanError, fusion_for, validate_plan
from agentic_search.logic.planner import RuleBasedPlanner
from agentic_search.logic.schema import DomainSchema
from agentic_search.wire import (
    QUERY_MAX_CHARS,
    TOP_K_MAX,
    TOP_K_MIN,
    Filter,
    QueryPlan,
    SparseSource,
    VectorSource,
)

FREE = ["Free", "Freemium", "Open Source"]
LOCAL = ("deployment", "in", ["Local"])
SELF_HOSTED = ("deployment", "in", ["Self-hosted"])
NOT_CLOUD = ("deployment", "in", ["Local", "Self-hosted"])
FREE_PRICING = ("pricing_model", "in", FREE)
NOT_PAID = ("pricing_model", "nin", ["Paid"])
OPEN_SOURCE = ("open_source", "eq", True)

CAPABILITY = "capability-focused"
IDENTITY = "identity-focused"
USECASE = "usecase-focused"
HYBRID = "multi-collection-hybrid"


class Expect(NamedTuple):
    """The intent (and the planner's strategy) a user would want for one query."""

    goal: str
    ref: str | None
    matches: dict[str, list[str]]
    constraints: list[tuple[str, str, Any]]
    must: list[str]
    strategy: str


def _triples(constraints: list[Filter] | list[tuple[str, str, Any]]) -> list[tuple[str, str, Any]]:
    """Constraints as sorted (field, operator, value) triples; duplicates are kept."""
    out = [
        (c.field, c.operator, c.value) if isinstance(c, Filter) else tuple(c) for c in constraints
    ]
    return sorted(out, key=repr)


def _normalized(e: Expect) -> Expect:
    return e._replace(
        matches={k: sorted(v) for k, v in e.matches.items()},
        constraints=_triples(e.constraints),
        must=sorted(e.must),
    )


def case(
    query: str,
    *,
    strategy: str,
    goal: str = "find",
    ref: str | None = None,
    matches: dict[str, list[str]] | None = None,
    constraints: tuple[tuple[str, str, Any], ...] = (),
    must: tuple[str, ...] = (),
    bug: str | None = None,
) -> Any:
    """One row of the intent table; ``bug`` marks a known wrong extraction (strict xfail)."""
    marks = [pytest.mark.xfail(strict=True, reason=bug)] if bug else []
    expected = Expect(goal, ref, matches or {}, list(constraints), list(must), strategy)
    return pytest.param(query, expected, marks=marks, id=query)


INTENT_CASES = [
    # --- capability queries with hard constraints --------------------------------------------
    case(
        "free autocomplete tool that works locally",
        matches={"functionality": ["Code Completion"]},
        constraints=(FREE_PRICING, LOCAL),
        strategy=CAPABILITY,
    ),
    case(
        "FREE AUTOCOMPLETE!!!",
        matches={"functionality": ["Code Completion"]},
        constraints=(FREE_PRICING,),
        strategy=CAPABILITY,
    ),
    case(
        "self-hosted vector db",
        matches={"categories": ["Vector Database"]},
        constraints=(SELF_HOSTED,),
        strategy=CAPABILITY,
    ),
    case(
        "SELF-HOSTED Vector DB",
        matches={"categories": ["Vector Database"]},
        constraints=(SELF_HOSTED,),
        strategy=CAPABILITY,
    ),
    case(
        "on-prem speech to text",
        matches={"functionality": ["Speech-to-Text"]},
        constraints=(SELF_HOSTED,),
        strategy=CAPABILITY,
    ),
    case(
        "on-premises LLM tracing",
        matches={"functionality": ["Tracing"]},
        constraints=(SELF_HOSTED,),
        strategy=CAPABILITY,
    ),
    case(
        "open-source speech to text that runs on-device",
        matches={"functionality": ["Speech-to-Text"]},
        constraints=(OPEN_SOURCE, LOCAL),
        strategy=CAPABILITY,
    ),
    case(
        "not paid code review tool",
        matches={"functionality": ["Code Review"]},
        constraints=(NOT_PAID,),
        strategy=CAPABILITY,
    ),
    case(
        "non-commercial image editing",
        matches={"functionality": ["Image Editing"]},
        constraints=(NOT_PAID,),
        strategy=CAPABILITY,
    ),
    case(
        "speech to text without a subscription",
        matches={"functionality": ["Speech-to-Text"]},
        constraints=(NOT_PAID,),
        strategy=CAPABILITY,
    ),
    case(
        "autocomplete that isn't paid",
        matches={"functionality": ["Code Completion"]},
        constraints=(NOT_PAID,),
        strategy=CAPABILITY,
    ),
    case(
        "IDE under $20 a month",
        matches={"categories": ["IDE"]},
        constraints=(("price_monthly_usd", "lt", 20.0),),
        strategy=CAPABILITY,
    ),
    case(
        "coding assistant $15 or less",
        matches={"categories": ["Code Assistant"]},
        constraints=(("price_monthly_usd", "lte", 15.0),),
        strategy=CAPABILITY,
    ),
    case(
        "less than $25/mo image generator",
        matches={"categories": ["Image Generation"]},
        constraints=(("price_monthly_usd", "lt", 25.0),),
        strategy=CAPABILITY,
    ),
    case(
        "no more than $12 per month chatbot",
        matches={"categories": ["Chat Assistant"]},
        constraints=(("price_monthly_usd", "lte", 12.0),),
        strategy=CAPABILITY,
    ),
    case(
        "code completion, not cloud",
        matches={"functionality": ["Code Completion"]},
        constraints=(NOT_CLOUD,),
        strategy=CAPABILITY,
    ),
    case(
        "vector db, NOT cloud-based",
        matches={"categories": ["Vector Database"]},
        constraints=(NOT_CLOUD,),
        strategy=CAPABILITY,
    ),
    case(
        "chatbot for Linux",
        matches={"categories": ["Chat Assistant"], "platforms": ["Linux"]},
        constraints=(("platforms", "in", ["Linux"]),),
        strategy=CAPABILITY,
    ),
    case(
        "code editor for Windows and macOS",
        matches={"categories": ["IDE"], "platforms": ["Windows", "macOS"]},
        constraints=(("platforms", "in", ["Windows"]), ("platforms", "in", ["macOS"])),
        strategy=CAPABILITY,
    ),
    case(
        "IDE, not paid, for Linux",
        matches={"categories": ["IDE"], "platforms": ["Linux"]},
        constraints=(NOT_PAID, ("platforms", "in", ["Linux"])),
        strategy=CAPABILITY,
    ),
    case(
        "image generator that is not an IDE",
        matches={"categories": ["Image Generation"]},
        constraints=(("category", "nin", ["IDE"]),),
        strategy=CAPABILITY,
    ),
    case(
        "an IDE extension for autocomplete, not an IDE",
        matches={"interface": ["IDE Extension"], "functionality": ["Code Completion"]},
        constraints=(("category", "nin", ["IDE"]),),
        strategy=CAPABILITY,
    ),
    case(
        "code assistant that must run locally",
        matches={"categories": ["Code Assistant"]},
        constraints=(LOCAL,),
        strategy=CAPABILITY,
    ),
    case(
        "free trial code assistant",
        matches={"categories": ["Code Assistant"]},
        strategy=CAPABILITY,  # a free trial is not a free tool: no pricing constraint
    ),
    case(
        "tts for my podcast",
        matches={"categories": ["Audio & Speech"], "functionality": ["Text-to-Speech"]},
        strategy=CAPABILITY,
    ),
    case(
        "transcribe meetings offline on my laptop",
        matches={"functionality": ["Speech-to-Text"]},
        constraints=(LOCAL,),
        strategy=CAPABILITY,
    ),
    case(
        "a vector database that runs on my own infrastructure",
        matches={"categories": ["Vector Database"]},
        constraints=(SELF_HOSTED,),
        strategy=CAPABILITY,
    ),
    case(
        "royalty-free music generator",
        matches={"categories": ["Audio & Speech"]},
        strategy=CAPABILITY,
    ),
    case(
        "LLM runtime for models under 8GB RAM",
        matches={"categories": ["Local LLM Runtime"]},
        strategy=CAPABILITY,
    ),
    case(
        "team plan for up to 10 users",
        strategy=HYBRID,
        bug="planned usecase-focused, not hybrid (the seat count is no longer read as a price)",
    ),
    # --- use cases and users ----------------------------------------------------------------
    case("app for writers", matches={"user_types": ["Writers"]}, strategy=USECASE),
    case("software for healthcare", matches={"industries": ["Healthcare"]}, strategy=USECASE),
    case("a tool to help me write cover letters", strategy=USECASE),
    case(
        "transcription app for podcasters",
        matches={"functionality": ["Speech-to-Text"], "user_types": ["Content Creators"]},
        strategy=HYBRID,
    ),
    case(
        "AI video generator for marketers",
        matches={"categories": ["Video Generation"], "user_types": ["Marketers"]},
        strategy=HYBRID,
    ),
    case(
        "“pair programmer” for developers",
        matches={"categories": ["Code Assistant"], "user_types": ["Developers"]},
        must=("pair programmer",),
        strategy=HYBRID,
    ),
    case(
        '"tab completion" in Neovim',
        matches={"functionality": ["Code Completion"]},
        must=("tab completion", "Neovim"),
        strategy=CAPABILITY,
    ),
    case(
        "I need a code editor I can continue using offline",
        matches={"categories": ["IDE"]},
        constraints=(LOCAL,),
        strategy=CAPABILITY,
    ),
    case(
        "i want to make a video",
        strategy=USECASE,
    ),
    case(
        "must be open source and self-hosted",
        constraints=(OPEN_SOURCE, SELF_HOSTED),
        strategy=HYBRID,
    ),
    # --- reference tools ---------------------------------------------------------------------
    case(
        "something like Cursor but cheaper",
        goal="alternative-to",
        ref="cursor",
        constraints=(("price_monthly_usd", "lt", 20.0),),
        must=("Cursor",),
        strategy=IDENTITY,
    ),
    case(
        "cheaper than Cursor",
        goal="alternative-to",
        ref="cursor",
        constraints=(("price_monthly_usd", "lt", 20.0),),
        must=("Cursor",),
        strategy=IDENTITY,
    ),
    case(
        "cheaper than GitHub Copilot",
        goal="alternative-to",
        ref="github-copilot",
        constraints=(("price_monthly_usd", "lt", 10.0),),
        must=("GitHub Copilot",),
        strategy=IDENTITY,
    ),
    case(
        "cheaper than Devin",  # no list price in the catalog: no price ceiling can be derived
        goal="alternative-to",
        ref="devin",
        must=("Devin",),
        strategy=IDENTITY,
    ),
    case(
        "GitHub Copilot alternatives",
        goal="alternative-to",
        ref="github-copilot",
        must=("GitHub Copilot",),
        strategy=IDENTITY,
    ),
    case(
        "Tabnine alternative",
        goal="alternative-to",
        ref="tabnine",
        must=("Tabnine",),
        strategy=IDENTITY,
    ),
    case(
        "Something like CURSOR",
        goal="alternative-to",
        ref="cursor",
        must=("CURSOR",),
        strategy=IDENTITY,
    ),
    case(
        "what are the best alternatives to Cursor?",
        goal="alternative-to",
        ref="cursor",
        must=("Cursor",),
        strategy=IDENTITY,
    ),
    case(
        "Perplexity alternative that's free",
        goal="alternative-to",
        ref="perplexity",
        constraints=(FREE_PRICING,),
        must=("Perplexity",),
        strategy=IDENTITY,
    ),
    case(
        "instead of Grafana, open source monitoring",
        goal="alternative-to",
        ref="grafana",
        matches={"functionality": ["Monitoring"]},
        constraints=(OPEN_SOURCE,),
        must=("Grafana",),
        strategy=HYBRID,
    ),
    case(
        "open source alternative to GitHub Copilot",
        goal="alternative-to",
        ref="github-copilot",
        constraints=(OPEN_SOURCE,),
        must=("GitHub Copilot",),
        strategy=IDENTITY,
    ),
    case(
        "replacement for Postman",
        goal="alternative-to",
        ref="postman",
        must=("Postman",),
        strategy=IDENTITY,
    ),
    case(
        "alternative to Cursor under $10/month",
        goal="alternative-to",
        ref="cursor",
        constraints=(("price_monthly_usd", "lt", 10.0),),
        must=("Cursor",),
        strategy=IDENTITY,
    ),
    case(
        "Cursor’s alternatives",
        goal="alternative-to",
        ref="cursor",
        must=("Cursor",),
        strategy=IDENTITY,
    ),
    case(
        "alternative to Copilot",
        goal="alternative-to",
        ref="github-copilot",
        must=("Copilot",),
        strategy=IDENTITY,
    ),
    # --- compare and explain -----------------------------------------------------------------
    case(
        "compare Cursor and Windsurf",
        goal="compare",
        must=("Cursor", "Windsurf"),
        strategy=HYBRID,
    ),
    case(
        "difference between Cursor and Windsurf",
        goal="compare",
        must=("Cursor", "Windsurf"),
        strategy=HYBRID,
    ),
    case(
        "Cursor vs Windsurf",
        goal="compare",
        must=("Cursor", "Windsurf"),
        strategy=HYBRID,
    ),
    case(
        "what is RAG",
        goal="explain",
        matches={"functionality": ["Retrieval-Augmented Generation"]},
        strategy=CAPABILITY,
    ),
    case(
        "explain retrieval-augmented generation",
        goal="explain",
        matches={"functionality": ["Retrieval-Augmented Generation"]},
        strategy=CAPABILITY,
    ),
    case(
        "what is a vector database?",
        goal="explain",
        matches={"categories": ["Vector Database"]},
        strategy=CAPABILITY,
    ),
    case(
        "How does Ollama work?",
        goal="explain",
        must=("Ollama",),
        strategy=HYBRID,
    ),
    case(
        "explain vector databases",
        goal="explain",
        matches={"categories": ["Vector Database"]},
        strategy=CAPABILITY,
    ),
    # --- no signal ---------------------------------------------------------------------------
    case("xyzzy qwerty", strategy=HYBRID),
]

#: Queries of the table, for the planner rule tests (which hold whatever the intent is).
TABLE_QUERIES = [p.values[0] for p in INTENT_CASES]


@pytest.fixture(scope="module")
def extractor(
    tools_schema: DomainSchema, catalog_lookup: CatalogLookup
) -> RuleBasedIntentExtractor:
    return RuleBasedIntentExtractor(tools_schema, catalog_lookup)


@pytest.fixture(scope="module")
def planner(tools_schema: DomainSchema) -> RuleBasedPlanner:
    return RuleBasedPlanner(tools_schema)


# ----------------------------------------------------------------------------------------------
# 1. Intent table
# ----------------------------------------------------------------------------------------------


def test_table_is_large_enough() -> None:
    assert len(INTENT_CASES) >= 35
    assert len(set(TABLE_QUERIES)) == len(TABLE_QUERIES)


@pytest.mark.parametrize(("query", "expected"), INTENT_CASES)
def test_intent_table(
    extractor: RuleBasedIntentExtractor, planner: RuleBasedPlanner, query: str, expected: Expect
) -> None:
    intent = extractor.extract(query)
    plan = planner.plan(intent)
    got = Expect(
        goal=intent.primary_goal,
        ref=intent.reference_tool,
        matches=intent.matches,
        constraints=intent.constraints,  # type: ignore[arg-type]
        must=intent.must_preserve_terms,
        strategy=plan.strategy,
    )
    assert _normalized(got) == _normalized(expected)


def test_cheaper_than_uses_the_catalog_price(
    extractor: RuleBasedIntentExtractor, catalog_by_id: dict[str, dict]
) -> None:
    for ref in ("cursor", "github-copilot", "windsurf"):
        name = catalog_by_id[ref]["name"]
        intent = extractor.extract(f"cheaper than {name}")
        assert intent.reference_tool == ref
        assert intent.reference_tool_name == name.lower()
        assert _triples(intent.constraints) == [
            ("price_monthly_usd", "lt", float(catalog_by_id[ref]["price_monthly_usd"]))
        ]


def test_compare_keeps_both_tools(extractor: RuleBasedIntentExtractor) -> None:
    for query in ("Cursor vs Windsurf", "Cursor versus Windsurf", "Windsurf vs. Cursor"):
        intent = extractor.extract(query)
        assert intent.primary_goal == "compare", query
        assert sorted(intent.must_preserve_terms) == ["Cursor", "Windsurf"], query


@pytest.mark.parametrize(
    ("query", "vocab", "canonical"),
    [
        ("autocomplete", "functionality", "Code Completion"),
        ("auto-complete", "functionality", "Code Completion"),
        ("code suggestions", "functionality", "Code Completion"),
        ("pr review bot", "functionality", "Code Review"),
        ("vector db", "categories", "Vector Database"),
        ("vector store", "categories", "Vector Database"),
        ("embedding database", "categories", "Vector Database"),
        ("rag", "functionality", "Retrieval-Augmented Generation"),
        ("coding agent", "categories", "Code Assistant"),
        ("terminal", "interface", "CLI"),
        ("podcasters", "user_types", "Content Creators"),
        pytest.param(
            "tts",
            "functionality",
            "Text-to-Speech",
        ),
        pytest.param(
            "speech recognition",
            "functionality",
            "Speech-to-Text",
        ),
    ],
)
def test_synonym_maps_to_canonical_value(
    extractor: RuleBasedIntentExtractor, query: str, vocab: str, canonical: str
) -> None:
    assert canonical in extractor.extract(query).matches.get(vocab, [])


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("on-prem", SELF_HOSTED),
        ("on-premises", SELF_HOSTED),
        ("self hosted", SELF_HOSTED),
        ("selfhosted", SELF_HOSTED),
        ("on my own server", SELF_HOSTED),
        ("offline", LOCAL),
        ("on-device", LOCAL),
        ("air-gapped", LOCAL),
        ("that works locally", LOCAL),
        ("on my machine", LOCAL),
        ("not SaaS", NOT_CLOUD),
        ("no cloud", NOT_CLOUD),
    ],
)
def test_deployment_phrases(
    extractor: RuleBasedIntentExtractor, phrase: str, expected: tuple
) -> None:
    intent = extractor.extract(f"chatbot {phrase}")
    assert _triples(intent.constraints) == [expected]
    assert intent.matches == {"categories": ["Chat Assistant"]}


@pytest.mark.parametrize(
    ("query", "forbidden", "accepted"),
    [
        ("not paid code review tool", ("pricing_model", "in", ["Paid"]), [NOT_PAID]),
        ("vector db, not cloud", ("deployment", "in", ["Cloud"]), [NOT_CLOUD]),
        (
            "image generator, not an IDE",
            ("category", "in", ["IDE"]),
            [("category", "nin", ["IDE"])],
        ),
        pytest.param(
            "LLM API that is not open source",
            OPEN_SOURCE,
            [("open_source", "eq", False), ("pricing_model", "nin", ["Open Source"])],
        ),
        pytest.param(
            "managed vector db, not self-hosted",
            SELF_HOSTED,
            [("deployment", "nin", ["Self-hosted"]), ("deployment", "in", ["Cloud"])],
        ),
    ],
)
def test_negation_is_not_inverted(
    extractor: RuleBasedIntentExtractor, query: str, forbidden: tuple, accepted: list[tuple]
) -> None:
    got = _triples(extractor.extract(query).constraints)
    assert forbidden not in got
    assert any(a in got for a in accepted), got


def test_must_marks_constraints_non_negotiable(extractor: RuleBasedIntentExtractor) -> None:
    strict = extractor.extract("code assistant that must run locally and be open source")
    soft = extractor.extract("code assistant that runs locally and is open source")
    assert (
        _triples(strict.constraints)
        == _triples(soft.constraints)
        == sorted([LOCAL, OPEN_SOURCE], key=repr)
    )
    assert all(c.must for c in strict.constraints)
    assert not any(c.must for c in soft.constraints)


def test_casing_and_punctuation_do_not_change_the_intent(
    extractor: RuleBasedIntentExtractor,
) -> None:
    a = extractor.extract("free autocomplete that works locally, like Cursor")
    b = extractor.extract("  FREE   Autocomplete... that works LOCALLY -- like CURSOR!!!  ")
    for attr in ("primary_goal", "reference_tool", "matches"):
        assert getattr(a, attr) == getattr(b, attr), attr
    assert _triples(a.constraints) == _triples(b.constraints)
    assert a.reference_tool == "cursor"


def test_unicode_quotes_and_apostrophes(extractor: RuleBasedIntentExtractor) -> None:
    curly = extractor.extract("“code review” tool that’s not commercial")
    straight = extractor.extract('"code review" tool that\'s not commercial')
    assert curly.must_preserve_terms == straight.must_preserve_terms == ["code review"]
    assert curly.matches == straight.matches == {"functionality": ["Code Review"]}
    assert _triples(straight.constraints) == [NOT_PAID]


def test_vocabulary_matches_whole_words_only(extractor: RuleBasedIntentExtractor) -> None:
    # "ideal" contains "ide", "garage"/"storage" contain "rag", "rapid" contains "api".
    intent = extractor.extract("ideal storage for my garage, rapid")
    assert intent.matches == {}
    assert intent.constraints == []


def test_no_signal_query_has_low_confidence(extractor: RuleBasedIntentExtractor) -> None:
    none = extractor.extract("xyzzy qwerty")
    rich = extractor.extract("free autocomplete that works locally, like Cursor")
    assert none.primary_goal == "find"
    assert none.reference_tool is None and none.matches == {} and none.constraints == []
    assert none.must_preserve_terms == []
    assert none.confidence < 0.5 < rich.confidence


# ----------------------------------------------------------------------------------------------
# 2. Planner rules
# ----------------------------------------------------------------------------------------------


def _all_top_ks(plan: QueryPlan) -> list[int]:
    ks = [v.top_k for v in plan.vector_sources] + [s.top_k for s in plan.structured_sources]
    if plan.sparse_source:
        ks.append(plan.sparse_source.top_k)
    return ks


@pytest.mark.parametrize("query", TABLE_QUERIES)
def test_plan_rules_hold_for_every_table_query(
    extractor: RuleBasedIntentExtractor,
    planner: RuleBasedPlanner,
    tools_schema: DomainSchema,
    query: str,
) -> None:
    intent = extractor.extract(query)
    plan = planner.plan(intent)
    validate_plan(plan, tools_schema)  # raises PlanError if invalid
    assert plan.domain == tools_schema.name
    assert {v.aspect for v in plan.vector_sources} <= set(tools_schema.aspect_names)
    assert all(TOP_K_MIN <= k <= TOP_K_MAX for k in _all_top_ks(plan))
    assert plan.fusion == fusion_for(plan.source_count)
    if plan.source_count >= 3:
        assert plan.fusion == "rrf"
    # BM25 is always there. Without a reference tool it reads the query plus the must-preserve
    # terms; with one it queries by example: the reference's vocabulary values, never its name
    # (which would favour tools that merely mention it).
    assert plan.sparse_source is not None
    text = plan.sparse_source.text
    ref_name = (intent.reference_tool_name or "").lower()
    if intent.reference_tool:
        # (case-insensitively: a value the variant already says is not written twice)
        low = text.lower()
        assert all(v.lower() in low for vs in intent.reference_profile.values() for v in vs)
        assert ref_name not in text.lower()
        assert all(t in text for t in intent.must_preserve_terms if t.lower() != ref_name)
    else:
        assert query in text
        assert all(t in text for t in intent.must_preserve_terms)
    # Hard constraints are pushed down.
    dumped = [f.model_dump() for f in intent.constraints]
    assert [f.model_dump() for f in plan.filters] == dumped
    for src in plan.structured_sources:
        assert [f.model_dump() for f in src.filters] == dumped
    # A structured source exactly when the intent matched vocabulary values (its own or the
    # reference tool's profile).
    assert bool(plan.structured_sources) == bool(intent.matches or intent.reference_profile)
    # Reference tools: excluded for alternative-to, their stored vectors used.
    ref_sources = [v for v in plan.vector_sources if v.query_vector_source == "reference_tool"]
    if intent.reference_tool:
        assert {v.aspect for v in ref_sources} == {"identity", "functionality", "record"}
        assert all(v.text == intent.reference_tool for v in ref_sources)
    else:
        assert ref_sources == []
    expected_excluded = list(intent.excluded_tools)
    if intent.primary_goal == "alternative-to":
        expected_excluded = [intent.reference_tool, *expected_excluded]
    assert plan.exclude_ids == expected_excluded


@pytest.mark.parametrize(
    "query",
    [
        "chatbot for Linux",
        "IDE under $20 a month",
        "must be open source and self-hosted",
        "tools for Linux",
    ],
)
def test_structured_source_exactly_when_vocabulary_matched(
    extractor: RuleBasedIntentExtractor,
    planner: RuleBasedPlanner,
    tools_schema: DomainSchema,
    query: str,
) -> None:
    intent = extractor.extract(query)
    plan = planner.plan(intent)
    assert len(plan.structured_sources) == (1 if intent.matches else 0)
    matched_fields = {tools_schema.vocabulary_fields[v] for v in intent.matches}
    for src in plan.structured_sources:
        assert src.preferences, "a structured source ranks by the matched values"
        for pref in src.preferences:
            assert pref.field in matched_fields and pref.operator == "in"
        assert [f.model_dump() for f in src.filters] == [f.model_dump() for f in intent.constraints]


def test_alternative_to_excludes_and_uses_reference_vectors(
    extractor: RuleBasedIntentExtractor, planner: RuleBasedPlanner
) -> None:
    plan = planner.plan(extractor.extract("something like Cursor but cheaper"))
    assert plan.exclude_ids == ["cursor"]
    refs = {
        v.aspect: v.text for v in plan.vector_sources if v.query_vector_source == "reference_tool"
    }
    assert refs == {"identity": "cursor", "functionality": "cursor", "record": "cursor"}
    assert [f.label() for f in plan.filters] == ["price_monthly_usd<20"]
    assert plan.fusion == "rrf"


def test_compare_does_not_exclude_the_named_tools(
    extractor: RuleBasedIntentExtractor, planner: RuleBasedPlanner
) -> None:
    plan = planner.plan(extractor.extract("Cursor vs Windsurf"))
    assert plan.exclude_ids == []
    assert plan.sparse_source is not None
    assert "Cursor" in plan.sparse_source.text and "Windsurf" in plan.sparse_source.text


@pytest.mark.parametrize("limit", [1, 10, 60, 100, 200])
def test_top_k_stays_in_bounds_for_any_limit(
    extractor: RuleBasedIntentExtractor,
    planner: RuleBasedPlanner,
    tools_schema: DomainSchema,
    limit: int,
) -> None:
    intent = extractor.extract("free autocomplete for developers on Linux, like Cursor")
    plan = planner.plan(intent, limit=limit)
    validate_plan(plan, tools_schema)
    assert plan.limit == limit
    ks = _all_top_ks(plan)
    assert all(TOP_K_MIN <= k <= TOP_K_MAX for k in ks)
    assert min(ks) >= min(limit, TOP_K_MAX)  # every source can fill the requested limit
    assert plan.source_count >= 3 and plan.fusion == "rrf"


@pytest.mark.parametrize(
    ("count", "fusion"),
    [(0, "none"), (1, "none"), (2, "weighted_sum"), (3, "rrf"), (4, "rrf"), (7, "rrf")],
)
def test_fusion_for(count: int, fusion: str) -> None:
    assert fusion_for(count) == fusion


# ----- validate_plan rejections ---------------------------------------------------------------


@pytest.fixture
def valid_plan(extractor: RuleBasedIntentExtractor, planner: RuleBasedPlanner) -> QueryPlan:
    plan = planner.plan(extractor.extract("free autocomplete tool that works locally"))
    assert plan.source_count >= 3 and plan.fusion == "rrf"
    return plan


def _reasons(plan: QueryPlan, schema: DomainSchema) -> list[str]:
    with pytest.raises(PlanError) as info:
        validate_plan(plan, schema)
    assert isinstance(info.value, ValueError)
    assert all(r in str(info.value) for r in info.value.reasons)
    return info.value.reasons


def test_valid_plan_passes(valid_plan: QueryPlan, tools_schema: DomainSchema) -> None:
    validate_plan(valid_plan, tools_schema)


def test_two_sources_with_weighted_sum_is_valid(tools_schema: DomainSchema) -> None:
    plan = QueryPlan(
        domain="tools",
        strategy="identity-focused",
        vector_sources=[VectorSource(aspect="identity", top_k=30, text="ide")],
        sparse_source=SparseSource(text="ide", top_k=50),
        fusion="weighted_sum",
    )
    validate_plan(plan, tools_schema)


def test_rejects_unknown_aspect(valid_plan: QueryPlan, tools_schema: DomainSchema) -> None:
    bad = valid_plan.model_copy(
        update={
            "vector_sources": [
                *valid_plan.vector_sources,
                VectorSource(aspect="pricing", top_k=30, text="free"),
            ]
        }
    )
    reasons = _reasons(bad, tools_schema)
    assert len(reasons) == 1 and "unknown aspect 'pricing'" in reasons[0]


def test_rejects_top_k_out_of_range(valid_plan: QueryPlan, tools_schema: DomainSchema) -> None:
    over = VectorSource.model_construct(
        aspect="identity", top_k=500, query_vector_source="query_text", text="x", weight=1.0
    )
    bad = valid_plan.model_copy(update={"vector_sources": [*valid_plan.vector_sources, over]})
    reasons = _reasons(bad, tools_schema)
    assert any("topK 500" in r for r in reasons)


def test_rejects_fusion_none_with_several_sources(
    valid_plan: QueryPlan, tools_schema: DomainSchema
) -> None:
    reasons = _reasons(valid_plan.model_copy(update={"fusion": "none"}), tools_schema)
    assert any("fusion 'none'" in r for r in reasons)


def test_rejects_weighted_sum_with_three_sources(
    valid_plan: QueryPlan, tools_schema: DomainSchema
) -> None:
    reasons = _reasons(valid_plan.model_copy(update={"fusion": "weighted_sum"}), tools_schema)
    assert reasons == [
        f"RRF is required for 3+ sources (plan has {valid_plan.source_count}, "
        "fusion 'weighted_sum')"
    ]


@pytest.mark.parametrize("field", ["color", "$where", "features", "description"])
def test_rejects_filter_on_non_schema_or_unfilterable_field(
    valid_plan: QueryPlan, tools_schema: DomainSchema, field: str
) -> None:
    bad_filter = Filter(field=field, operator="eq", value="x")
    bad = valid_plan.model_copy(update={"filters": [*valid_plan.filters, bad_filter]})
    reasons = _reasons(bad, tools_schema)
    assert any(repr(field) in r and "not filterable" in r for r in reasons)


def test_rejects_domain_mismatch(valid_plan: QueryPlan, tools_schema: DomainSchema) -> None:
    reasons = _reasons(valid_plan.model_copy(update={"domain": "documents"}), tools_schema)
    assert reasons == ["plan is for domain 'documents', schema is 'tools'"]


def test_rejects_plan_without_sources(tools_schema: DomainSchema) -> None:
    plan = QueryPlan(domain="tools", strategy="identity-focused", fusion="none")
    assert any("no sources" in r for r in _reasons(plan, tools_schema))


def test_lists_every_reason(valid_plan: QueryPlan, tools_schema: DomainSchema) -> None:
    bad = valid_plan.model_copy(
        update={
            "domain": "documents",
            "fusion": "none",
            "vector_sources": [
                *valid_plan.vector_sources,
                VectorSource(aspect="pricing", top_k=30, text="free"),
            ],
            "filters": [Filter(field="color", operator="eq", value="red")],
        }
    )
    reasons = _reasons(bad, tools_schema)
    expected_fragments = [
        "domain 'documents'",
        "unknown aspect 'pricing'",
        "field 'color' is not filterable",
        "fusion 'none' needs exactly one source",
        "RRF is required for 3+ sources",
    ]
    for fragment in expected_fragments:
        assert sum(fragment in r for r in reasons) == 1, (fragment, reasons)
    assert len(reasons) == len(expected_fragments)


# ----------------------------------------------------------------------------------------------
# 3. Errors and limits
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "",
        " ",
        "   \n\t  ",
        "a" * (QUERY_MAX_CHARS + 1),
        "free " * (QUERY_MAX_CHARS // 5 + 1),
        " " * (QUERY_MAX_CHARS + 1),
    ],
    ids=["empty", "space", "whitespace", "max+1-chars", "max+5-chars-words", "max+1-spaces"],
)
def test_rejects_empty_or_overlong_query(extractor: RuleBasedIntentExtractor, query: str) -> None:
    with pytest.raises(ValueError, match=rf"empty|over {QUERY_MAX_CHARS}"):
        extractor.extract(query)


def _python_calls(work: Callable[[], Any]) -> tuple[int, Any]:
    """``work()`` run twice (the first warms any cache); the Python function calls the second
    made, and its result."""
    work()
    calls = 0

    def count(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        calls += event == "call"

    sys.setprofile(count)
    try:
        out = work()
    finally:
        sys.setprofile(None)
    return calls, out


@pytest.mark.parametrize("token", ["a", "free ", "not ", "cursor ", "vs ", "under $", "rag ", "“"])
def test_max_length_query_of_one_repeated_token_is_linear(
    extractor: RuleBasedIntentExtractor,
    planner: RuleBasedPlanner,
    tools_schema: DomainSchema,
    token: str,
) -> None:
    """The work on a max-length query grows linearly with its length: the Python calls made
    for 4,000 characters are at most twice the per-character rate of 400 (a quadratic walk
    over the tokens makes ~10x the rate). Counted, not timed, so machine load cannot trip it;
    the wall-clock figure is ``benchmarks/query_rules.py``."""
    query = (token * QUERY_MAX_CHARS)[:QUERY_MAX_CHARS]
    assert QUERY_MAX_CHARS == 4000 and len(query) == 4000
    short = query[: QUERY_MAX_CHARS // 10]
    short_calls, _ = _python_calls(lambda: planner.plan(extractor.extract(short)))
    calls, (intent, plan) = _python_calls(lambda: (i := extractor.extract(query), planner.plan(i)))
    assert calls <= 2 * 10 * short_calls, (calls, short_calls)
    assert intent.query == query
    validate_plan(plan, tools_schema)
    # Repetition never multiplies constraints or preserved terms.
    assert len(intent.constraints) <= 1
    assert len(intent.must_preserve_terms) <= 1


def test_dense_sources_embed_the_query_as_written(
    extractor: RuleBasedIntentExtractor, planner: RuleBasedPlanner
) -> None:
    """GIVEN a query with filler and constraint words (its semantic variant strips them)
    THEN every text-embedded dense source embeds the query as written (stripping cost nDCG
    wherever measured); the variant stays for keyword use only. A query by example ("like
    Cursor but ...") still embeds its variant, which leaves the reference's name out."""
    query = "I need a free speech to text tool that runs on Linux"
    intent = extractor.extract(query)
    assert intent.semantic_variants and intent.semantic_variants[0] != query
    texts = {(v.text, v.query_vector_source) for v in planner.plan(intent).vector_sources}
    assert texts == {(query, "query_text")}
    by_example = extractor.extract("something like Cursor for writing python tests")
    assert by_example.semantic_variants
    embedded = {
        v.text
        for v in planner.plan(by_example).vector_sources
        if v.query_vector_source != "reference_tool"
    }
    assert embedded == {by_example.semantic_variants[0]}


@pytest.mark.parametrize(
    ("query", "embedded"),
    [
        # the golden set's three negated queries (g18, g19, g39)
        (
            "infrastructure as code tool that is not Terraform",
            "infrastructure as code tool that is",
        ),
        ("AI video generator that is not paid", "AI video generator that is"),
        ("transcription API, not a desktop app", "transcription API"),
        ("speech to text that is not cloud based, with speaker labels", None),
    ],
)
def test_dense_sources_leave_negated_phrases_out(
    extractor: RuleBasedIntentExtractor, planner: RuleBasedPlanner, query: str, embedded: str | None
) -> None:
    """GIVEN a query that says what it does NOT want ("not Terraform", "not paid")
    THEN the negation is a hard filter and the dense sources embed the query as written less
    that phrase: an embedding has no negation, so "not Terraform" pulled the query vector
    toward Terraform's neighbours (golden Recall@5 0.870 -> 0.858 when the dense sources
    started embedding the query as written; g18 1.0 -> 0.67)."""
    intent = extractor.extract(query)
    assert intent.negations, intent
    texts = {v.text for v in planner.plan(intent).vector_sources}
    assert len(texts) == 1
    (text,) = texts
    assert text is not None
    for phrase in intent.negations:
        assert phrase not in text.casefold()
    if embedded is not None:
        assert text == embedded


#: A pasted paragraph (the tools queries' para-04 style): vocabulary words said in passing and
#: "free or open source preferred, a paid plan could be considered", which the rules read as
#: hard filters.
PARAGRAPH = (
    "I lead a machine learning research group of eight PhD students and two engineers at a "
    "university. Each student trains dozens of deep learning models a week on our shared GPU "
    "cluster, and the results live in spreadsheets, terminal logs and folders, so nobody can "
    "tell which hyperparameters produced the numbers in a paper draft. We need a way to log "
    "every training run automatically from our scripts, with metrics, parameters and the code "
    "version, to compare runs side by side in a web dashboard, and to register the models we "
    "publish. The budget is close to zero, so a free or open-source tool is strongly preferred, "
    "although a paid plan with an academic discount and a self-hosted option could be considered."
)


def test_a_long_query_searches_what_hybrid_retrieval_searches(
    extractor: RuleBasedIntentExtractor, planner: RuleBasedPlanner, tools_schema: DomainSchema
) -> None:
    """GIVEN a pasted paragraph (more content words than any question: 24)
    THEN round 1's lists are plain hybrid retrieval's: the first aspect's and the whole
    record's dense sources and BM25, all on the text as written, no structured source and no
    filters read from it (the rules took "strongly preferred ... a paid plan could be
    considered" as three hard filters that removed relevant paid tools; tools queries tuning
    split: the executor's paragraphs were below hybrid-rrf's). A short query with the same
    constraint words keeps them."""
    intent = extractor.extract(PARAGRAPH)
    assert intent.constraints and intent.matches  # what the rules read: kept on the intent
    plan = planner.plan(intent, limit=100)
    assert [(v.aspect, v.query_vector_source, v.text) for v in plan.vector_sources] == [
        (tools_schema.aspect_names[0], "query_text", PARAGRAPH),
        (tools_schema.record_aspect, "query_text", PARAGRAPH),
    ]
    assert plan.sparse_source is not None and plan.sparse_source.text == PARAGRAPH
    assert plan.structured_sources == [] and plan.filters == []
    short = planner.plan(extractor.extract("free or open-source experiment tracking tool"))
    assert short.filters
