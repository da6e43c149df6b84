"""The executor's round policy, pure: the gate, what the next round asks, the relaxation
ladder, the stopping rule, the final ranking and the evidence pack (the nodes of the
executor's round graph that do no I/O; ARCHITECTURE.md). The split of a round's plan into the Map's
items is :mod:`.subqueries`; what entity-aware rounds fetch, walk and place is
:mod:`.entity_rounds`.

The final ranking fuses each round's fused list by weighted RRF (Cormack, Clarke, Buettcher
2009), round 1 with weight 1 and later rounds with ``later_round_weight`` (the RM3
interpolation with the original query); with one round it is round 1's list unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agentic_search.logic.chunking import best_chunks
from agentic_search.logic.complexity import caps_for
from agentic_search.logic.coverage import CoverageGrader, coverage_targets
from agentic_search.logic.executor.entity_rounds import with_entity_source, with_pins_and_bridges
from agentic_search.logic.executor.later_rounds import bridge_round_plan, later_round_plan
from agentic_search.logic.executor.queries import round_one_plan
from agentic_search.logic.fusion import rrf
from agentic_search.logic.plan_rules import validate_plan
from agentic_search.logic.schema import DomainSchema
from agentic_search.logic.text import Analyzer, default_analyzer
from agentic_search.logic.tuning import CoverageTuning
from agentic_search.wire import (
    BUDGET_STOP,
    Coverage,
    CoverageTarget,
    Evidence,
    EvidencePack,
    ExecutorCaps,
    ExecutorState,
    Filter,
    Fused,
    IntentState,
    QueryPlan,
    RankedList,
    RoundQuery,
)


def executor_gate(
    plan: QueryPlan,
    intent: IntentState,
    schema: DomainSchema,
    caps: ExecutorCaps | None = None,
    *,
    reranker: str | None = None,
    hyde: str | None = None,
    analyzer: Analyzer | None = None,
) -> ExecutorState:
    """Validate the plan, fix the caps and start the state and report.

    A plan without sources is a non-retrieval plan: ``continue_search`` is False and the
    report says why. The caps are validated by :class:`ExecutorCaps` itself (bounded fields);
    without ``caps``, the schema's ``tuning.executor`` with the per-request fields at their
    defaults.

    Raises:
        PlanError: for any other plan violation (unknown aspect, bad fusion, ...).
    """
    caps = caps or schema.tuning.executor.caps()
    caps = caps_for(intent, caps)
    plan = with_entity_source(plan, intent, schema.tuning.graph)
    state = ExecutorState(plan=plan, intent=intent, caps=caps)
    state.report.caps = caps
    state.report.reranker = reranker or "none (not configured)"
    state.report.hyde = hyde or "off (no LLM configured)"
    if not plan.any_source:
        state.continue_search = False
        state.report.stop_reason = "plan has no retrieval sources (non-retrieval strategy)"
        return state
    validate_plan(plan, schema)
    state.targets = coverage_targets(intent, schema, analyzer or default_analyzer())
    return state


def prepare_round_queries(
    state: ExecutorState,
    schema: DomainSchema,
    *,
    hyde_passage: str | None = None,
    analyzer: Analyzer | None = None,
) -> tuple[QueryPlan | None, list[RoundQuery]]:
    """The plan of the next round and the queries it asks (for the report).

    Round 1: the plan itself; each must-preserve term is put verbatim into the sparse query if
    missing; ``hyde_passage`` (written by the caller when
    :func:`~agentic_search.logic.executor.queries.hyde_status` says on) is added as an extra
    dense query on the main aspect. Rounds 2+: :mod:`agentic_search.logic.executor.later_rounds`.
    Returns ``None`` as the plan when there is nothing new to ask.
    """
    if state.round_index == 0:
        return round_one_plan(state, schema, hyde_passage)
    if state.intent.bridge and not state.walked:
        return bridge_round_plan(state, schema)
    return later_round_plan(state, schema, analyzer or default_analyzer())


def relax_step(plan: QueryPlan, schema: DomainSchema) -> tuple[QueryPlan, Filter] | None:
    """Drop the softest relaxable hard filter of ``plan``.

    Softest = lowest ``relax_rank`` of its field in the schema (ties: the later filter).
    Filters with ``must`` and fields without a ``relax_rank`` are never relaxed. Structured
    sources lose the same filter. Returns None when nothing can be relaxed.
    """
    options = [
        (schema.fields[f.field].relax_rank, -i, f)
        for i, f in enumerate(plan.filters)
        if not f.must and f.field in schema.fields and schema.fields[f.field].relax_rank
    ]
    if not options:
        return None
    _, neg_index, drop = min(options, key=lambda o: (o[0], o[1]))
    # Removed by position and equality, never by label: a must filter with the same label
    # (the same condition stated as non-negotiable) stays.
    structured = [
        s.model_copy(update={"filters": [f for f in s.filters if f != drop]})
        for s in plan.structured_sources
    ]
    relaxed = plan.model_copy(
        update={
            "filters": [f for i, f in enumerate(plan.filters) if i != -neg_index],
            "structured_sources": structured,
        }
    )
    return relaxed, drop


def should_continue(
    state: ExecutorState, new_evidence: Sequence[str], round_ms: float, found_any: bool
) -> tuple[bool, str]:
    """The deterministic stopping policy after a round; updates ``no_new_streak``.

    Stops (in this order of precedence) when: the round found no candidates at all; the round
    placed a bridge (a bridge question's second hop); goes on when a bridge question has not
    walked the graph yet (budget and rounds permitting); stops when the confidence reaches
    ``confidence_threshold``; ``max_rounds`` are done; ``max_no_new_rounds``
    rounds in a row added no new evidence; the round took longer than ``round_budget_ms``.
    """
    caps = state.caps
    report = state.report
    report.no_new_streak = 0 if new_evidence else report.no_new_streak + 1
    conf = state.coverage.confidence
    if not found_any and state.round_index == 1:
        return False, "no candidates: the sources found nothing for this query and filters"
    placed_now = bool(state.bridges) and not any(r.bridges for r in report.rounds)
    if placed_now:
        # this round (its report is appended after this decision) placed the bridge: the
        # question's second hop is the record the evidence names; later rounds only re-rank
        return False, "bridge placed: the record the evidence names answers the second hop"
    if (
        state.intent.bridge
        and not state.walked
        and state.round_index < caps.max_rounds
        and round_ms <= caps.round_budget_ms
    ):
        return True, "continue: a bridge question; walk from the evidence to what it names"
    if conf >= caps.confidence_threshold:
        return False, f"confidence {conf:.2f} reached the threshold {caps.confidence_threshold:.2f}"
    if state.round_index >= caps.max_rounds:
        return False, f"max rounds reached ({caps.max_rounds})"
    if report.no_new_streak >= caps.max_no_new_rounds:
        return False, f"no new evidence for {report.no_new_streak} round(s)"
    if round_ms > caps.round_budget_ms:
        return (
            False,
            f"{BUDGET_STOP} ({round_ms:.0f} ms > {caps.round_budget_ms:.0f} ms)",
        )
    missing = state.coverage.missing
    why = f"missing {', '.join(missing[:5])}" if missing else "evidence still below the threshold"
    return True, f"continue: confidence {conf:.2f} < {caps.confidence_threshold:.2f}; {why}"


def final_ranking(state: ExecutorState) -> list[Fused]:
    """The candidate order: round 1's fused list alone after one round, else weighted RRF of
    the rounds' fused lists (round 1 weight 1, later rounds ``later_round_weight``); then the
    reranked ids (if any) ahead, in rerank order, within the first ``rerank_top_n``."""
    lists = [
        RankedList(f"round{i}", ids, (), 1.0 if i == 1 else state.caps.later_round_weight)
        for i, ids in enumerate(state.round_rankings, start=1)
        if ids
    ]
    if not lists:
        return []
    fused = rrf(lists, state.plan.rrf_k)
    return rerank_order(fused, state.rerank_scores, state.caps.rerank_top_n)


def final_order(
    state: ExecutorState, chunked: bool, coverage: Coverage | None = None
) -> list[Fused]:
    """The ranking Finalize returns from, its first ``plan.limit`` the candidates: round 1's
    fused list in rerank order after one ranked round, else :func:`final_ranking`; the pins
    and bridges placed (:func:`~.entity_rounds.with_pins_and_bridges`), then the records
    that cover what the head does not (:func:`covering_records`); for a ``chunked`` domain,
    each document once at its best chunk's rank. A function of what FuseRerank leaves in the
    state (no later step changes it), so FuseRerank knows after each round what Finalize
    would return were it the last (``coverage``: the pool's coverage to place for, by
    default the state's, that of the last graded round)."""
    return final_placement(state, chunked, coverage)[0]


def final_placement(
    state: ExecutorState, chunked: bool, coverage: Coverage | None = None
) -> tuple[list[Fused], list[tuple[str, str]]]:
    """:func:`final_order` and the records it placed for coverage, ``(record id, target
    label)`` (:func:`covering_records`)."""
    if ranked_rounds(state) > 1:
        ranking = final_ranking(state)
    else:
        ranking = rerank_order(state.first_fused, state.rerank_scores, state.caps.rerank_top_n)
    ranking = with_pins_and_bridges(ranking, state.pins, state.bridges)
    covering = covering_records(state, ranking, coverage)
    ranking = with_covering_records(ranking, [rid for rid, _ in covering], state.plan.limit)
    if chunked:  # each document once, at its best chunk's rank
        ranking = best_chunks(ranking, lambda f: f.id)
    return ranking, covering


def covering_records(
    state: ExecutorState, ranking: Sequence[Fused], coverage: Coverage | None = None
) -> list[tuple[str, str]]:
    """``(record id, target label)`` for each soft preference ("industries ~ Healthcare")
    the evidence pool covers while no evidence of ``ranking``'s head (its first
    ``plan.limit``) does: the best-ranked record of the evidence that covers it. A later
    round that covers a preference found that record for it, and the coverage it reports
    (and the answer's) is the returned list's only with the record in it. Query terms are
    never placed for: many records hold a word, and the head is ranked on the words."""
    limit = state.plan.limit
    head = {f.id for f in ranking[:limit]}
    at = {f.id: i for i, f in enumerate(ranking)}
    out: list[tuple[str, str]] = []
    items = (coverage or state.coverage).items
    for target, item in zip(state.targets, items, strict=False):
        if target.kind != "preference" or not item.covered or head & set(item.evidence):
            continue
        ranked = sorted((at[rid], rid) for rid in item.evidence if rid in at)
        if ranked and all(rid != ranked[0][1] for rid, _ in out):
            out.append((ranked[0][1], target.label))
    return out[:limit]


def with_covering_records(ranking: Sequence[Fused], ids: Sequence[str], limit: int) -> list[Fused]:
    """``ranking`` with the records ``ids`` moved to the last places of its first ``limit``,
    in their order there, each at its own score (they come from below those places, so the
    scores of the head never rise down the list)."""
    if not ids:
        return list(ranking)
    moved = set(ids)
    placed = [f for f in ranking if f.id in moved]
    rest = [f for f in ranking if f.id not in moved]
    at = max(0, min(limit, len(rest) + len(placed)) - len(placed))
    return rest[:at] + placed + rest[at:]


def ranked_rounds(state: ExecutorState) -> int:
    """How many rounds produced a fused ranking (a bridge round places, it does not rank)."""
    return sum(1 for ids in state.round_rankings if ids)


def rerank_order(fused: list[Fused], scores: dict[str, float], top_n: int) -> list[Fused]:
    """Within the first ``top_n`` of ``fused``, reranked ids first in descending rerank
    score (stable), then the head's unscored ids, then the rest unchanged."""
    if not scores:
        return fused
    head = fused[:top_n]
    scored = sorted((f for f in head if f.id in scores), key=lambda f: -scores[f.id])
    rest = [f for f in head if f.id not in scores]
    return scored + rest + fused[top_n:]


def finalize_evidence_pack(
    state: ExecutorState,
    grader: CoverageGrader,
    order: Sequence[str] = (),
    supports: Callable[[CoverageTarget, Evidence], bool] | None = None,
    *,
    coverage: CoverageTuning,
) -> EvidencePack:
    """Sort pooled evidence by its best available score (rerank score when every piece has
    one, else its position in ``order``, the final ranking, then relevance), trim to
    ``max_total_docs`` and ``max_total_tokens``, grade the result and attach the report.

    With ``supports``, trimming keeps coverage first: for each target the pool covers,
    heaviest first (the weights of ``coverage``, the schema's ``tuning.coverage``), the best
    piece supporting it is kept (budget permitting) before the rest fill by order.
    """
    pos = {rid: i for i, rid in enumerate(order)}
    pool = list(state.pool)
    if pool and all(e.rerank_score is not None for e in pool):
        pool.sort(key=lambda e: -(e.rerank_score or 0.0))
    else:
        pool.sort(key=lambda e: (pos.get(e.id, len(pos)), -e.relevance))
    caps = state.caps
    kept: list[Evidence] = []
    kept_ids: set[str] = set()  # the pool holds each id once: an id is its evidence
    used = 0

    def keep(ev: Evidence) -> bool:
        nonlocal used
        if len(kept) >= caps.max_total_docs or used + ev.tokens > caps.max_total_tokens:
            return False
        kept.append(ev)
        kept_ids.add(ev.id)
        used += ev.tokens
        return True

    if supports is not None:
        for target in sorted(state.targets, key=lambda t: -coverage.weight(t.kind)):
            if any(supports(target, e) for e in kept):
                continue
            for ev in pool:
                if ev.id not in kept_ids and supports(target, ev) and keep(ev):
                    break
    for ev in pool:
        if ev.id not in kept_ids:
            keep(ev)
    at = {e.id: i for i, e in enumerate(pool)}
    kept.sort(key=lambda e: at[e.id])
    coverage = grader.grade(state.targets, kept)
    return EvidencePack(evidence=kept, coverage=coverage, report=state.report, tokens=used)
