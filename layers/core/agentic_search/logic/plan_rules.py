"""The plan rules every plan is held to, whoever planned it (the rules or an LLM): known
aspects, topK within 1..200, filters on the schema's allowlist, a fusion method that fits the
number of ranked lists (three or more lists: RRF only); and the one rule for how deep a
source reads (:func:`top_k`)."""

from __future__ import annotations

from agentic_search.logic.filters import filter_problems
from agentic_search.logic.schema import DomainSchema
from agentic_search.logic.tuning import DepthTuning, SourceKind
from agentic_search.wire import TOP_K_MAX, TOP_K_MIN, IntentState, QueryPlan


def top_k(
    depth: DepthTuning, limit: int, source: SourceKind = "dense", floor: int | None = None
) -> int:
    """How many hits a source of a plan reads for a request of ``limit`` results: ``limit``
    times the source kind's hits per result of ``depth`` (the schema's ``tuning.depth``,
    :class:`~agentic_search.logic.tuning.DepthTuning`), at least ``floor`` (default: the
    kind's least; a dense source passes its aspect's ``default_top_k``), within
    ``TOP_K_MIN..TOP_K_MAX``. The one rule every planner (rules, LLM, later rounds) uses."""
    per_result, least = depth.of(source)
    least = least if floor is None else floor
    return max(TOP_K_MIN, min(TOP_K_MAX, max(least, limit * per_result)))


class PlanError(ValueError):
    """A plan that breaks the plan rules; ``reasons`` lists each."""

    def __init__(self, reasons: list[str]) -> None:
        self.reasons = reasons
        super().__init__("invalid query plan: " + "; ".join(reasons))


def reference_names(intent: IntentState) -> set[str]:
    """The reference record's names, lower-cased: as the query wrote it and, when that was a
    linked (possibly misspelt) name, as the record spells it. Query by example searches the
    reference's vectors and values, never these words (they favour records that mention it)."""
    names = {(intent.reference_tool_name or "").lower()} - {""}
    for link in intent.entities:
        if link.kind == "entity" and link.id == intent.reference_tool:
            names |= {link.name.lower(), link.surface.lower()}
    return names


def validate_plan(plan: QueryPlan, schema: DomainSchema) -> None:
    """Check a plan against the schema and the plan rules.

    Rules: at least one source; aspects exist; topK within 1..200; reference-tool vectors need a
    reference id; filters allowed by the schema; fusion 'none' only with one source; RRF when
    there are 3 or more sources (seed rule); weighted sum / DBSF need 2+ sources.

    Raises:
        PlanError: listing every violation.
    """
    reasons: list[str] = []
    if plan.domain != schema.name:
        reasons.append(f"plan is for domain {plan.domain!r}, schema is {schema.name!r}")
    n = plan.source_count
    if not plan.any_source:
        reasons.append("plan has no sources")
    if plan.graph_source is not None and plan.graph_source.aspect not in schema.aspect_names:
        reasons.append(f"unknown aspect {plan.graph_source.aspect!r} for the graph walk")
    for vs in plan.vector_sources:
        if vs.aspect not in schema.aspect_names:
            reasons.append(f"unknown aspect {vs.aspect!r} (known: {schema.aspect_names})")
        if not TOP_K_MIN <= vs.top_k <= TOP_K_MAX:
            reasons.append(f"topK {vs.top_k} for {vs.aspect!r} outside {TOP_K_MIN}..{TOP_K_MAX}")
        if vs.query_vector_source != "reference_tool" and not (vs.text or "").strip():
            reasons.append(f"vector source {vs.aspect!r} has no query text")
        if vs.query_vector_source == "reference_tool" and not vs.text:
            reasons.append(f"vector source {vs.aspect!r} uses a reference tool but names none")
    for flt in plan.filters:
        reasons += filter_problems(schema, flt)
    for src in plan.structured_sources:
        for flt in [*src.filters, *src.preferences]:
            reasons += filter_problems(schema, flt)
    if plan.fusion == "none" and n > 1:
        reasons.append(f"fusion 'none' needs exactly one source, plan has {n}")
    if n >= 3 and plan.fusion != "rrf":
        reasons.append(f"RRF is required for 3+ sources (plan has {n}, fusion {plan.fusion!r})")
    if plan.fusion in ("weighted_sum", "dbsf") and n < 2:
        reasons.append(f"fusion {plan.fusion!r} needs 2+ sources")
    if reasons:
        raise PlanError(reasons)


def fusion_for(source_count: int) -> str:
    """The seed's fusion rule: 3+ sources -> rrf, 2 -> weighted_sum, else none."""
    if source_count >= 3:
        return "rrf"
    if source_count == 2:
        return "weighted_sum"
    return "none"
