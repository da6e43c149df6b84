"""A domain's tuning: one typed home (`logic/tuning.py`), read where each rule is.

GIVEN the tools schema and a copy whose `tuning:` block changes one knob WHEN the rule that
knob tunes runs on each THEN what it decides differs (every knob is listed, and the list is
checked against the model: a knob no rule reads, or one read from somewhere else, fails here).
GIVEN logic/ WHEN read THEN the module constants and the literal arithmetic the tuning replaced
are gone. GIVEN a YAML with a partial `tuning:` block WHEN loaded THEN its keys are set and the
rest keep their defaults; an unknown key or a value out of bounds is a one-line error naming it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.builders import LOCAL, ev, plan_with
from support.paths import REPO

from agentic_search.config import Settings
from agentic_search.dependencies import Dependencies
from agentic_search.logic.coverage import DeterministicGrader, EvidenceMatcher
from agentic_search.logic.entities import EntityIndex
from agentic_search.logic.executor import executor_gate, prepare_round_queries
from agentic_search.logic.executor.entity_rounds import bridges_from
from agentic_search.logic.intent import CatalogLookup, with_addons
from agentic_search.logic.intent_rules import RuleBasedIntentExtractor
from agentic_search.logic.linking import QueryLinker
from agentic_search.logic.plan_rules import top_k
from agentic_search.logic.planner import RuleBasedPlanner
from agentic_search.logic.schema import DomainSchema, SchemaError, load_schema
from agentic_search.logic.text import default_analyzer
from agentic_search.logic.tuning import ExecutorTuning, Tuning
from agentic_search.pipeline.plan_query import plan_query
from agentic_search.sync.files import bundled_catalog_path, read_catalog
from agentic_search.wire import (
    CoverageTarget,
    EntityLink,
    ExecutorCaps,
    IntentState,
    QueryPlan,
    SearchRequest,
    SearchState,
)

LOGIC = REPO / "layers" / "core" / "agentic_search" / "logic"
TOOLS = load_schema("tools")
AN = default_analyzer()


def tuned(key: str, value: Any, schema: DomainSchema = TOOLS) -> DomainSchema:
    """``schema`` with ``tuning.<group>.<knob>`` (``key`` = "group.knob") set to ``value``,
    validated as a YAML's block would be."""
    group, knob = key.split(".")
    return DomainSchema.model_validate({**schema.model_dump(), "tuning": {group: {knob: value}}})


def every_knob() -> list[str]:
    """``group.knob`` of every field of the tuning model."""
    return [
        f"{group}.{knob}"
        for group, field in Tuning.model_fields.items()
        for knob in field.default_factory.model_fields  # type: ignore[union-attr]
    ]


# ----- the probes: each runs the rule a knob tunes, on a schema -----------------------------


def grading(schema: DomainSchema) -> float:
    """The coverage confidence of a part-covered request (every kind of target, some
    covered, some not), evidence found by two modes and by one, and one contradiction."""
    targets = [
        CoverageTarget(kind="constraint", label=LOCAL.label(), filter=LOCAL),
        CoverageTarget(kind="phrase", label='"pair programmer"', text="pair programmer"),
        CoverageTarget(kind="entity", label="Zed", values=["zed"], text="Zed", must=True),
        CoverageTarget(
            kind="preference",
            label="functionality ~ Code Completion",
            field="functionality",
            values=["Code Completion"],
        ),
        CoverageTarget(kind="term", label="vim", text="vim"),
        CoverageTarget(kind="term", label="run", text="run"),
    ]
    e1 = ev(
        "e1",
        doc="d1",
        text="An AI pair programmer",
        fields={"deployment": ["Local"], "pricing_model": "Free"},
        modes=["dense:identity", "sparse"],
    )
    e2 = ev(
        "e2",
        doc="d1",
        text="in vim",
        fields={"pricing_model": "Paid"},
        modes=["dense:identity"],
    )
    grader = DeterministicGrader(schema, EvidenceMatcher(schema, AN))
    return grader.grade(targets, [e1, e2]).confidence


def intent_confidence(query: str) -> Callable[[DomainSchema], float]:
    def probe(schema: DomainSchema) -> float:
        return RuleBasedIntentExtractor(schema, LOOKUP()).extract(query).confidence

    return probe


