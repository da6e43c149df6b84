"""Entity-aware rounds, pure: what the rounds fetch by name, where they walk the entity graph,
and where what they find is placed in the ranking.

* **entity_state** (round 1): the records the query names are fetched by id. They are
  *pinned* (placed first, in the order named) when the user compares them ("Cursor vs
  Windsurf", "is Tabnine better than Copilot"), looks one up ("ollama pricing", a SIMPLE
  query) or asks what one is ("what is Ollama"). A reference tool of "alternative to X" and
  excluded records ("not Terraform") are never fetched.
* **walk_seeds / predicate_walk** (the bridge round): for a bridge question (see
  :mod:`agentic_search.logic.complexity`), the round after round 1 walks the entity graph
  from round 1's best records (the seeds) to the records they
  mention or are mentioned by; the walked records are ranked by personalized PageRank times
  their similarity to the question, and the best one is placed right after the seed it was
  reached from (the evidence that names it). The seeds are round 1's first
  ``bridge_seeds``, weighted by their fused scores. Records already among the first
  ``bridge_window`` (or the first ``limit``, if fewer) are never targets, nor are hubs:
  records mentioned by more than ``bridge_max_mentions`` others (a bridge names a specific
  entity).
* **placement**: pins first, then each bridge right after its seed; the rest keeps its order.
  A pin shows the best score of the list (it is first because the query names it); a bridge
  the score of the record it is placed after (it is there because that record names it), so
  the scores shown never rise down the list. Only a bridge question places bridges.

The numbers (the least link score fetched, the seeds, the hub limit, the bridges placed, the
walks' depth and weight, the window) are the schema's ``tuning.graph``
(:class:`~agentic_search.logic.tuning.GraphTuning`).
"""

from __future__ import annotations

from collections.abc import Sequence

from agentic_search.logic.plan_rules import fusion_for
from agentic_search.logic.tuning import GraphTuning
from agentic_search.wire import (
    Bridge,
    EntitySource,
    ExecutorState,
    Fused,
    GraphSource,
    IntentState,
    QueryPlan,
    VectorSource,
)


def entity_source_for(intent: IntentState, tuning: GraphTuning) -> EntitySource | None:
    """The round-1 fetch of the records the query names (see the module docstring), or None
    when it names none (at ``tuning.min_link_score`` or more) or all it names are
    excluded."""
    excluded = set(intent.excluded_tools)
    if intent.primary_goal == "alternative-to" and intent.reference_tool:
        excluded.add(intent.reference_tool)
    ids: dict[str, str] = {}
    for link in intent.linked:
        if link.score >= tuning.min_link_score and link.id not in excluded:
            ids.setdefault(link.id, link.name)
    if not ids:
        return None
    pin = (
        intent.primary_goal == "compare"
        or intent.complexity == "simple"
        or (intent.primary_goal == "explain" and len(ids) == 1)
    )
    if not pin:
        return None
    return EntitySource(ids=list(ids), names=list(ids.values()), pin=True)


def alternatives_walk(plan: QueryPlan, intent: IntentState, tuning: GraphTuning) -> QueryPlan:
    """An "alternative to X" plan with one more ranked list: the records that point at X in
    the entity graph (those that name it as what they replace or resemble, "an open-source
    alternative to X", and those whose nearest neighbour it is; not those that name it as
    what they plug into, its add-ons, nor the records X itself names, its integrations),
    ranked by
    PageRank from X times similarity to X's own vector, fused at
    ``tuning.alternatives_weight`` (a heavier list than the others: the query asks for
    exactly these records)."""
    ref = intent.reference_tool
    if intent.primary_goal != "alternative-to" or not ref or plan.graph_source is not None:
        return plan
    aspect = plan.vector_sources[0].aspect if plan.vector_sources else None
    if aspect is None:
        return plan
    walk = GraphSource(
        seeds=[ref],
        placement="fused",
        kinds=["mention", "similar"],
        direction="in",
        reference=ref,
        aspect=aspect,
        top_k=tuning.graph_top_k * 3,
        exclude=[ref],
        mention_context="alternative",
        weight=tuning.alternatives_weight,
    )
    rationale = [*plan.rationale, f"graph walk: records next to {ref} (named by, similar to)"]
    return plan.model_copy(update={"graph_source": walk, "rationale": rationale})


