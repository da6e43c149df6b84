"""A domain's tuning: every number the search's rules are tuned with, in one typed home.

:class:`Tuning` is the ``tuning:`` block of a domain YAML (:attr:`DomainSchema.tuning
<agentic_search.logic.schema.DomainSchema.tuning>`), in groups, each read where its rule is:

* ``coverage``: the coverage confidence and the target weights
  (:class:`~agentic_search.logic.coverage.DeterministicGrader`; the later rounds ask for, and
  the evidence pack keeps first, the heaviest missing targets);
* ``intent``: the rule-based intent confidence
  (:mod:`agentic_search.logic.intent_rules`) and the rule-based plan's confidence
  (:mod:`agentic_search.logic.planner`);
* ``linking``: the fuzzy entity linker's thresholds (:mod:`agentic_search.logic.linking`);
* ``graph``: the entity-aware rounds' fetch, walks and bridges
  (:mod:`agentic_search.logic.executor.entity_rounds`);
* ``depth``: how deep each kind of source reads
  (:func:`agentic_search.logic.plan_rules.top_k`);
* ``executor``: the executor's knobs that are the domain's, not the request's
  (:class:`~agentic_search.wire.ExecutorCaps`: the same field definitions).

A domain's block is partial: it names only what it changes, the rest keeps its default; an
unknown key or a value out of bounds fails the schema's load with the key named. The defaults
are the values the rules were chosen with (the measurements behind them: docs/benchmarks.md);
``agentic-search config --domain NAME`` prints a domain's effective tuning and what it
overrides. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentic_search.wire import TOP_K_MAX, TOP_K_MIN, ExecutorCaps, FeedbackVector


class _Group(BaseModel):
    """A group of tuning knobs: unknown keys rejected, values fixed once loaded."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class CoverageTuning(_Group):
    """The coverage confidence of the deterministic grader: ``covered_weight`` times the
    weighted share of the targets the evidence covers, plus ``quality_weight`` times the share
    of evidence two or more retrieval modes found, less ``contradiction_penalty`` per
    contradiction, floored at 0; each target weighs its kind's weight."""

    covered_weight: float = Field(
        default=0.85,
        ge=0.0,
        le=1.0,
        description="weight, in the coverage confidence, of the share of the targets covered "
        "(each target counted at its kind's weight)",
    )
    quality_weight: float = Field(
        default=0.15,
        ge=0.0,
        le=1.0,
        description="weight, in the coverage confidence, of the share of selected evidence that "
        "two or more retrieval modes (dense, sparse, structured) found",
    )
    contradiction_penalty: float = Field(
        default=0.1,
        ge=0.0,
        le=1.0,
        description="taken from the coverage confidence per field on which evidence about the "
        "same document disagrees",
    )
    constraint_weight: float = Field(
        default=3.0,
        gt=0.0,
        le=100.0,
        description="weight of a hard constraint target (also the order in which missing "
        "targets are asked for and kept in the evidence pack: heaviest first)",
    )
    phrase_weight: float = Field(
        default=3.0,
        gt=0.0,
        le=100.0,
        description="weight of a quoted phrase or must-preserve term target",
    )
    entity_weight: float = Field(
        default=3.0,
        gt=0.0,
        le=100.0,
        description="weight of a record the query names (covered only by its own evidence)",
    )
    preference_weight: float = Field(
        default=2.0,
        gt=0.0,
        le=100.0,
        description="weight of a soft vocabulary preference target",
    )
    term_weight: float = Field(
        default=1.0,
        gt=0.0,
        le=100.0,
        description="weight of an analysed query term target",
    )

    def weight(self, kind: str) -> float:
        """The weight of a target of ``kind`` (a :data:`~agentic_search.wire.TargetKind`)."""
        weights = {
            "constraint": self.constraint_weight,
            "phrase": self.phrase_weight,
            "entity": self.entity_weight,
            "preference": self.preference_weight,
        }
        return weights.get(kind, self.term_weight)


