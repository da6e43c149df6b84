"""FuseRerank: fuse the Map's results (relaxing filters in round 1 when too few), build and
rerank evidence for the top of the fused list, and select new evidence into the pool (MMR).

The state does more than its name says, and the name stays because the ASL, the deployed
state machine and the recorded events in ``events/`` name it:

* **it retrieves** when round 1 finds fewer than ``limit`` results: the relaxation ladder
  (:func:`relax_and_retrieve`) drops the softest filter and runs the relaxed plan's sources
  here (:func:`~agentic_search.pipeline.sources.run_sources`), step after step. Whether a
  step is needed is known only after fusing, and a ladder through the Map would cost a
  PrepareRound -> Map -> FuseRerank pass per step;
* **it embeds and reads the store**: the evidence's snippets and stored vectors (hydration,
  :mod:`~agentic_search.pipeline.evidence`) and round 1's query relevance of the head
  (:mod:`~agentic_search.pipeline.relevance`), which answer quality reads in Finalize (a
  later round notes what it brings into its head, ``relevance_due``, and measures it only
  for the head Finalize would return, :func:`~agentic_search.logic.executor.final_order`);
* **it places** the entity fetch's pins and the bridge walk's best record
  (:func:`pin_and_bridge`).
"""

from __future__ import annotations

import time

import numpy as np

from agentic_search.dependencies import Dependencies
from agentic_search.logic.executor import (
    bridges_from,
    final_order,
    relax_step,
    with_pins_and_bridges,
)
from agentic_search.logic.fusion import kept_entries, rrf
from agentic_search.logic.selection import select_evidence
from agentic_search.logic.tuning import GraphTuning
from agentic_search.pipeline.access import as_caller
from agentic_search.pipeline.evidence import build_evidence, count_tokens
from agentic_search.pipeline.relevance import query_relevance, settle_relevance, word_relevance
from agentic_search.pipeline.rerank import rerank_candidates
from agentic_search.pipeline.sources import merge, run_sources
from agentic_search.wire import (
    Bridge,
    Evidence,
    ExecutorState,
    Fused,
    QueryPlan,
    RankedList,
    RetrievedList,
    RoundReport,
    RoundWork,
    SearchState,
    SelectedRef,
    elapsed_ms,
    error_message,
)

#: Each round's fused ranking is kept to this many ids in the state (the final ranking never
#: returns more than 100).
RANKING_KEEP = 300


@as_caller
def fuse_rerank(state: SearchState, deps: Dependencies) -> SearchState:
    """FuseRerank: fuse the Map's results of ``state.round`` into the executor state.

    Raises:
        ValueError: when the state has no executor state or no round.
    """
    ex, work = state.need_executor(), state.need_round()
    for res in work.results:  # a RetrieveFailed result carries the Lambda error's cause
        if res.error is not None:  # replaced, not changed: a kept input shares the error
            res.error = res.error.model_copy(update={"message": error_message(res.error.message)})
    fuse_round(deps, ex, work)
    return state