def plan_confidence(schema: DomainSchema) -> float:
    intent = IntentState(query="vim", normalized_query="vim", keywords=["vim"], confidence=0.5)
    return RuleBasedPlanner(schema).plan(intent).confidence


#: The fuzzy linker's fixture: two one-word names (one of four letters), the corpus's words.
NAMES = EntityIndex({"bonn": ["bonn"], "mgrs": ["mgrs"], "babel": ["babel"]})
KNOWN = {"born", "life", "tabl", "pdf", "extract"}


def linking(query: str) -> Callable[[DomainSchema], Any]:
    def probe(schema: DomainSchema) -> Any:
        linker = QueryLinker(
            NAMES,
            {"bonn": "Bonn", "mgrs": "MGRS", "babel": "Babel"},
            {},
            lambda ts: {t for t in ts if t in KNOWN},
            AN,
            tuning=schema.tuning.linking,
        )
        got = linker.link(query)
        return [lk.id for lk in got.links], got.corrections

    return probe


def gate(intent: IntentState, schema: DomainSchema) -> QueryPlan:
    return executor_gate(plan_with(), intent, schema).plan


def named_fetch(schema: DomainSchema) -> Any:
    """The records fetched by name for a comparison whose links score 0.85."""
    links = [
        EntityLink(id=i, name=i.title(), surface=i, score=0.85) for i in ("cursor", "windsurf")
    ]
    intent = IntentState(
        query="cursor vs windsurf",
        normalized_query="cursor vs windsurf",
        primary_goal="compare",
        entities=links,
    )
    source = gate(intent, schema).entity_source
    return source.ids if source else None


def alternatives(attr: str) -> Callable[[DomainSchema], Any]:
    def probe(schema: DomainSchema) -> Any:
        intent = IntentState(
            query="alternative to cursor",
            normalized_query="alternative to cursor",
            primary_goal="alternative-to",
            reference_tool="cursor",
            reference_tool_name="Cursor",
        )
        walk = gate(intent, schema).graph_source
        assert walk is not None
        return getattr(walk, attr)

    return probe


def bridge_walk(attr: str) -> Callable[[DomainSchema], Any]:
    """The bridge round's walk after a round 1 that ranked thirty records (limit 10)."""

    def probe(schema: DomainSchema) -> Any:
        query = "Who directed the film that Shirley Temple starred in?"
        intent = IntentState(query=query, normalized_query=query.lower(), bridge=True)
        state = executor_gate(plan_with(), intent, schema)
        state.round_index = 1
        state.round_rankings = [[f"d{i}" for i in range(30)]]
        plan, _ = prepare_round_queries(state, schema)
        assert plan is not None and plan.graph_source is not None
        return getattr(plan.graph_source, attr)

    return probe


def bridges(schema: DomainSchema) -> list[str]:
    hits = [("x", 0.9, "mention:d0"), ("y", 0.8, "mention:d1"), ("z", 0.7, "mention:d0")]
    return [b.id for b in bridges_from(hits, ["d0", "d1"], schema.tuning.graph)]


def planned(source: str, limit: int) -> Callable[[DomainSchema], int]:
    """The depth the rule-based planner gives a source of a query that matches a
    preference vocabulary ("code completion": a structured source too)."""

    def probe(schema: DomainSchema) -> int:
        intent = RuleBasedIntentExtractor(schema, LOOKUP()).extract("code completion for vim")
        plan = RuleBasedPlanner(schema).plan(intent, limit=limit)
        if source == "sparse":
            assert plan.sparse_source is not None
            return plan.sparse_source.top_k
        if source == "structured":
            return plan.structured_sources[0].top_k
        return max(v.top_k for v in plan.vector_sources)

    return probe


def caps(knob: str) -> Callable[[DomainSchema], Any]:
    """The knob as PlanQuery leaves it in the executor's state (the pipeline's own path)."""

    def probe(schema: DomainSchema) -> Any:
        state = SearchState(
            request=SearchRequest(query="code completion", limit=7),
            intent=IntentState(query="code completion", normalized_query="code completion"),
            plan=plan_with(),  # (as from the plan cache: no planner, no store)
        )
        deps = Dependencies(Settings(llm="off"), schema, llm=None, reranker=None, hyde=None)
        executor = plan_query(state, deps).executor
        assert executor is not None
        return getattr(executor.caps, knob)

    return probe


