"""End-to-end golden-set tests over the bundled tools catalog (real embedded stores, no mocks).

The golden queries (``cli/agentic_search_cli/data/tools_golden.jsonl``) were written as a
user would phrase them, and their ``relevant`` lists were chosen by reading the catalog, not
the engine's output.
Fault injection happens only at the adapter edge (a keyword index or an embedder that raises).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agentic_search.logic.filters import matches
from agentic_search.logic.schema import DomainSchema
from agentic_search.service import SearchService
from agentic_search.wire import SearchResponse

GOLDEN_PATH = Path(str(resources.files("agentic_search_cli") / "data" / "tools_golden.jsonl"))
GOLDEN: list[dict[str, Any]] = [
    json.loads(line)
    for line in GOLDEN_PATH.read_text(encoding="utf-8").splitlines()
    if line.strip()
]
GOLDEN_BY_QUERY = {g["query"]: g for g in GOLDEN}

LIMIT = 10
TOP = 5
# Measured mean Recall@5 over the 55 golden queries: 0.867 (rule-based intent, local MiniLM,
# bm25s, RRF, the entity-aware rounds; benchmarks/golden.py, 2026-11-24). The threshold sits a
# little below it so a ranking regression fails.
RECALL_AT_5_THRESHOLD = 0.83

# Golden queries the engine is known to get wrong on hard constraints (strict: once the engine is
# fixed the XPASS fails, and the entry must be removed).
KNOWN_CONSTRAINT_BUGS: dict[str, str] = {}

LOCAL_CODE_QUERY = "AI code completion tools that work locally"
FREE_CURSOR_QUERY = "free alternative to Cursor"


# ----- helpers -----------------------------------------------------------------------------------


def top_ids(response: SearchResponse, k: int = TOP) -> list[str]:
    """Ids of the first ``k`` candidates."""
    return [c.id for c in response.output.candidates[:k]]


def recall_at(relevant: Sequence[str], ranked: Sequence[str], k: int = TOP) -> float:
    """|relevant ∩ top-k| / min(|relevant|, k)."""
    found = set(relevant) & set(ranked[:k])
    return len(found) / min(len(relevant), k)


def recall_table(rows: list[tuple[str, float, str, list[str], list[str]]]) -> str:
    """One line per query, weakest first: id, recall, query, top-5, expected."""
    lines = [f"{'id':<4} {'R@5':>5}  query -> top-5 | expected"]
    for gid, rec, query, got, expected in sorted(rows, key=lambda r: (r[1], r[0])):
        lines.append(f"{gid:<4} {rec:5.2f}  {query!r} -> {got} | {expected}")
    return "\n".join(lines)


def excluded_reference(response: SearchResponse) -> set[str]:
    """Ids the query excludes: the plan's exclusions and an alternative-to reference tool."""
    out = set(response.plan.exclude_ids)
    if response.intent.primary_goal == "alternative-to" and response.intent.reference_tool:
        out.add(response.intent.reference_tool)
    return out


# ----- fault-injection adapters ------------------------------------------------------------------


class FailingKeywordIndex:
    """A keyword index whose search always raises (adapter-edge fault injection)."""

    name = "failing-bm25"

    def search(self, schema: DomainSchema, text: str, top_k: int, *args: Any) -> list[Any]:
        raise RuntimeError("keyword index unavailable")

    def refresh(self, schema: DomainSchema) -> None:
        return None

    def sparse_vector(self, text: str) -> None:
        return None

    def term_presence(self, *args: Any) -> dict[str, set[str]]:
        return {}

    def known_terms(self, *args: Any) -> set[str] | None:
        return None


class FailingEmbedder:
    """An embedder with the real one's name and dimension whose calls always raise."""

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = dim

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        raise RuntimeError("embedding service unavailable")

    def embed_query(self, text: str) -> np.ndarray:
        raise RuntimeError("embedding service unavailable")


# ----- fixtures ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def golden_responses(tools_engine: SearchService) -> dict[str, SearchResponse]:
    """Every golden query searched once (limit 10), keyed by golden id."""
    return {g["id"]: tools_engine.search(g["query"], limit=LIMIT) for g in GOLDEN}


# ----- the golden set itself ---------------------------------------------------------------------