def fuse_round(deps: Dependencies, state: ExecutorState, work: RoundWork) -> RoundWork:
    """Fuse the round's results (relaxing filters in round 1 when too few), build and
    rerank evidence for the top of the fused list and select new evidence into the pool.
    Keeps in the state only the hits of candidates that can still be returned."""
    rnd = work.index
    rep = work.report
    stage = rep.stage_ms
    if "retrieve" not in stage:
        stage["retrieve"] = max((r.ms for r in work.results), default=0.0)
    # the Map's items ran side by side: their start-up overlapped
    work.setup_ms += max((r.setup_ms for r in work.results), default=0.0)
    intent = state.intent
    results = list(work.results)
    t = time.perf_counter()
    fused, used = merge(results, work.plan.fusion, work.plan.rrf_k)
    if rnd == 1:
        state.fusion_used = used
        fused, results = relax_and_retrieve(deps, state, work.plan, fused, results, rep)
    stage["fusion"] = elapsed_ms(t)
    ok = [r for r in results if r.error is None]
    rep.errors += [r.error for r in results if r.error is not None]
    rep.candidates_before_fusion = sum(len(r.hits) for r in ok)
    rep.candidates_after_fusion = len(fused)
    state.candidates_before += rep.candidates_before_fusion
    state.candidates_after = max(state.candidates_after, len(fused))
    state.round_rankings.append([f.id for f in fused[:RANKING_KEEP]])
    ranking = pin_and_bridge(state, work, results, fused, deps.schema.tuning.graph)
    keep_n = max(state.plan.limit, state.caps.selection_pool, state.caps.rerank_top_n)
    if rnd == 1:  # only what can still be returned: the state crosses every step as JSON
        state.first_fused = kept_entries(fused, keep_n)

    t = time.perf_counter()
    reranker = deps.reranker
    pool_n = max(state.caps.selection_pool, state.caps.rerank_top_n if reranker else 0)
    fill = rnd == 1  # a later round selects only what covers something missing (no MMR fill)
    read = build_evidence(
        deps, work.plan, intent, ok, ranking[:pool_n], rnd, state.caps.snippet_chars, fill
    )
    evidence = read.evidence
    stage["evidence"] = elapsed_ms(t)
    # After the evidence: the head's stored vectors it read (with every aspect) are in the
    # store's record cache, so only the rest of the head is read here.
    if rnd == 1:  # the absolute match of what can be returned (answer quality reads it)
        head = [f.id for f in ranking[: state.plan.limit]]
        state.relevance = query_relevance(deps, work.plan, results, head)
        state.word_relevance = word_relevance(deps, work.plan, intent)
    elif state.relevance:  # what a later round brings into its head, to the same query:
        # measured at the round's end for those Finalize would return (most never are)
        due = state.relevance_due
        for f in ranking[: state.plan.limit]:
            if f.id not in state.relevance and f.id not in due:
                due[f.id] = rnd
    t = time.perf_counter()
    evidence, err = rerank_candidates(reranker, intent.query, evidence, state.caps.rerank_top_n)
    if reranker is not None:
        stage["rerank"] = elapsed_ms(t)
        if err is None:
            rep.reranked = min(len(evidence), state.caps.rerank_top_n)
            state.rerank_scores.update(
                {e.id: e.rerank_score for e in evidence if e.rerank_score is not None}
            )
        else:
            rep.errors.append(err)

    t = time.perf_counter()
    missing_targets = (
        [
            t_
            for t_, item in zip(state.targets, state.coverage.items, strict=False)
            if not item.covered
        ]
        if state.coverage.items
        else list(state.targets)
    )
    seeds = [t_ for t_ in missing_targets if rnd > 1 or t_.kind in ("preference", "constraint")]

    def select(vectors: dict[str, np.ndarray]) -> list[Evidence]:
        return select_evidence(
            evidence,
            vectors,
            max_docs=state.caps.max_docs,
            fill=fill,
            max_tokens=state.caps.max_total_tokens,
            max_chunks_per_doc=state.caps.max_chunks_per_doc,
            mmr_lambda=state.caps.mmr_lambda,
            must_phrases=intent.must_preserve_terms,
            seed_targets=[(lambda e, t_=t_: deps.matcher.supports(t_, e)) for t_ in seeds],
            already=state.pool,
            # Stored counts first; only candidates without one whose budget check matters
            # get tokenized.
            count_tokens=lambda e: e.tokens or count_tokens(deps, [e.text])[0],
        )

    if fill:
        selected = select(read.vectors)
    else:
        # Without the fill, what is picked does not depend on the vectors (seeds only);
        # their MMR scores read the vectors of the picks and of the pool's pieces among
        # the candidates, each row of the similarity product its own: those alone are read.
        selected = select({})
        if selected:
            needed = [e.id for e in state.pool] + [e.id for e in selected]
            selected = select(read.read_vectors(deps, needed))
    # a record the round placed (a pin, a bridge) is evidence whatever MMR chose: it is why
    # the round ran, and what an answer step must read
    chosen = {e.id for e in selected}
    placed_ids = set(work.report.pinned) | {b.id for b in work.report.bridges}
    selected += [e for e in evidence if e.id in placed_ids and e.id not in chosen]
    selected = read.with_provenance(deps, selected)  # what the pool keeps, and nothing else
    stage["select"] = elapsed_ms(t)
    pooled = {e.id: e for e in state.pool}
    work.new_ids = [e.id for e in selected if e.id not in pooled]
    for e in selected:
        if e.id in pooled:
            old = pooled[e.id]
            pooled[e.id] = old.model_copy(
                update={
                    "rounds": sorted({*old.rounds, rnd}),
                    "queries": list(dict.fromkeys([*old.queries, *e.queries])),
                }
            )
        else:
            pooled[e.id] = e
    state.pool = list(pooled.values())
    rep.selected = [
        SelectedRef(
            id=e.id,
            fused_score=e.fused_score,
            rerank_score=e.rerank_score,
            mmr_score=e.mmr_score,
        )
        for e in selected
    ]
    work.found_any = bool(ranking)
    keep = (
        {f.id for f in fused[:keep_n]}
        | set(state.relaxed_ids)
        | set(state.pins)
        | {b.id for b in state.bridges}
    )
    state.retrieved += [r.pruned(keep) for r in results]
    placing = rnd > 1 and any(t.kind == "preference" for t in state.targets)
    if rnd > 1 and (state.relevance_due or placing):
        # what Finalize would return were this the last round: the relevance of those a
        # later round brought into a head, from that round's lists (a later round may
        # measure a few more ids, never those outside a head); with the pool's coverage
        # now (GradeRound grades the same pool next), a record placed in the head for a
        # preference this round covered is measured too, from the round it was selected in
        coverage = deps.grader.grade(state.targets, state.pool) if placing else None
        head = final_order(state, deps.schema.chunking is not None, coverage)[: state.plan.limit]
        for f in head:
            new = f.id not in state.relevance and f.id not in state.relevance_due
            if new and f.id in pooled:
                state.relevance_due[f.id] = pooled[f.id].round
        settle_relevance(deps, state, [f.id for f in head])
    work.results = []
    return work


