"""What the user asked and how to retrieve it: Filter, IntentState, QueryPlan and its sources.

Field names follow the seed contracts (camelCase on the wire, via aliases).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agentic_search.wire.base import WireModel, value_text

#: Filter operators; a domain schema allows a subset per field (its filter allowlist).
Operator = Literal["eq", "ne", "in", "nin", "lt", "lte", "gt", "gte", "contains"]
PrimaryGoal = Literal["find", "compare", "alternative-to", "explain"]
Strategy = Literal[
    "identity-focused", "capability-focused", "usecase-focused", "multi-collection-hybrid"
]
FusionMethod = Literal["rrf", "weighted_sum", "dbsf", "none"]
QueryVectorSource = Literal[
    "query_text", "reference_tool", "semantic_variant", "coverage", "feedback", "hyde", "llm"
]

#: Bounds every plan is validated against (the seed's "topK 1..200").
TOP_K_MIN, TOP_K_MAX = 1, 200


def _number(value: Any) -> str:
    """``value`` as text, a whole float as an integer (:func:`value_text`); booleans and
    strings as ``str`` gives them."""
    return value_text(value) if isinstance(value, float) else str(value)


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
        """Human-readable form, e.g. ``deployment in [Local]``, ``price_monthly_usd<20`` (a
        whole float without ``.0``); used in filtersApplied."""
        sym = {"eq": "=", "ne": "!=", "lt": "<", "lte": "<=", "gt": ">", "gte": ">="}
        op = sym.get(self.operator, f" {self.operator} ")
        value = self.value
        if isinstance(value, list):
            return f"{self.field}{op}[" + ", ".join(_number(v) for v in value) + "]"
        return f"{self.field}{op}{_number(value)}"


Complexity = Literal["simple", "moderate", "complex"]


class EntityLink(WireModel):
    """A name in the query linked to a record (``kind="entity"``: ``id`` is the record id), a
    misspelled vocabulary phrase (``kind="vocabulary"``: ``id`` is the canonical value) or a
    misspelled cue word of the reading (``kind="cue"``: "alternatve", ``id`` the word).

    ``surface`` is the text as written, ``name`` the record's display name (or the phrase),
    ``score`` in [0, 1] (1 exact; fuzzy ``1 - edit distance / length``), ``method`` how it was
    found (see :mod:`agentic_search.logic.linking`).
    """

    id: str
    name: str
    surface: str
    score: float = Field(ge=0.0, le=1.0)
    method: Literal["exact", "fuzzy"] = "exact"
    kind: Literal["entity", "vocabulary", "cue"] = "entity"


class VocabularyMatch(WireModel):
    """A capability vocabulary value read from the query by meaning (cosine of the query's
    embedding to the entry's; see :mod:`agentic_search.logic.capabilities`)."""

    vocabulary: str
    value: str
    score: float = Field(ge=-1.0, le=1.0)


FollowUpKind = Literal[
    "filter", "exclude", "reference", "preference", "need", "cheaper", "standalone"
]


class FollowUp(WireModel):
    """How a query with ``history`` was read against the conversation
    (:mod:`agentic_search.logic.follow_up`): ``kind`` (``filter``: the previous need plus a
    constraint, searched within the previous results first; ``exclude``: without a result or
    a named record; ``reference``: like one of the previous results; ``preference``: the
    previous need with another preference; ``need``: a new need keeping the previous
    constraints; ``cheaper``: a price bound under the previous results'; ``standalone``: the
    query replaces the context), ``turn`` (the 1-based history turn it was read against; 0
    for a stand-alone query), ``read_as`` (the text searched), and what was ``kept`` from the
    previous reading, ``added`` and ``dropped``, each a short phrase."""

    kind: FollowUpKind
    turn: int = Field(ge=0)
    read_as: str
    cue: str | None = Field(default=None, description="the words that made it a follow-up")
    kept: list[str] = Field(default_factory=list)
    added: list[str] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list)
    within: list[str] = Field(
        default_factory=list,
        description="the previous results searched first (a filter on them): those that "
        "still match are placed first, in their new order, then the rest",
    )


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
    reference_addons: list[str] = Field(
        default_factory=list,
        description='for "alternative to X": its add-ons, never returned as alternatives to '
        'it: the records named after X ("webpack-cli", "Amazon DynamoDB Streams"), then those '
        'whose text names X as what they plug into ("a webpack loader for YAML")',
    )
    negations: list[str] = Field(
        default_factory=list,
        description='the phrases that say what is not wanted ("not terraform", "not paid"), as '
        "in the normalized query: hard filters, left out of the text the dense sources embed",
    )
    matches: dict[str, list[str]] = Field(default_factory=dict)
    constraints: list[Filter] = Field(default_factory=list)
    must_preserve_terms: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    by_meaning: list[VocabularyMatch] = Field(
        default_factory=list,
        description="capability values matched by meaning (added to matches), with the cosine",
    )
    semantic_variants: list[str] = Field(default_factory=list)
    translation: str | None = Field(
        default=None,
        description="the LLM's catalog-language rendering of the query, searched by keyword "
        "beside the original (set only on the merged LLM + rules intent)",
    )
    must_match_exactly: bool = Field(
        default=False, description="literal constraints (quoted phrases): no HyDE"
    )
    confidence: float = Field(ge=0.0, le=1.0, default=0.5)
    extractor: str = "rules"
    entities: list[EntityLink] = Field(
        default_factory=list,
        description="records the query names (exact or fuzzy) and misspelled vocabulary",
    )
    complexity: Complexity = Field(
        default="moderate",
        description="simple: one round, no grading; moderate: coverage rounds; complex: "
        "comparisons and bridge questions (logic/complexity.py)",
    )
    bridge: bool = Field(
        default=False,
        description="a question about something it describes rather than names: later rounds "
        "may walk from the evidence to the entities it mentions",
    )
    follow_up: FollowUp | None = Field(
        default=None,
        description="with history: how the query was read against the conversation (none "
        "for a request without history)",
    )

    @property
    def linked(self) -> list[EntityLink]:
        """The entity links (not the vocabulary corrections), in query order."""
        return [e for e in self.entities if e.kind == "entity"]