_lookup: list[CatalogLookup] = []


def LOOKUP() -> CatalogLookup:
    """The bundled catalog's lookup (as tests/conftest.py's ``catalog_lookup``): the
    reference of "alternative to Cursor", the words the corpus knows."""
    if not _lookup:
        records = read_catalog(bundled_catalog_path(), TOOLS).records
        words = {t for r in records for t in AN.terms(" ".join(map(str, r.values())))}
        known = lambda terms: {t for t in terms if t in words}  # noqa: E731
        _lookup.append(CatalogLookup.of(TOOLS, records, known=known, analyzer=AN))
    return _lookup[0]


#: Thirteen names open with the brand word "Amazon" (13 of 23: a share of 0.57).
BRANDED = {f"b{i}": f"Amazon Thing{i}" for i in range(12)} | {"dynamodb": "Amazon DynamoDB"}
BRANDED |= {f"p{i}": f"Plain{i} Tool" for i in range(10)}
BRANDED |= {"streams": "DynamoDB Streams", "dax": "DynamoDB Accelerator"}


def short_link(schema: DomainSchema) -> list[str]:
    rows = [{"id": rid, "name": name} for rid, name in BRANDED.items()]
    lookup = CatalogLookup.of(schema, rows)
    assert lookup.linker is not None
    return [lk.id for lk in lookup.linker.link("alternative to DynamoDB").entities]


def derivatives(schema: DomainSchema) -> list[str]:
    lookup = CatalogLookup.of(schema, [{"id": r, "name": n} for r, n in BRANDED.items()])
    intent = RuleBasedIntentExtractor(schema, lookup).extract("alternative to DynamoDB")
    return with_addons(intent, lookup, schema.tuning.graph.max_addons).reference_addons


RICH = "free code completion that works locally for Linux in the terminal with speech to text"

#: Every knob: a value other than its default, and the rule that reads it.
PROBES: dict[str, tuple[Any, Callable[[DomainSchema], Any]]] = {
    "coverage.covered_weight": (0.5, grading),
    "coverage.quality_weight": (0.5, grading),
    "coverage.contradiction_penalty": (0.3, grading),
    "coverage.constraint_weight": (7.0, grading),
    "coverage.phrase_weight": (7.0, grading),
    "coverage.entity_weight": (7.0, grading),
    "coverage.preference_weight": (7.0, grading),
    "coverage.term_weight": (7.0, grading),
    "intent.base": (0.2, intent_confidence("code completion for vim")),
    "intent.per_vocabulary": (0.3, intent_confidence("code completion for vim")),
    "intent.vocabularies_counted": (1, intent_confidence(RICH)),
    "intent.reference": (0.3, intent_confidence("free alternative to Cursor")),
    "intent.per_constraint": (0.2, intent_confidence("free alternative to Cursor")),
    "intent.constraints_counted": (1, intent_confidence(RICH)),
    "intent.cap": (0.8, intent_confidence(RICH)),
    "intent.keywords_only": (0.2, intent_confidence("blorp zindle")),
    "intent.nothing": (0.2, intent_confidence("the of a")),
    "intent.plan_base": (0.3, plan_confidence),
    "intent.plan_per_intent": (0.2, plan_confidence),
    "intent.plan_cap": (0.6, plan_confidence),
    "linking.fuzzy_min_score": (0.9, linking("who was born in bonnn")),
    "linking.capitalized_min_score": (0.7, linking("life on Mars")),
    "linking.ordinary_min_letters": (6, linking("pdf tabel extraction")),
    "linking.brand_prefix_min_share": (0.6, short_link),
    "linking.brand_prefix_min_names": (14, short_link),
    "graph.min_link_score": (0.9, named_fetch),
    "graph.alternatives_weight": (3.0, alternatives("weight")),
    "graph.max_addons": (1, derivatives),
    "graph.graph_top_k": (20, alternatives("top_k")),
    "graph.bridge_seeds": (5, bridge_walk("seeds")),
    "graph.bridge_window": (5, bridge_walk("exclude")),
    "graph.bridge_max_mentions": (7, bridge_walk("max_mentions")),
    "graph.bridges_placed": (2, bridges),
    "depth.dense_per_result": (3, planned("dense", 60)),
    "depth.structured_per_result": (3, planned("structured", 40)),
    "depth.structured_least": (40, planned("structured", 10)),
    "depth.sparse_per_result": (4, planned("sparse", 40)),
    "depth.sparse_least": (70, planned("sparse", 10)),
    # every planner gives a dense source a floor of its own (an aspect's default_top_k, a
    # later round's): the kind's least is the rule's, for a dense source asked without one
    "depth.dense_least": (40, lambda s: top_k(s.tuning.depth, 10, "dense")),
    "executor.max_docs": (12, caps("max_docs")),
    "executor.max_total_tokens": (4096, caps("max_total_tokens")),
    "executor.max_chunks_per_doc": (3, caps("max_chunks_per_doc")),
    "executor.confidence_threshold": (0.9, caps("confidence_threshold")),
    "executor.max_no_new_rounds": (2, caps("max_no_new_rounds")),
    "executor.selection_pool": (40, caps("selection_pool")),
    "executor.rerank_top_n": (20, caps("rerank_top_n")),
    "executor.mmr_lambda": (0.5, caps("mmr_lambda")),
    "executor.feedback_docs": (5, caps("feedback_docs")),
    "executor.feedback_terms": (20, caps("feedback_terms")),
    "executor.feedback_vector": ("rocchio", caps("feedback_vector")),
    "executor.rocchio_alpha": (0.6, caps("rocchio_alpha")),
    "executor.later_round_weight": (0.5, caps("later_round_weight")),
    "executor.snippet_chars": (600, caps("snippet_chars")),
}