class IntentTuning(_Group):
    """The rule-based reading's confidence: ``base``, plus ``per_vocabulary`` for each
    vocabulary matched (up to ``vocabularies_counted``), ``reference`` for a reference record,
    ``per_constraint`` for each constraint (up to ``constraints_counted``), at most ``cap``;
    ``keywords_only`` or ``nothing`` when nothing was recognised. The rule-based plan's
    confidence: ``plan_base`` plus ``plan_per_intent`` times the intent's, at most
    ``plan_cap``."""

    base: float = Field(
        default=0.35,
        ge=0.0,
        le=1.0,
        description="the intent confidence of a reading that recognised something, before what "
        "it recognised",
    )
    per_vocabulary: float = Field(
        default=0.15,
        ge=0.0,
        le=1.0,
        description="added to the intent confidence per vocabulary with a value matched",
    )
    vocabularies_counted: int = Field(
        default=3,
        ge=0,
        le=20,
        description="the most matched vocabularies that add to the intent confidence",
    )
    reference: float = Field(
        default=0.1,
        ge=0.0,
        le=1.0,
        description="added to the intent confidence when the query names a reference record",
    )
    per_constraint: float = Field(
        default=0.05,
        ge=0.0,
        le=1.0,
        description="added to the intent confidence per hard constraint read",
    )
    constraints_counted: int = Field(
        default=2,
        ge=0,
        le=20,
        description="the most constraints that add to the intent confidence",
    )
    cap: float = Field(
        default=0.95,
        ge=0.0,
        le=1.0,
        description="the intent confidence of the rules, at most (the rules never claim certainty)",
    )
    keywords_only: float = Field(
        default=0.3,
        ge=0.0,
        le=1.0,
        description="the intent confidence when nothing was recognised but the query has "
        "content words",
    )
    nothing: float = Field(
        default=0.1,
        ge=0.0,
        le=1.0,
        description="the intent confidence when nothing was recognised and no content word is left",
    )
    plan_base: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="the rule-based plan's confidence before the intent's",
    )
    plan_per_intent: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="weight of the intent confidence in the rule-based plan's confidence",
    )
    plan_cap: float = Field(
        default=0.95,
        ge=0.0,
        le=1.0,
        description="the rule-based plan's confidence, at most",
    )


class LinkingTuning(_Group):
    """The fuzzy entity linker's thresholds (:mod:`agentic_search.logic.linking`)."""

    fuzzy_min_score: float = Field(
        default=0.7,
        ge=0.0,
        le=1.0,
        description="the least score (one less the edits per letter) of a fuzzy link or correction",
    )
    capitalized_min_score: float = Field(
        default=0.8,
        ge=0.0,
        le=1.0,
        description="the least score at which a capitalized word inside the query is linked to "
        "a one-word name: one edit in a short word (Mars: mgrs, Bout: Bolt) is as often a "
        "proper noun the catalog lacks, written as meant, as a misspelt name",
    )
    ordinary_min_letters: int = Field(
        default=5,
        ge=1,
        le=50,
        description="a word one edit from both a one-word name and an ordinary word of the "
        "catalog is corrected to the word from this many letters; a shorter one is left as "
        "written (bout: about, out, Bolt)",
    )
    brand_prefix_min_share: float = Field(
        default=0.05,
        ge=0.0,
        le=1.0,
        description="a first word that opens at least this fraction of the catalog's names is "
        "a brand word, and a name is also linked without it (DynamoDB: Amazon DynamoDB); a "
        "first word of a few names (GitHub Copilot) is part of the name",
    )
    brand_prefix_min_names: int = Field(
        default=10,
        ge=1,
        le=1_000_000,
        description="a brand word opens at least this many names, whatever the share (a small "
        "catalog's shared first words are coincidence)",
    )