def test_golden_set_is_well_formed(catalog_by_id: dict[str, dict]) -> None:
    # GIVEN the golden file
    # THEN it holds 30+ unique queries whose ids all exist in the catalog
    assert len(GOLDEN) >= 30
    assert len({g["id"] for g in GOLDEN}) == len(GOLDEN)
    assert len(GOLDEN_BY_QUERY) == len(GOLDEN)
    for g in GOLDEN:
        # a lookup or a typo of a name has one relevant tool: the one it names
        assert 1 <= len(g["relevant"]) <= 8, g["id"]
        unknown = [i for i in [*g["relevant"], *g.get("must_not", [])] if i not in catalog_by_id]
        assert not unknown, (g["id"], unknown)
        assert not set(g["relevant"]) & set(g.get("must_not", [])), g["id"]
    assert LOCAL_CODE_QUERY in GOLDEN_BY_QUERY
    assert FREE_CURSOR_QUERY in GOLDEN_BY_QUERY


# ----- relevance ---------------------------------------------------------------------------------


def test_mean_recall_at_5_meets_threshold(golden_responses: dict[str, SearchResponse]) -> None:
    # GIVEN every golden query searched
    rows = []
    for g in GOLDEN:
        got = top_ids(golden_responses[g["id"]])
        rows.append((g["id"], recall_at(g["relevant"], got), g["query"], got, g["relevant"]))
    # WHEN Recall@5 is averaged over the set
    mean = sum(r[1] for r in rows) / len(rows)
    # THEN it stays at or above the measured baseline
    table = recall_table(rows)
    print(f"mean Recall@5 = {mean:.3f}\n{table}")
    assert mean >= RECALL_AT_5_THRESHOLD, (
        f"mean Recall@5 {mean:.3f} < {RECALL_AT_5_THRESHOLD}\n{table}"
    )


@pytest.mark.parametrize(
    "golden",
    [g for g in GOLDEN if g.get("note", "").startswith(("comparison", "navigational", "typo of"))],
    ids=lambda g: g["id"],
)
def test_named_tools_come_first_in_the_order_named(
    golden: dict, golden_responses: dict[str, SearchResponse]
) -> None:
    # GIVEN a golden query that names its tools (a comparison, a lookup, a typo of a name)
    # THEN those tools are ranks 1..n, in the order named
    n = len(golden["relevant"])
    assert top_ids(golden_responses[golden["id"]])[:n] == golden["relevant"]


# ----- hard constraints --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "golden",
    [
        pytest.param(
            g,
            id=g["id"],
            marks=[pytest.mark.xfail(reason=KNOWN_CONSTRAINT_BUGS[g["id"]], strict=True)]
            if g["id"] in KNOWN_CONSTRAINT_BUGS
            else [],
        )
        for g in GOLDEN
    ],
)
def test_hard_constraints_are_never_violated(
    golden: dict[str, Any],
    golden_responses: dict[str, SearchResponse],
    tools_schema: DomainSchema,
    catalog_by_id: dict[str, dict],
) -> None:
    # GIVEN a golden query's response (limit 10)
    response = golden_responses[golden["id"]]
    ids = [c.id for c in response.output.candidates]
    # THEN every extracted constraint holds for every returned record
    violations = [
        (c.id, f.label())
        for c in response.output.candidates
        for f in response.intent.constraints
        if not matches(tools_schema, f, catalog_by_id[c.id])
    ]
    assert not violations, f"{golden['query']!r}: constraint violations {violations}"
    # AND no must_not id and no excluded reference tool is returned
    forbidden = (set(golden.get("must_not", [])) | excluded_reference(response)) & set(ids)
    assert not forbidden, f"{golden['query']!r}: forbidden ids {sorted(forbidden)} in {ids}"


# ----- named scenarios ---------------------------------------------------------------------------


def test_local_code_completion_returns_only_local_code_tools(
    golden_responses: dict[str, SearchResponse], catalog_by_id: dict[str, dict]
) -> None:
    # GIVEN "AI code completion tools that work locally"
    response = golden_responses[GOLDEN_BY_QUERY[LOCAL_CODE_QUERY]["id"]]
    candidates = response.output.candidates
    assert candidates
    # THEN every result can be deployed locally
    not_local = [c.id for c in candidates if "Local" not in catalog_by_id[c.id]["deployment"]]
    assert not not_local, f"not deployable locally: {not_local}"
    # AND at least 3 of the top 5 are code assistants or IDEs
    top = candidates[:TOP]
    code = [c.id for c in top if catalog_by_id[c.id]["category"] in ("Code Assistant", "IDE")]
    assert len(code) >= 3, f"top 5 {[c.id for c in top]}: only {code} are Code Assistant/IDE"