def pin_and_bridge(
    state: ExecutorState,
    work: RoundWork,
    results: list[RetrievedList],
    fused: list[Fused],
    tuning: GraphTuning,
) -> list[Fused]:
    """The round's fused list with what its entity fetch pins and its graph walk bridges
    placed (see :mod:`agentic_search.logic.executor.entity_rounds`); the pins and bridges are kept
    in the state for the final ranking and listed in the round's report. Only a bridge
    question (``intent.bridge``) places bridges, whatever walk a plan asked for, at most
    ``tuning.bridges_placed`` (the schema's ``tuning.graph``)."""
    by_name = {r.name: r for r in results if r.error is None}
    if (entity := by_name.get("entity")) is not None and not state.pins:
        state.pins = [h.id for h in entity.hits]
        work.report.pinned = list(state.pins)
    bridges: list[Bridge] = []
    graph = by_name.get("graph")
    walk = work.plan.graph_source
    bridge_walk = walk is not None and walk.placement == "bridge" and state.intent.bridge
    if graph is not None and walk is not None and bridge_walk:
        hits = [(h.id, h.score, h.via) for h in graph.hits]
        bridges = bridges_from(hits, walk.seeds, tuning)
        state.bridges += bridges
        work.report.bridges = bridges
    return with_pins_and_bridges(fused, state.pins, state.bridges if bridges or state.pins else [])


def relax_and_retrieve(
    deps: Dependencies,
    state: ExecutorState,
    plan: QueryPlan,
    fused: list[Fused],
    results: list[RetrievedList],
    rep: RoundReport,
) -> tuple[list[Fused], list[RetrievedList]]:
    """The relaxation ladder: while fewer than ``limit`` results, drop the softest
    non-must filter and append what the relaxed plan finds (after the strict results)."""
    current = plan
    have = [f.id for f in fused]
    relaxed_ids: list[str] = []
    while len(have) < plan.limit:
        step = relax_step(current, deps.schema)
        if step is None:
            break
        current, dropped = step
        label = dropped.label()
        state.report.relaxed.append(label)
        rep.relaxed.append(label)
        more, _ = run_sources(deps, current)
        results = [*results, *more]
        extra, _ = merge(more, current.fusion, current.rrf_k)
        for f in extra:
            if f.id not in have:
                have.append(f.id)
                relaxed_ids.append(f.id)
    if not relaxed_ids:
        return fused, results
    state.relaxed_ids = relaxed_ids
    return rrf([RankedList("round1", have)], plan.rrf_k), results


__all__ = ["RANKING_KEEP", "fuse_rerank", "fuse_round", "pin_and_bridge", "relax_and_retrieve"]