def test_every_knob_has_a_probe() -> None:
    assert sorted(PROBES) == sorted(every_knob())


@pytest.mark.parametrize("key", sorted(PROBES))
def test_a_knob_set_on_the_schema_changes_what_its_rule_decides(key: str) -> None:
    value, probe = PROBES[key]
    group, knob = key.split(".")
    assert getattr(getattr(TOOLS.tuning, group), knob) != value  # (a change, not the default)
    assert probe(tuned(key, value)) != probe(TOOLS), key


def test_the_defaults_decide_as_the_rules_did() -> None:
    """The defaults are the values the rules had: the arithmetic as it was written."""
    # covered: the constraint and the phrase (e1), the term vim (e2): 7 of 13
    assert grading(TOOLS) == round(0.85 * (7 / 13) + 0.15 * (1 / 2) - 0.1 * 1, 4)
    assert intent_confidence("code completion for vim")(TOOLS) == 0.5  # 0.35 + 0.15
    assert intent_confidence(RICH)(TOOLS) == 0.9  # 0.35 + 0.15 * 3 + 0.05 * 2
    assert intent_confidence("blorp zindle")(TOOLS) == 0.3
    assert intent_confidence("the of a")(TOOLS) == 0.1
    assert plan_confidence(TOOLS) == 0.75  # 0.5 + 0.5 * 0.5
    assert linking("who was born in bonnn")(TOOLS) == (["bonn"], {})
    assert linking("life on Mars")(TOOLS) == ([], {})
    assert linking("pdf tabel extraction")(TOOLS) == ([], {"tabel": "table"})
    assert short_link(TOOLS) == ["dynamodb"]
    assert derivatives(TOOLS) == ["streams", "dax"]  # shortest names first
    assert named_fetch(TOOLS) == ["cursor", "windsurf"]
    assert (alternatives("weight")(TOOLS), alternatives("top_k")(TOOLS)) == (2.0, 30)
    assert bridge_walk("seeds")(TOOLS) == ["d0", "d1", "d2"]
    assert bridge_walk("exclude")(TOOLS) == [f"d{i}" for i in range(10)]
    assert bridge_walk("max_mentions")(TOOLS) == 3
    assert bridges(TOOLS) == ["x"]
    assert planned("sparse", 10)(TOOLS) == 50 and planned("sparse", 40)(TOOLS) == 120
    assert planned("structured", 10)(TOOLS) == 30 and planned("structured", 40)(TOOLS) == 80
    assert planned("dense", 60)(TOOLS) == 120
    assert caps("max_docs")(TOOLS) == ExecutorCaps().max_docs


