"""What the user asked and how to retrieve it: Filter, IntentState, QueryPlan and its sources.

Field names follow the seed contracts (camelCase on the wire, via aliases).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agentic_search.state.base import WireModel

#: Filter operators; a domain schema allows a subset per field (its filter allowlist).
Operator = Literal["eq", "ne", "in", "nin", "lt", "lte", "gt", "gte", "contains"]
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


class Filter(WireModel):
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


class IntentState(WireModel):
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


class VectorSource(WireModel):
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


class SparseSource(WireModel):
    """A BM25 keyword retrieval."""

    text: str
    top_k: int = Field(ge=TOP_K_MIN, le=TOP_K_MAX)
    weight: float = Field(default=1.0, gt=0)


class StructuredSource(WireModel):
    """A structured retrieval: records matching ``filters`` (hard) ranked by how many of
    ``preferences`` (soft, any-of per field) they satisfy, ties by the schema's sort field."""

    filters: list[Filter] = Field(default_factory=list)
    preferences: list[Filter] = Field(default_factory=list)
    top_k: int = Field(ge=TOP_K_MIN, le=TOP_K_MAX)
    weight: float = Field(default=1.0, gt=0)


class QueryPlan(WireModel):
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
