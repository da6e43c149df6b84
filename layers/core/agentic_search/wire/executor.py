"""The executor's state between steps: sub-queries, retrieved lists, fused refs, rounds.

Everything here is JSON-able (no vectors, payloads dropped) so the same state crosses Step
Functions states as it crosses the local runner's steps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import ConfigDict, Field
from pydantic.alias_generators import to_camel

from agentic_search.wire.base import WireModel
from agentic_search.wire.evidence import (
    Bridge,
    Coverage,
    CoverageTarget,
    Evidence,
    ExecutorCaps,
    RetrievalReport,
    RoundReport,
)
from agentic_search.wire.query import IntentState, QueryPlan
from agentic_search.wire.records import VIA_KEY, ScoredRecord
from agentic_search.wire.results import Fused, SourceError


@dataclass(frozen=True, slots=True)
class Hit:
    """One source hit: record id, the source's raw score and 1-based rank (no payload:
    hydration reads records from the store); ``via`` for a hit found by name or along the
    graph: the name asked for, or the edge it was reached by, ``<edge kind>:<from id>``.

    A plain dataclass (a round makes hundreds) that the state's models hold as is and
    pydantic validates and serializes in camelCase like every wire model.
    """

    __pydantic_config__ = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid"
    )

    id: str
    score: float
    rank: Annotated[int, Field(ge=1)]
    via: str | None = None


class RetrievedList(WireModel):
    """One source's answer: its ranked hits, or its error, and how long it took (ms).

    The one type of a source's answer, in process and on the wire (what one Retrieve step
    returns, and every round's lists kept in the executor state). :meth:`add_hits` makes hits
    of what a store port returned (the one conversion in); :meth:`pruned` keeps only the hits
    of candidates that can still be returned (``rank`` keeps each hit's original position,
    ``total`` the number before pruning, ``score_range`` the lowest and highest score before
    pruning: what a hit's min-max normalized score in provenance is taken against).
    """

    name: str
    system: str = "unknown"
    weight: float = 1.0
    aspect: str | None = None
    query_vector_source: str | None = None
    round: int = 1
    query: str | None = None
    hits: list[Hit] = Field(default_factory=list)
    total: int = Field(default=0, ge=0, description="hits before pruning")
    score_range: tuple[float, float] | None = Field(
        default=None,
        description="lowest and highest hit score before pruning (None: not pruned)",
    )
    error: SourceError | None = None
    ms: float = 0.0
    setup_ms: float = Field(
        default=0.0, ge=0.0, description="start-up work during this Retrieve (model, store)"
    )

    def add_hits(self, records: Sequence[ScoredRecord]) -> None:
        """Set the hits to ``records`` (best first, as a store port returns them), ranked from
        1; a record's ``_via`` payload key becomes the hit's ``via``, the rest of its payload
        is dropped."""
        self.hits = [
            Hit(r.id, float(r.score), i, r.payload.get(VIA_KEY) if r.payload else None)
            for i, r in enumerate(records, 1)
        ]
        self.total = len(self.hits)

    @property
    def score_bounds(self) -> tuple[float, float] | None:
        """The lowest and highest score of the list the source answered: ``score_range`` once
        pruned, else its hits' own (None without hits)."""
        if self.score_range is not None:
            return self.score_range
        if not self.hits:
            return None
        scores = [h.score for h in self.hits]
        return min(scores), max(scores)

    def pruned(self, keep: set[str]) -> RetrievedList:
        """A copy with only the hits whose id is in ``keep`` (ranks, ``total`` and
        ``score_range`` those of the whole list; the hits themselves are shared)."""
        update: dict[str, object] = {"hits": [h for h in self.hits if h.id in keep]}
        if self.score_range is None and self.hits:
            update["score_range"] = self.score_bounds
        return self.model_copy(update=update)


class SubQuery(WireModel):
    """One source of a round's plan, as its own single-source plan (one Map item)."""

    name: str
    kind: Literal["dense", "sparse", "structured", "entity", "graph"]
    plan: QueryPlan


class ExecutorState(WireModel):
    """Everything the loop carries between nodes (JSON-able, no vectors)."""

    plan: QueryPlan
    intent: IntentState
    caps: ExecutorCaps
    round_index: int = Field(default=0, ge=0, description="rounds completed")
    continue_search: bool = True
    targets: list[CoverageTarget] = Field(default_factory=list)
    pool: list[Evidence] = Field(default_factory=list)
    round_rankings: list[list[str]] = Field(
        default_factory=list, description="each round's fused ids, best first"
    )
    rerank_scores: dict[str, float] = Field(default_factory=dict)
    relaxed_ids: list[str] = Field(default_factory=list)
    asked: list[str] = Field(
        default_factory=list, description="labels of targets that already had their own query"
    )
    coverage: Coverage = Field(default_factory=Coverage)
    report: RetrievalReport = Field(default_factory=RetrievalReport)
    started_at: float = Field(default=0.0, description="epoch seconds at the gate")
    fusion_used: str | None = Field(default=None, description="round 1's fusion method")
    candidates_before: int = 0
    candidates_after: int = 0
    first_fused: list[Fused] = Field(
        default_factory=list,
        description="round 1's fused list (the ranking after one round), its first "
        "max(limit, selectionPool, rerankTopN) entries",
    )
    retrieved: list[RetrievedList] = Field(
        default_factory=list, description="every round's source hits, pruned to candidates"
    )
    stage_totals: dict[str, float] = Field(default_factory=dict)
    pins: list[str] = Field(
        default_factory=list, description="named records placed first, in the order named"
    )
    bridges: list[Bridge] = Field(
        default_factory=list, description="records placed after the evidence that names them"
    )
    walked: bool = Field(default=False, description="a graph walk (bridge round) has run")
    relevance: dict[str, float] = Field(
        default_factory=dict,
        description="cosine to the query of round 1's first candidates (pipeline/relevance.py)",
    )
    relevance_due: dict[str, int] = Field(
        default_factory=dict,
        description="record id -> the later round whose first candidates it entered: its "
        "relevance, read from that round's lists, is measured once it is in the head "
        "Finalize would return",
    )
    word_relevance: dict[str, float] = Field(
        default_factory=dict,
        description="cosine to the query of each content word no record holds, when the "
        "domain's abstention reads the query's words (pipeline/relevance.py)",
    )


class RoundWork(WireModel):
    """One round in flight: its plan and sub-queries, then the Map's results, then the
    partial report FuseRerank hands to GradeRound."""

    index: int = Field(ge=1)
    plan: QueryPlan
    sub_queries: list[SubQuery] = Field(default_factory=list)
    results: list[RetrievedList] = Field(default_factory=list)
    report: RoundReport
    started_at: float = Field(description="epoch seconds when the round was prepared")
    setup_ms: float = Field(
        default=0.0,
        ge=0.0,
        description="start-up work during the round's steps (building an adapter, loading a "
        "model session): left out of the round budget",
    )
    new_ids: list[str] = Field(default_factory=list)
    found_any: bool = False