def with_entity_source(plan: QueryPlan, intent: IntentState, tuning: GraphTuning) -> QueryPlan:
    """``plan`` with the entity fetch of ``intent`` (unchanged when it names no record) and,
    for "alternative to X", the walk of X's neighbourhood. A comparison's dense sources
    become the named records' own stored vectors (query by example: their closest
    competitors follow them), on the aspects the plan searched. ``tuning``: the schema's
    ``tuning.graph``."""
    plan = alternatives_walk(plan, intent, tuning)
    source = entity_source_for(intent, tuning)
    if source is None or plan.entity_source is not None:
        return plan
    rationale = [*plan.rationale, f"entity_state: {', '.join(source.names)} fetched by id"]
    update: dict[str, object] = {"entity_source": source, "rationale": rationale}
    if intent.primary_goal == "compare" and plan.vector_sources:
        aspects = list(dict.fromkeys(vs.aspect for vs in plan.vector_sources))[:2]
        top_k = max(vs.top_k for vs in plan.vector_sources)
        update["vector_sources"] = [
            VectorSource(aspect=a, top_k=top_k, query_vector_source="reference_tool", text=rid)
            for rid in source.ids
            for a in aspects
        ]
        count = len(update["vector_sources"]) + (1 if plan.sparse_source else 0)  # type: ignore[arg-type]
        count += len(plan.structured_sources)
        update["fusion"] = fusion_for(count)
        rationale.append("comparison: the named records' own vectors find their competitors")
    return plan.model_copy(update=update)


def graph_source_for(
    state: ExecutorState, aspect: str, text: str, tuning: GraphTuning
) -> GraphSource | None:
    """The bridge round's walk from round 1's best records (``tuning``: the schema's
    ``tuning.graph``), or None when round 1 found nothing."""
    first = state.round_rankings[0] if state.round_rankings else []
    if not first:
        return None
    scores = {f.id: f.score for f in state.first_fused}
    seeds = first[: tuning.bridge_seeds]
    return GraphSource(
        seeds=seeds,
        weights=seed_weights([scores.get(rid) for rid in seeds]),
        text=text,
        aspect=aspect,
        top_k=tuning.graph_top_k,
        exclude=first[: min(state.plan.limit, tuning.bridge_window)],
        max_mentions=tuning.bridge_max_mentions,
    )


def seed_weights(scores: Sequence[float | None]) -> list[float]:
    """PageRank restart weights of the seeds, in rank order: their fused scores (a seed
    without one, or with a score of 0, weighs ``1 / rank`` of the best score), so a seed
    the retrievers barely preferred restarts the walk about as often as the first."""
    top = max((s for s in scores if s), default=1.0)
    return [round(s if s and s > 0 else top / (i + 1), 6) for i, s in enumerate(scores)]


def bridges_from(
    graph_hits: Sequence[tuple[str, float, str | None]], seeds: Sequence[str], tuning: GraphTuning
) -> list[Bridge]:
    """The bridges of a walk: its best hits (id, score, via ``kind:from``) reached from a
    seed, at most ``tuning.bridges_placed`` (the schema's ``tuning.graph``), each anchored
    after the seed that names it."""
    out: list[Bridge] = []
    for rid, score, via in graph_hits:
        if len(out) >= tuning.bridges_placed:
            break
        if not via or ":" not in via:
            continue
        anchor = via.split(":", 1)[1]
        if anchor in seeds and all(b.id != rid for b in out):
            out.append(Bridge(id=rid, after=anchor, via=via, score=round(score, 6)))
    return out


def with_pins_and_bridges(
    ranking: Sequence[Fused], pins: Sequence[str], bridges: Sequence[Bridge]
) -> list[Fused]:
    """``ranking`` with the pins first (in order; a pin not in the ranking is added), each at
    the list's best score, and each bridge moved right after its anchor (after the pins when
    the anchor is absent) at the score of the record it follows (see the module docstring):
    the scores of the list returned never rise down the list when ``ranking``'s do not."""
    if not pins and not bridges:
        return list(ranking)
    by_id = {f.id: f for f in ranking}
    top = max((f.fused for f in ranking), default=1.0)
    best = max((f.score for f in ranking), default=1.0)

    def entry(rid: str, source: str, fused: float, score: float) -> Fused:
        """A placed record at the scores given: its own fused entry's contributions, or a
        new entry's."""
        have = by_id.get(rid)
        if have is None:
            return Fused(rid, fused, score, 1, {source: 1.0})
        return Fused(rid, fused, score, 1, dict(have.contributions))

    pinned = [entry(rid, "entity", top, best) for rid in dict.fromkeys(pins)]
    moved = {b.id for b in bridges} | {f.id for f in pinned}
    rest = [f for f in ranking if f.id not in moved]
    out = pinned + rest
    for b in bridges:
        if b.id in {f.id for f in pinned}:
            continue
        ids = [f.id for f in out]
        at = ids.index(b.after) + 1 if b.after in ids else len(pinned)
        before = out[at - 1] if at > 0 else None
        fused, score = (before.fused, before.score) if before is not None else (top, best)
        out.insert(at, entry(b.id, f"graph:{b.via}", fused, score))
    return out


__all__ = [
    "alternatives_walk",
    "bridges_from",
    "entity_source_for",
    "graph_source_for",
    "seed_weights",
    "with_entity_source",
    "with_pins_and_bridges",
]
