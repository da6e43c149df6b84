"""Data of the multi-round executor: caps, evidence, coverage, round reports, evidence pack.

All models are JSON-able (camelCase on the wire) so the same state can travel between the
Step Functions states and the local runner. Nothing here holds vectors: state stays small.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agentic_search.wire.base import WireModel
from agentic_search.wire.query import Filter
from agentic_search.wire.results import Provenance, SourceError

#: Default evidence snippet length in characters (``ExecutorCaps.snippet_chars``).
SNIPPET_CHARS = 1200

QueryPurpose = Literal["plan", "coverage", "feedback", "hyde", "relaxed", "bridge", "llm"]
TargetKind = Literal["constraint", "preference", "phrase", "term", "entity"]
#: Round 2+'s dense feedback query (``ExecutorCaps.feedback_vector``).
FeedbackVector = Literal["none", "rocchio", "embed"]


class ExecutorCaps(WireModel):
    """Hard caps and policy knobs of the multi-round executor (enforced by the gate), as they
    travel in the state.

    Token counts are in the embedder's word-piece tokens; times in milliseconds. PlanQuery
    builds them per request: ``max_rounds``, ``max_total_docs`` and ``round_budget_ms`` from
    the request and the settings, ``later_dense_weight`` from the domain's calibration, every
    other knob from the domain's tuning (``tuning.executor`` of the domain YAML, whose fields
    are these fields' definitions: :class:`agentic_search.logic.tuning.ExecutorTuning`). The
    defaults here are the tuning's defaults.
    """

    max_rounds: int = Field(default=3, ge=1, le=5)
    max_docs: int = Field(default=8, ge=1, le=50, description="evidence selected per round")
    max_total_docs: int = Field(default=10, ge=1, le=100, description="evidence pack size")
    max_total_tokens: int = Field(
        default=2048, ge=32, le=32768, description="tokens of the evidence pack, at most"
    )
    max_chunks_per_doc: int = Field(
        default=2, ge=1, le=20, description="chunks of one document selected, at most"
    )
    round_budget_ms: float = Field(default=2000.0, gt=0, description="latency budget per round")
    confidence_threshold: float = Field(
        default=0.85,
        ge=0.0,
        le=1.0,
        description="stop once confidence reaches it; 0.85 = full coverage alone (on SciFact "
        "train 0.9 scored the same nDCG@10 but slower, 0.8 less: docs/benchmarks.md)",
    )
    max_no_new_rounds: int = Field(
        default=1,
        ge=1,
        le=5,
        description="stop after this many rounds in a row that added no new evidence",
    )
    selection_pool: int = Field(default=30, ge=1, le=200, description="top-N read for selection")
    rerank_top_n: int = Field(
        default=30, ge=1, le=200, description="the head of the ranking the reranker reorders"
    )
    mmr_lambda: float = Field(
        default=0.7,
        ge=0.0,
        le=1.0,
        description="MMR's trade-off in evidence selection: 1 relevance alone, 0 novelty alone",
    )
    feedback_docs: int = Field(default=3, ge=1, le=20, description="RM3 feedback documents")
    feedback_terms: int = Field(default=10, ge=0, le=50, description="RM3 expansion terms")
    feedback_vector: FeedbackVector = Field(
        default="none",
        description="round 2+'s dense feedback query: none (RM3 words go to BM25 only), "
        "Rocchio on the stored vectors of the feedback documents (no new embedding), or the "
        "query plus the RM3 words embedded; none by default: on SciFact train the others gain "
        "no nDCG@10 worth their p95 (docs/benchmarks.md)",
    )
    rocchio_alpha: float = Field(
        default=0.8, ge=0.0, le=1.0, description="Rocchio weight of the original query vector"
    )
    later_dense_weight: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        description="RRF weight, within a later round that has no dense query of its own (an "
        "RM3 / missing-term round), of round 1's dense query run again (cached vector); 0 "
        "leaves such a round BM25-only, which scored better on SciFact train "
        "(docs/benchmarks.md)",
    )
    later_round_weight: float = Field(
        default=0.2, gt=0.0, le=1.0, description="RRF weight of rounds 2+ in the final ranking"
    )
    snippet_chars: int = Field(
        default=SNIPPET_CHARS,
        ge=100,
        le=20000,
        description="characters of a record's text an evidence snippet keeps, at most",
    )


class CoverageTarget(WireModel):
    """Something the evidence should support: a hard constraint, a soft preference (any of
    ``values`` in ``field``), a quoted phrase (verbatim, case-insensitive), an analysed
    query term (Snowball stem), or a named record (``entity``: only that record's own
    evidence covers it, ``values`` = its ids)."""

    kind: TargetKind
    label: str
    filter: Filter | None = None
    field: str | None = None
    values: list[Any] = Field(default_factory=list)
    text: str | None = None
    must: bool = False


class Evidence(WireModel):
    """One selected piece of evidence (a record, or a chunk of a long document).

    ``id`` is the stable identity ``doc_id`` + ``chunk_id`` (the point's record id);
    ``fields`` holds the record's structured values (for grading and contradictions);
    ``text`` is the snippet an answer step would read (at most ``snippet_chars``).
    """

    id: str
    doc_id: str
    chunk_id: int = 0
    title: str | None = None
    text: str
    tokens: int = Field(ge=0)
    fields: dict[str, Any] = Field(default_factory=dict)
    fused_score: float
    rerank_score: float | None = None
    relevance: float = Field(ge=0.0, le=1.0, description="normalized score used by MMR")
    mmr_score: float | None = None
    round: int = Field(ge=1, description="round that first selected it")
    rounds: list[int] = Field(default_factory=list)
    queries: list[str] = Field(default_factory=list)
    provenance: Provenance | None = None

    @property
    def best_score(self) -> float:
        """Rerank score when there is one, otherwise the fused score."""
        return self.rerank_score if self.rerank_score is not None else self.fused_score


class CoverageItem(WireModel):
    """One target and whether selected evidence explicitly supports it."""

    kind: TargetKind
    label: str
    covered: bool
    evidence: list[str] = Field(default_factory=list)
    must: bool = False


class Contradiction(WireModel):
    """Two or more pieces of evidence about the same document disagree on a field."""

    doc_id: str
    field: str
    values: dict[str, list[str]] = Field(description="value (as text) -> evidence ids")


class Coverage(WireModel):
    """The grader's map: covered / missing targets, evidence quality, confidence."""

    items: list[CoverageItem] = Field(default_factory=list)
    quality: float = Field(default=0.0, ge=0.0, le=1.0)
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    contradictions: list[Contradiction] = Field(default_factory=list)
    grader: str = "deterministic"

    @property
    def covered(self) -> list[str]:
        """Labels of the covered targets."""
        return [i.label for i in self.items if i.covered]

    @property
    def missing(self) -> list[str]:
        """Labels of the targets no selected evidence supports."""
        return [i.label for i in self.items if not i.covered]


class RoundQuery(WireModel):
    """One query of a round: its text, why it was asked and which modes ran it."""

    text: str
    purpose: QueryPurpose
    target: str | None = Field(default=None, description="the missing item it goes after")
    modes: list[str] = Field(default_factory=list)


class SelectedRef(WireModel):
    """An evidence id and the scores it was selected with."""

    id: str
    fused_score: float
    rerank_score: float | None = None
    mmr_score: float | None = None


class Bridge(WireModel):
    """A record reached from the evidence along the entity graph, placed right after the
    record it was reached from (``after``): ``via`` is ``<edge kind>:<from id>``."""

    id: str
    after: str
    via: str
    score: float = 0.0


class RoundReport(WireModel):
    """What one round asked, found, selected and concluded."""

    round: int
    queries: list[RoundQuery]
    candidates_before_fusion: int = 0
    candidates_after_fusion: int = 0
    reranked: int | None = Field(default=None, description="None: no reranker ran")
    selected: list[SelectedRef] = Field(default_factory=list)
    new_evidence: list[str] = Field(default_factory=list)
    newly_covered: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    confidence: float = 0.0
    relaxed: list[str] = Field(default_factory=list)
    stage_ms: dict[str, float] = Field(default_factory=dict)
    errors: list[SourceError] = Field(default_factory=list)
    bridges: list[Bridge] = Field(
        default_factory=list, description="records placed after the evidence that names them"
    )
    pinned: list[str] = Field(default_factory=list, description="named records placed first")
    decision: str = ""


#: How a stop reason starts when the rounds stopped for the latency budget, not the evidence.
BUDGET_STOP = "round latency budget exceeded"


class RetrievalReport(WireModel):
    """The round-by-round trace of one multi-round execution."""

    rounds: list[RoundReport] = Field(default_factory=list)
    stop_reason: str = ""
    reranker: str = "none (not configured)"
    hyde: str = "off (no LLM configured)"
    relaxed: list[str] = Field(default_factory=list)
    no_new_streak: int = 0
    caps: ExecutorCaps = Field(default_factory=ExecutorCaps)
    total_ms: float = 0.0
    covering: dict[str, str] = Field(
        default_factory=dict,
        description="records placed in the returned head for a preference the evidence "
        "covers and the head did not: record id -> the target's label",
    )
    trimmed: list[str] | None = Field(
        default=None,
        description="what was cut to keep a state under Step Functions' 256 KB "
        "(agentic_search.wire.budget); absent when nothing was",
    )


class EvidencePack(WireModel):
    """The executor's product for an answer step: selected evidence, coverage, report."""

    evidence: list[Evidence] = Field(default_factory=list)
    coverage: Coverage = Field(default_factory=Coverage)
    report: RetrievalReport = Field(default_factory=RetrievalReport)
    tokens: int = 0