class GraphTuning(_Group):
    """The entity-aware rounds (:mod:`agentic_search.logic.executor.entity_rounds`): the
    fetch of named records, the "alternative to X" walk and the bridge round's walk."""

    min_link_score: float = Field(
        default=0.8,
        ge=0.0,
        le=1.0,
        description="links weaker than this are reported but the record is not fetched by id",
    )
    bridge_seeds: int = Field(
        default=3,
        ge=1,
        le=10,
        description="round 1's best records the bridge round walks from (PageRank restarts on "
        "them in proportion to their fused score)",
    )
    bridge_max_mentions: int = Field(
        default=3,
        ge=0,
        le=100_000,
        description="a walked record mentioned by more records than this is a hub (a general "
        "topic, such as Information Retrieval in HotpotQA), never a bridge: a bridge names a "
        "specific entity, and on HotpotQA every relevant bridge is mentioned by at most 3 "
        "records",
    )
    bridges_placed: int = Field(
        default=1,
        ge=1,
        le=10,
        description="bridges placed per bridge round, each right after the seed that names it",
    )
    graph_top_k: int = Field(
        default=10,
        ge=1,
        le=TOP_K_MAX // 3,
        description="walked records the bridge walk returns (the best are placed, the others "
        "reported); the alternative-to walk reads three times as many",
    )
    max_addons: int = Field(
        default=100,
        ge=0,
        le=1000,
        description='add-ons of the reference of "alternative to X" excluded at most (those '
        "named after it first, shortest names first, then those that name it as what they "
        "plug into): the plan carries their ids through every state",
    )
    alternatives_weight: float = Field(
        default=2.0,
        gt=0.0,
        le=10.0,
        description="RRF weight of the alternative-to walk's ranked list (the records that "
        "name X or are nearest to it) among the plan's lists: two lists' worth by default "
        "(chosen on the golden set's odd ids, checked on the even ids, where it does no harm: "
        "docs/benchmarks.md)",
    )
    bridge_window: int = Field(
        default=10,
        ge=0,
        le=TOP_K_MAX,
        description="a record already ranked this high in round 1 (or within the limit, if "
        "smaller) is never a bridge",
    )


SourceKind = Literal["dense", "structured", "sparse"]


class DepthTuning(_Group):
    """How many hits a source reads per result asked for, and at least, by kind of source
    (:func:`agentic_search.logic.plan_rules.top_k`): fusion and selection need a pool beyond
    the page, and BM25's top ranks are noisier on paraphrased queries than the dense ones."""

    dense_per_result: int = Field(
        default=2, ge=1, le=TOP_K_MAX, description="hits a dense source reads per result asked"
    )
    dense_least: int = Field(
        default=30,
        ge=TOP_K_MIN,
        le=TOP_K_MAX,
        description="hits a dense source reads at least when its planner gives no floor of "
        "its own (the planners give one: an aspect's default_top_k, a later round's)",
    )
    structured_per_result: int = Field(
        default=2,
        ge=1,
        le=TOP_K_MAX,
        description="hits a structured source reads per result asked",
    )
    structured_least: int = Field(
        default=30,
        ge=TOP_K_MIN,
        le=TOP_K_MAX,
        description="hits a structured source reads at least",
    )
    sparse_per_result: int = Field(
        default=3, ge=1, le=TOP_K_MAX, description="hits the BM25 source reads per result asked"
    )
    sparse_least: int = Field(
        default=50,
        ge=TOP_K_MIN,
        le=TOP_K_MAX,
        description="hits the BM25 source reads at least",
    )

    def of(self, source: SourceKind) -> tuple[int, int]:
        """(hits per result asked, hits at least) of a source of kind ``source``."""
        if source == "sparse":
            return self.sparse_per_result, self.sparse_least
        if source == "structured":
            return self.structured_per_result, self.structured_least
        return self.dense_per_result, self.dense_least


_BOUNDS = ("ge", "gt", "le", "lt")


def _caps_field(name: str) -> Any:
    """:class:`~agentic_search.wire.ExecutorCaps`' own definition of the field ``name``: its
    default, bounds and description (not its camelCase wire alias: the YAML is snake_case)."""
    got = ExecutorCaps.model_fields[name]
    bounds = {k: getattr(m, k) for m in got.metadata for k in _BOUNDS if hasattr(m, k)}
    return Field(default=got.default, description=got.description, **bounds)