def test_the_request_and_the_settings_keep_their_own_caps() -> None:
    """PlanQuery takes the rounds, the pack size and the budget from the request and the
    settings, the later dense weight from the calibration, whatever the tuning says."""
    schema = tuned("executor.max_docs", 12)
    assert caps("max_total_docs")(schema) == 7  # the request's limit
    assert caps("max_rounds")(schema) == Settings(llm="off").max_rounds
    assert caps("round_budget_ms")(schema) == Settings(llm="off").round_budget_ms
    assert caps("later_dense_weight")(schema) == schema.later_dense_weight_for(
        Settings(llm="off").embedder_model
    )


def test_the_gate_without_caps_takes_the_schemas_tuning() -> None:
    intent = IntentState(query="vim", normalized_query="vim")
    state = executor_gate(plan_with(), intent, tuned("executor.selection_pool", 44))
    assert state.caps.selection_pool == 44


def test_a_threshold_set_on_the_schema_changes_when_the_rounds_stop() -> None:
    """Past the state: the stopping rule reads the threshold the tuning put in the caps."""
    from agentic_search.logic.executor import should_continue

    decisions = []
    for schema in (TOOLS, tuned("executor.confidence_threshold", 0.95)):
        state = executor_gate(plan_with(), IntentState(query="q", normalized_query="q"), schema)
        state.round_index = 1
        state.coverage = state.coverage.model_copy(update={"confidence": 0.9})
        decisions.append(should_continue(state, ["new"], 1.0, True)[0])
    assert decisions == [False, True]


def test_the_executor_group_is_executor_caps_own_fields() -> None:
    """Not a second definition: each knob has ExecutorCaps' default, type and bounds, and
    every ExecutorCaps field is a knob or one of the request's."""
    per_request = {"max_rounds", "max_total_docs", "round_budget_ms", "later_dense_weight"}
    assert set(ExecutorTuning.model_fields) == set(ExecutorCaps.model_fields) - per_request
    for name, knob in ExecutorTuning.model_fields.items():
        wire = ExecutorCaps.model_fields[name]
        assert (knob.default, knob.annotation, knob.description) == (
            wire.default,
            wire.annotation,
            wire.description,
        ), name
        assert knob.metadata == wire.metadata, name
    assert ExecutorTuning().caps() == ExecutorCaps()


def test_every_knob_is_described_and_bounded() -> None:
    for group, field in Tuning.model_fields.items():
        assert field.description, group
        for name, knob in field.default_factory.model_fields.items():  # type: ignore[union-attr]
            assert knob.description, f"{group}.{name}"
            if knob.annotation in (int, float, "int", "float"):
                kinds = {type(m).__name__ for m in knob.metadata}
                assert kinds & {"Ge", "Gt"} and "Le" in kinds, f"{group}.{name}: {kinds}"


# ----- the constants are gone from logic/ ---------------------------------------------------

REMOVED = [
    r"\bFUZZY_MIN_SCORE\b",
    r"\bCAPITALIZED_MIN_SCORE\b",
    r"\bORDINARY_MIN_LETTERS\b",
    r"\bMIN_LINK_SCORE\b",
    r"\bBRIDGE_SEEDS\b",
    r"\bBRIDGE_MAX_MENTIONS\b",
    r"\bBRIDGES_PLACED\b",
    r"\bGRAPH_TOP_K\b",
    r"\bALTERNATIVES_WEIGHT\b",
    r"\bBRIDGE_WINDOW\b",
    r"\bDEPTH\b",
    # the arithmetic itself, as it was written
    r"0\.85\s*\*\s*ratio",
    r"0\.15\s*\*\s*quality",
    r"0\.1\s*\*\s*len\(contradictions\)",
    r"confidence\s*=\s*0\.35",
    r"0\.15\s*\*\s*min\(",
    r"0\.05\s*\*\s*min\(",
    r"0\.3 if keywords else 0\.1",
    r"min\(0\.95",
    r"0\.5\s*\+\s*0\.5\s*\*",
    r'"preference":\s*2\.0',
    r"\bt\.weight\b",
    r"\"sparse\":\s*\(3,\s*50\)",
]