def test_free_alternative_to_cursor_is_free_and_multi_source(
    golden_responses: dict[str, SearchResponse], catalog_by_id: dict[str, dict]
) -> None:
    # GIVEN "free alternative to Cursor"
    response = golden_responses[GOLDEN_BY_QUERY[FREE_CURSOR_QUERY]["id"]]
    candidates = response.output.candidates
    assert candidates
    ids = [c.id for c in candidates]
    # THEN Cursor itself is not returned
    assert "cursor" not in ids
    # AND every result has a free pricing model
    free = {"Free", "Freemium", "Open Source"}
    paid = [
        (c.id, catalog_by_id[c.id]["pricing_model"])
        for c in candidates
        if catalog_by_id[c.id]["pricing_model"] not in free
    ]
    assert not paid, f"non-free results: {paid}"
    # AND the candidates carry hits from 2+ dense aspects and from the keyword source
    sources = [h.source for c in candidates for h in c.provenance.hits]
    aspects = {s.split(":")[1] for s in sources if s.startswith("dense:")}
    assert len(aspects) >= 2, f"dense aspects in provenance: {sorted(aspects)}"
    assert any(s.startswith("sparse:") for s in sources), f"no keyword hits: {sorted(set(sources))}"


# ----- failing sources ---------------------------------------------------------------------------


def test_failing_keyword_index_gives_partial_results_and_an_error(
    tools_engine: SearchService,
) -> None:
    # GIVEN an engine sharing the fixture's store and embedder whose keyword index raises
    engine = SearchService.create(
        tools_engine.settings,
        "tools",
        store=tools_engine.deps.store,
        embedder=tools_engine.deps.embedder,
        keyword=FailingKeywordIndex(),
    )
    # WHEN a golden query is searched
    response = engine.search(LOCAL_CODE_QUERY, limit=LIMIT)
    output = response.output
    # THEN the sparse source is listed as failed and is the only failure
    failed = [e.source for e in output.errors]
    assert failed == [f"sparse:{FailingKeywordIndex.name}"], failed
    assert output.errors[0].error == "RuntimeError"
    # AND the dense sources still answer
    assert output.candidates
    assert output.execution_stats.vector_queries_executed >= 1
    assert output.execution_stats.sparse_queries_executed == 0
    sources = {h.source for c in output.candidates for h in c.provenance.hits}
    assert any(s.startswith("dense:") for s in sources), sources
    assert not any(s.startswith("sparse:") for s in sources), sources


def test_failing_embedder_gives_keyword_and_structured_results_and_errors(
    tools_engine: SearchService,
) -> None:
    # GIVEN an engine sharing the fixture's store and keyword index whose embedder raises
    real = tools_engine.deps.embedder
    engine = SearchService.create(
        tools_engine.settings,
        "tools",
        store=tools_engine.deps.store,
        embedder=FailingEmbedder(real.name, real.dim),
        keyword=tools_engine.deps.keyword,
    )
    # WHEN a golden query with vocabulary matches (so a structured source) is searched
    response = engine.search(LOCAL_CODE_QUERY, limit=LIMIT)
    output, plan = response.output, response.plan
    assert plan.structured_sources, "the query should plan a structured source"
    # THEN every dense source that needs the query text is listed in errors
    text_sources = {
        f"dense:{vs.aspect}:{vs.query_vector_source}"
        for vs in plan.vector_sources
        if vs.query_vector_source != "reference_tool"
    }
    assert text_sources
    failed = {e.source for e in output.errors}
    assert failed == text_sources, (failed, text_sources)
    assert all(e.error == "EmbedderError" for e in output.errors)
    # AND BM25 and the structured source still answer, within the hard constraints
    stats = output.execution_stats
    assert stats.sparse_queries_executed == 1
    assert stats.structured_queries_executed == len(plan.structured_sources)
    assert stats.vector_queries_executed == 0
    assert output.candidates
    sources = {h.source for c in output.candidates for h in c.provenance.hits}
    assert any(s.startswith("sparse:") for s in sources), sources
    assert any(s.startswith("structured:") for s in sources), sources
    assert not any(s.startswith("dense:") for s in sources), sources
    assert all("Local" in c.metadata["deployment"] for c in output.candidates)
