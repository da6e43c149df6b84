"""What retrieval produces: ranked lists, fused entries, candidates and the executor output.

``Candidate`` and ``QueryExecutorOutput`` follow the JSON Schemas of the output contract
(ARCHITECTURE.md; kept in ``agentic_search/contracts``; camelCase on the wire).
``RankedList`` / ``Fused`` are the inputs and outputs of :mod:`agentic_search.logic.fusion`
(a source's answer is :class:`~agentic_search.wire.executor.RetrievedList`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ConfigDict, Field
from pydantic.alias_generators import to_camel

from agentic_search.wire.base import WireModel


@dataclass(frozen=True)
class RankedList:
    """One source's results, best first. ``scores`` may be empty for rank-only lists."""

    name: str
    ids: Sequence[str]
    scores: Sequence[float] = ()
    weight: float = 1.0

    def __post_init__(self) -> None:
        if self.scores and len(self.scores) != len(self.ids):
            raise ValueError(
                f"list {self.name!r}: {len(self.ids)} ids but {len(self.scores)} scores"
            )
        if len(set(self.ids)) != len(self.ids):
            raise ValueError(f"list {self.name!r} has duplicate ids")
        if self.weight <= 0:
            raise ValueError(f"list {self.name!r}: weight must be > 0")


@dataclass
class Fused:
    """A fused document: raw fused score, score scaled to [0, 1], and per-list contributions.

    The one type of a fused entry, in process and on the wire: a plain dataclass (fusion makes
    hundreds per round), which the state's models hold as is and pydantic serializes in
    camelCase like every wire model (``bestRank``). Treated as immutable once fused: lists
    share entries, never copies.
    """

    __pydantic_config__ = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid"
    )

    id: str
    fused: float
    score: float
    best_rank: int
    contributions: dict[str, float] = field(default_factory=dict)


class SourceHit(WireModel):
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


class Provenance(WireModel):
    """Where a candidate came from (contract: collection, queryVectorSource, filtersApplied)."""

    collection: str
    aspect: str | None = None
    query_vector_source: str | None = None
    filters_applied: list[str] = Field(default_factory=list)
    hits: list[SourceHit] = Field(default_factory=list)
    matched_terms: list[str] = Field(
        default_factory=list, description="the analysed query terms (stems) the record holds"
    )
    matched_keywords: list[str] = Field(
        default_factory=list,
        description="the words of the query, as written, whose terms the record holds (no "
        "stopword or question word): what a person is shown",
    )
    matched_values: dict[str, list[str]] = Field(default_factory=dict)
    relaxed_filters: list[str] = Field(
        default_factory=list, description="hard filters relaxed to reach this candidate"
    )
    chunk: str | None = Field(
        default=None,
        description="a chunked document's best chunk (its point id, e.g. d5::2), whose text "
        "is the candidate's metadata and evidence; the candidate's id is the document's",
    )


class Candidate(WireModel):
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
    relevance: float | None = Field(
        default=None,
        description="cosine of the candidate's stored vector (main aspect) to the query: "
        "how well it matches at all, not relative to the others",
    )


class AnswerQuality(WireModel):
    """Whether the answer fits (:mod:`agentic_search.logic.quality`): ``verdict`` good,
    weak or none ("no good match"), ``score`` in [0, 1], the ``reason`` in one line, how
    many candidates were held back for not clearing it, which returned candidates their own
    evidence supports and the cosine that supports one by itself."""

    verdict: Literal["good", "weak", "none"]
    score: float = Field(ge=0.0, le=1.0)
    reason: str
    withheld: int = Field(default=0, ge=0)
    supported: list[str] | None = Field(
        default=None,
        description="ids of the returned candidates supported by their own evidence (named, "
        "every query word, an asked vocabulary value, or a cosine at least supportRelevance), "
        "in rank order; the others are weaker results. None when no candidate was judged on "
        "its own (no query text embedded): every candidate counts as supported",
    )
    support_relevance: float | None = Field(
        default=None,
        ge=-1.0,
        le=1.0,
        description="the cosine to the query (a candidate's relevance, on the embedder "
        "model's own scale, calibrated per domain and model) at which a candidate is "
        "supported by its cosine alone; None when none was measured",
    )


SOURCE_TIMEOUT = "SourceTimeout"
"""The :attr:`SourceError.error` (the failure's kind) of a source abandoned at the search's
source deadline; every other kind is the class name of the exception the source raised. A
string, not a class: nothing raises it."""


class SourceError(WireModel):
    """A source that failed or timed out; the others still answered."""

    source: str
    error: str
    message: str


class ExecutionStats(WireModel):
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


class QueryExecutorOutput(WireModel):
    """The executor's answer: candidates, executionStats, confidence and errors."""

    candidates: list[Candidate]
    execution_stats: ExecutionStats
    confidence: float = Field(ge=0.0, le=1.0)
    errors: list[SourceError] = Field(default_factory=list)
    answer_quality: AnswerQuality | None = None
    not_permitted: list[str] | None = Field(
        default=None,
        description="why part of what the query asks for is withheld from this caller (a "
        "restricted class it lacks the claim of), one reason each; absent when nothing is",
    )