def _code(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("pattern", REMOVED)
def test_a_replaced_constant_or_formula_is_nowhere_in_logic(pattern: str) -> None:
    found = [
        f"{p.relative_to(LOGIC)}:{n}"
        for p in sorted(LOGIC.rglob("*.py"))
        if p.name != "tuning.py"
        for n, line in enumerate(_code(p).splitlines(), 1)
        if re.search(pattern, line)
    ]
    assert found == [], found


def test_the_coverage_weights_are_no_property_of_the_wire_target() -> None:
    assert not hasattr(CoverageTarget, "weight")


def test_the_scan_reads_the_files_the_constants_were_in() -> None:
    assert {"linking.py", "coverage.py", "plan_rules.py", "planner.py"} <= {
        p.name for p in LOGIC.rglob("*.py")
    }
    assert "tuning.graph" in _code(LOGIC / "executor" / "entity_rounds.py")


# ----- the YAML block ------------------------------------------------------------------------

DOMAIN = """\
name: recipes
version: "1.0.0"
id_field: id
title_field: title
text_field: text
fields:
  id: {type: string, required: true}
  title: {type: string}
  text: {type: string, required: true}
aspects:
  - name: content
    fields: [title, text]
keyword_fields: [title, text]
"""


def _load(tmp_path: Path, block: str) -> DomainSchema:
    path = tmp_path / "recipes.yaml"
    path.write_text(DOMAIN + block, encoding="utf-8")
    return load_schema(path)


def test_a_partial_block_sets_its_keys_and_leaves_the_rest(tmp_path: Path) -> None:
    schema = _load(
        tmp_path,
        "tuning:\n  coverage: {term_weight: 2}\n  executor:\n    max_docs: 12\n"
        "    feedback_vector: embed\n",
    )
    t = schema.tuning
    assert t.coverage.term_weight == 2.0 and t.coverage.preference_weight == 2.0
    assert (t.executor.max_docs, t.executor.feedback_vector) == (12, "embed")
    assert t.graph == Tuning().graph and t.depth == Tuning().depth
    assert t.overrides() == {
        "coverage": {"term_weight": 2.0},
        "executor": {"max_docs": 12, "feedback_vector": "embed"},
    }
    # without the block: the defaults
    assert _load(tmp_path, "").tuning == Tuning()


@pytest.mark.parametrize(
    ("block", "named"),
    [
        ("tuning:\n  coverage: {term_weightt: 2}\n", "tuning.coverage.term_weightt"),
        ("tuning:\n  speed: {fast: true}\n", "tuning.speed"),
        ("tuning:\n  executor: {max_docs: 0}\n", "tuning.executor.max_docs"),
        ("tuning:\n  linking: {fuzzy_min_score: 1.5}\n", "tuning.linking.fuzzy_min_score"),
        ("tuning:\n  executor: {feedback_vector: both}\n", "tuning.executor.feedback_vector"),
        ("tuning:\n  graph: {graph_top_k: 100}\n", "tuning.graph.graph_top_k"),
    ],
)
def test_an_unknown_key_or_a_value_out_of_bounds_is_one_line_naming_it(
    tmp_path: Path, block: str, named: str
) -> None:
    with pytest.raises(SchemaError) as exc:
        _load(tmp_path, block)
    message = str(exc.value)
    assert "\n" not in message and f"{named}:" in message, message


def test_the_fingerprint_covers_a_changed_knob_only(tmp_path: Path) -> None:
    """The caches are keyed by the fingerprint: a changed knob changes the answers, so it
    changes the key; the defaults (written out or not) keep the fingerprint they had."""
    plain = _load(tmp_path, "")
    same = _load(tmp_path, "tuning:\n  coverage: {term_weight: 1.0}\n")
    changed = _load(tmp_path, "tuning:\n  coverage: {term_weight: 2}\n")
    assert plain.fingerprint == same.fingerprint != changed.fingerprint


def test_a_plain_schema_keeps_the_fingerprint_it_had_before_the_tuning() -> None:
    """The fingerprint of a schema on the defaults is its content without the tuning, as it
    was computed before the tuning existed (cached answers and events stay valid)."""
    import hashlib
    import json

    content = TOOLS.model_dump(mode="json", exclude={"tuning", "access"})
    blob = json.dumps(content, sort_keys=True).encode()
    assert TOOLS.fingerprint == hashlib.sha256(blob).hexdigest()[:16]


def test_the_documents_domain_is_on_the_defaults_too() -> None:
    assert load_schema("documents").tuning == Tuning() == TOOLS.tuning
