"""The pipeline's data contracts: IntentState, QueryPlan, Candidate, QueryExecutorOutput.

Field names of ``Candidate`` and ``QueryExecutorOutput`` follow the JSON Schemas in
``seeds/query-executor-node.md`` (camelCase on the wire, via aliases); the executor's output
is validated against those schemas in the tests (``agentic_search/contracts``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from agentic_search.domain.schema import Operator

PrimaryGoal = Literal["find", "compare", "alternative-to", "explain"]
Strategy = Literal[
    "identity-focused", "capability-focused", "usecase-focused", "multi-collection-hybrid"
]
FusionMethod = Literal["rrf", "weighted_sum", "dbsf", "none"]
QueryVectorSource = Literal[
    "query_text", "reference_tool", "semantic_variant", "coverage", "feedback", "hyde"
]

#: Bounds every plan is validated against (the seed's "topK 1..200").
TOP_K_MIN, TOP_K_MAX = 1, 200


class _Wire(BaseModel):
    """Base for models serialized in camelCase (the seed contracts' spelling)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    def wire(self) -> dict[str, Any]:
        """JSON-able dict with camelCase keys."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class Filter(_Wire):
    """One structured condition: ``field operator value``.

    ``value`` is a scalar for eq/ne/lt/lte/gt/gte/contains and a list for in/nin. ``must`` is
    True when the user stated it as non-negotiable (never relaxed). ``origin`` is the phrase of
    the query it came from, for explanations.
    """

    field: str
    operator: Operator
    value: Any
    must: bool = False
    origin: str | None = None

    def label(self) -> str:
        """Human-readable form, e.g. ``deployment in [Local]``; used in filtersApplied."""
        sym = {"eq": "=", "ne": "!=", "lt": "<", "lte": "<=", "gt": ">", "gte": ">="}
        op = sym.get(self.operator, f" {self.operator} ")
        value = self.value
        if isinstance(value, list):
            value = "[" + ", ".join(str(v) for v in value) + "]"
        return f"{self.field}{op}{value}"


class IntentState(_Wire):
    """What the user asked for, in the schema's controlled vocabularies.

    ``matches`` maps a vocabulary name to the canonical values found in the query (soft
    preferences); ``constraints`` are hard filters (including negations such as "not paid").
    """

    query: str
    normalized_query: str
    primary_goal: PrimaryGoal = "find"
    reference_tool: str | None = None
    reference_tool_name: str | None = None
    reference_profile: dict[str, list[str]] = Field(
        default_factory=dict,
        description="vocabulary values of the reference tool's record (query by example)",
    )
    excluded_tools: list[str] = Field(default_factory=list, description='"not Terraform"')
    matches: dict[str, list[str]] = Field(default_factory=dict)
    constraints: list[Filter] = Field(default_factory=list)
    must_preserve_terms: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    semantic_variants: list[str] = Field(default_factory=list)
    must_match_exactly: bool = Field(
        default=False, description="literal constraints (quoted phrases): no HyDE"
    )
    confidence: float = Field(ge=0.0, le=1.0, default=0.5)
    extractor: str = "rules"


class VectorSource(_Wire):
    """A dense retrieval over one aspect's named vector.

    The query vector is ``text`` embedded (or, for ``reference_tool``, the stored vector of
    the tool named by ``text``). With ``feedback_ids`` it is moved toward those records'
    stored vectors by Rocchio (:func:`~agentic_search.domain.expansion.rocchio_vector`), so a
    feedback query needs no new embedding when ``text`` was embedded before.
    """

    aspect: str
    top_k: int = Field(ge=TOP_K_MIN, le=TOP_K_MAX)
    query_vector_source: QueryVectorSource = "query_text"
    text: str | None = None
    weight: float = Field(default=1.0, gt=0)
    feedback_ids: list[str] = Field(
        default_factory=list,
        max_length=20,
        description="Rocchio feedback: record ids whose stored vectors move the query vector",
    )
    feedback_alpha: float = Field(
        default=0.8, ge=0.0, le=1.0, description="Rocchio weight of the query vector itself"
    )


class SparseSource(_Wire):
    """A BM25 keyword retrieval."""

    text: str
    top_k: int = Field(ge=TOP_K_MIN, le=TOP_K_MAX)
    weight: float = Field(default=1.0, gt=0)


class StructuredSource(_Wire):
    """A structured retrieval: records matching ``filters`` (hard) ranked by how many of
    ``preferences`` (soft, any-of per field) they satisfy, ties by the schema's sort field."""

    filters: list[Filter] = Field(default_factory=list)
    preferences: list[Filter] = Field(default_factory=list)
    top_k: int = Field(ge=TOP_K_MIN, le=TOP_K_MAX)
    weight: float = Field(default=1.0, gt=0)


class QueryPlan(_Wire):
    """How to retrieve: sources, pushed-down filters and the fusion method."""

    domain: str
    strategy: Strategy
    vector_sources: list[VectorSource] = Field(default_factory=list)
    sparse_source: SparseSource | None = None
    structured_sources: list[StructuredSource] = Field(default_factory=list)
    filters: list[Filter] = Field(default_factory=list, description="pushed into every source")
    exclude_ids: list[str] = Field(default_factory=list)
    fusion: FusionMethod = "rrf"
    rrf_k: int = Field(default=60, ge=1)
    limit: int = Field(default=10, ge=1, le=TOP_K_MAX)
    confidence: float = Field(ge=0.0, le=1.0, default=0.5)
    rationale: list[str] = Field(default_factory=list)
    planner: str = "rules"
    round: int = Field(default=1, ge=1, description="executor round this plan belongs to")

    @property
    def source_count(self) -> int:
        """Number of ranked lists the plan fuses."""
        return (
            len(self.vector_sources)
            + (1 if self.sparse_source else 0)
            + len(self.structured_sources)
        )


class SourceHit(_Wire):
    """One appearance of a candidate in one ranked list (kept through fusion)."""

    source: str
    system: Literal["qdrant", "mongodb", "api"]
    aspect: str | None = None
    query_vector_source: str | None = None
    rank: int = Field(ge=1)
    raw_score: float
    normalized_score: float = Field(ge=0.0, le=1.0)
    round: int | None = Field(default=None, ge=1, description="executor round that ran it")
    query: str | None = Field(default=None, description="query text the source ran")


class Provenance(_Wire):
    """Where a candidate came from (contract: collection, queryVectorSource, filtersApplied)."""

    collection: str
    aspect: str | None = None
    query_vector_source: str | None = None
    filters_applied: list[str] = Field(default_factory=list)
    hits: list[SourceHit] = Field(default_factory=list)
    matched_terms: list[str] = Field(default_factory=list)
    matched_values: dict[str, list[str]] = Field(default_factory=dict)
    relaxed_filters: list[str] = Field(
        default_factory=list, description="hard filters relaxed to reach this candidate"
    )


class Candidate(_Wire):
    """A fused, deduplicated result (contract: id, source, score in [0, 1], metadata)."""

    id: str
    source: Literal["qdrant", "mongodb", "api"]
    score: float = Field(ge=0.0, le=1.0)
    fused_score: float
    rerank_score: float | None = Field(
        default=None, description="cross-encoder / rerank API score, beside the fused score"
    )
    metadata: dict[str, Any]
    embedding_vector: list[float] | None = None
    provenance: Provenance


class SourceError(_Wire):
    """A source that failed or timed out; the others still answered."""

    source: str
    error: str
    message: str


class ExecutionStats(_Wire):
    """Counters and per-stage timings (milliseconds) of one execution."""

    vector_queries_executed: int
    structured_queries_executed: int
    sparse_queries_executed: int = 0
    fusion_method: str
    latency_ms: int
    candidates_before_fusion: int = 0
    candidates_after_fusion: int = 0
    stage_ms: dict[str, float] = Field(default_factory=dict)
    source_ms: dict[str, float] = Field(default_factory=dict)
    extractor: str = "rules"
    planner: str = "rules"
    rounds: int = Field(default=1, ge=0, description="executor rounds run")


class QueryExecutorOutput(_Wire):
    """The executor's answer: candidates, executionStats, confidence and errors."""

    candidates: list[Candidate]
    execution_stats: ExecutionStats
    confidence: float = Field(ge=0.0, le=1.0)
    errors: list[SourceError] = Field(default_factory=list)