class ExecutorTuning(_Group):
    """The executor's knobs that are the domain's (:class:`~agentic_search.wire.ExecutorCaps`
    defines each: default, bounds, meaning); the request and the settings give the rest
    (``max_rounds``, ``max_total_docs``, ``round_budget_ms``), the embedder's calibration
    ``later_dense_weight`` (:meth:`DomainSchema.later_dense_weight_for
    <agentic_search.logic.schema.DomainSchema.later_dense_weight_for>`)."""

    max_docs: int = _caps_field("max_docs")
    max_total_tokens: int = _caps_field("max_total_tokens")
    max_chunks_per_doc: int = _caps_field("max_chunks_per_doc")
    confidence_threshold: float = _caps_field("confidence_threshold")
    max_no_new_rounds: int = _caps_field("max_no_new_rounds")
    selection_pool: int = _caps_field("selection_pool")
    rerank_top_n: int = _caps_field("rerank_top_n")
    mmr_lambda: float = _caps_field("mmr_lambda")
    feedback_docs: int = _caps_field("feedback_docs")
    feedback_terms: int = _caps_field("feedback_terms")
    feedback_vector: FeedbackVector = _caps_field("feedback_vector")
    rocchio_alpha: float = _caps_field("rocchio_alpha")
    later_round_weight: float = _caps_field("later_round_weight")
    snippet_chars: int = _caps_field("snippet_chars")

    def caps(self, **per_request: Any) -> ExecutorCaps:
        """The executor's caps: these knobs, and ``per_request`` (``max_rounds``,
        ``max_total_docs``, ``round_budget_ms``, ``later_dense_weight``; a field left out
        keeps ExecutorCaps' default)."""
        return ExecutorCaps(**self.model_dump(), **per_request)


class Tuning(_Group):
    """A domain's tuning (see the module docstring): the ``tuning:`` block of its YAML."""

    coverage: CoverageTuning = Field(
        default_factory=CoverageTuning,
        description="the coverage confidence and the weights of the coverage targets",
    )
    intent: IntentTuning = Field(
        default_factory=IntentTuning,
        description="the rule-based intent's and plan's confidence",
    )
    linking: LinkingTuning = Field(
        default_factory=LinkingTuning, description="the fuzzy entity linker's thresholds"
    )
    graph: GraphTuning = Field(
        default_factory=GraphTuning,
        description="the entity-aware rounds: the fetch of named records, the walks, bridges",
    )
    depth: DepthTuning = Field(
        default_factory=DepthTuning, description="how deep each kind of source reads"
    )
    executor: ExecutorTuning = Field(
        default_factory=ExecutorTuning,
        description="the executor's knobs that are the domain's, not the request's",
    )

    def overrides(self) -> dict[str, dict[str, Any]]:
        """The keys the domain's block sets, by group (``{"coverage": {"term_weight": 2.0}}``),
        as JSON values; empty for the defaults."""
        out: dict[str, dict[str, Any]] = {}
        for group in type(self).model_fields:
            knobs: BaseModel = getattr(self, group)
            if knobs.model_fields_set:
                out[group] = knobs.model_dump(mode="json", include=knobs.model_fields_set)
        return out

    def differences(self) -> dict[str, dict[str, Any]]:
        """The knobs whose value is not the default, by group, as JSON values (a knob set to
        its default is no difference): what the schema's fingerprint covers."""
        out: dict[str, dict[str, Any]] = {}
        for group in type(self).model_fields:
            knobs: BaseModel = getattr(self, group)
            changed = knobs.model_dump(mode="json", exclude_defaults=True)
            if changed:
                out[group] = changed
        return out


__all__ = [
    "CoverageTuning",
    "DepthTuning",
    "ExecutorTuning",
    "GraphTuning",
    "IntentTuning",
    "LinkingTuning",
    "SourceKind",
    "Tuning",
]