class VectorSource(WireModel):
    """A dense retrieval over one aspect's named vector.

    The query vector is ``text`` embedded (or, for ``reference_tool``, the stored vector of
    the tool named by ``text``). With ``feedback_ids`` it is moved toward those records'
    stored vectors by Rocchio (:func:`~agentic_search.logic.expansion.rocchio_vector`), so a
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


class EntitySource(WireModel):
    """entity_state: named records fetched by id, not by similarity (the seed design note's
    ``entity_state`` sub-query). Hard filters still apply. With ``pin`` they are placed first
    in the final ranking, in the order named (comparisons, lookups)."""

    ids: list[str] = Field(min_length=1, max_length=20)
    names: list[str] = Field(default_factory=list, description="display names, same order")
    pin: bool = True


class GraphSource(WireModel):
    """walk_seeds / predicate_walk over the entity graph (the seed design note's sub-query
    types): from ``seeds`` along the stored edges (``kinds``; empty: every kind) for
    ``hops`` hops, at most ``fanout`` neighbours per node; expanded nodes are ranked by
    personalized PageRank over the walked neighbourhood (restart on the seeds, weighted by
    ``weights``, damping ``alpha``) times their cosine to ``text`` on ``aspect``. Nodes in
    ``exclude`` (already candidates) are walked through but never returned."""

    seeds: list[str] = Field(min_length=1, max_length=10)
    weights: list[float] = Field(default_factory=list)
    placement: Literal["bridge", "fused"] = Field(
        default="bridge",
        description="bridge: the best walked record is placed after its seed; fused: the "
        "walk is one more ranked list of the round (query by example along the graph)",
    )
    hops: int = Field(default=1, ge=1, le=2)
    direction: Literal["both", "in"] = Field(
        default="both",
        description="walk out- and in-edges, or in-edges only (the records that name the seed)",
    )
    fanout: int = Field(default=50, ge=1, le=200)
    kinds: list[str] = Field(default_factory=list)
    text: str | None = Field(
        default=None, description="query text whose vector the walked records are scored by"
    )
    reference: str | None = Field(
        default=None, description="else a record whose stored vector scores them"
    )
    aspect: str
    top_k: int = Field(default=10, ge=1, le=TOP_K_MAX)
    alpha: float = Field(default=0.85, gt=0.0, lt=1.0)
    exclude: list[str] = Field(default_factory=list)
    mention_context: Literal["any", "alternative"] = Field(
        default="any",
        description="alternative: a record reached by a mention edge alone is returned only "
        "where its text names the seed as what it replaces or resembles ('a faster "
        "alternative to webpack'), not as what it plugs into ('webpack loader for YAML')",
    )
    weight: float = Field(default=1.0, gt=0, description="RRF weight of a fused walk")
    max_mentions: int | None = Field(
        default=None,
        ge=0,
        description="a walked record mentioned by more records than this is a hub (a general "
        "topic), never returned; None: no limit",
    )


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
    entity_source: EntitySource | None = Field(
        default=None, description="named records fetched by id (pinned, not fused)"
    )
    graph_source: GraphSource | None = Field(
        default=None, description="a walk of the entity graph (bridge hops, not fused)"
    )

    @property
    def any_source(self) -> bool:
        """Whether the plan retrieves anything (fused lists, an entity fetch or a walk)."""
        return bool(self.source_count or self.entity_source or self.graph_source)

    @property
    def source_count(self) -> int:
        """Number of ranked lists the plan fuses (entity fetches and graph walks are placed,
        not fused)."""
        return (
            len(self.vector_sources)
            + (1 if self.sparse_source else 0)
            + len(self.structured_sources)
        )
