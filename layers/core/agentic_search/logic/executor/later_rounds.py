"""What rounds 2+ ask: new queries for what the coverage map still misses (soft preferences
as a structured source plus a dense query, quoted phrases and uncovered terms pushed into the
BM25 query, heaviest target first by the schema's ``tuning.coverage`` weights, each target
asked once) and RM3 pseudo-relevance feedback terms from the evidence so far (Lavrenko and
Croft 2001; Abdul-Jaleel et al. 2004) in the BM25 query.
``ExecutorCaps.feedback_vector`` adds a dense feedback query: Rocchio on the feedback
documents' stored vectors, or the query plus the RM3 words embedded; off by default.
A round with no dense query of its own (RM3 words, a missing term) can run round 1's dense
query again (its vector is cached: no new embedding) at ``ExecutorCaps.later_dense_weight``;
off by default: on SciFact's train split it cost nDCG@10, where a later round's BM25 list is
what adds the missing term (docs/benchmarks.md).
"""

from __future__ import annotations

from agentic_search.logic.bm25 import keyword_query
from agentic_search.logic.executor.entity_rounds import graph_source_for
from agentic_search.logic.executor.queries import MAX_TARGET_QUERIES, base_text, dense_aspect
from agentic_search.logic.expansion import rm3_terms
from agentic_search.logic.plan_rules import top_k
from agentic_search.logic.schema import DomainSchema
from agentic_search.logic.text import Analyzer
from agentic_search.wire import (
    Evidence,
    ExecutorState,
    Filter,
    QueryPlan,
    RoundQuery,
    SparseSource,
    StructuredSource,
    VectorSource,
)


def later_round_plan(
    state: ExecutorState, schema: DomainSchema, analyzer: Analyzer
) -> tuple[QueryPlan | None, list[RoundQuery]]:
    """The plan of round 2 or later (see the module docstring), or ``None`` when there is
    nothing new to ask: no missing target left to ask for and no feedback term."""
    intent, plan = state.intent, state.plan
    rnd = state.round_index + 1
    base = base_text(intent)
    aspect = dense_aspect(plan, schema)
    depth = schema.tuning.depth
    dense_k = max(
        (v.top_k for v in plan.vector_sources), default=top_k(depth, plan.limit, floor=20)
    )
    sparse_k = (
        plan.sparse_source.top_k if plan.sparse_source else top_k(depth, plan.limit, "sparse")
    )
    queries: list[RoundQuery] = []
    vector_sources: list[VectorSource] = []
    structured: list[StructuredSource] = []
    sparse_parts: list[str] = [intent.query]
    missing = [
        t for t, item in zip(state.targets, state.coverage.items, strict=False) if not item.covered
    ]
    weights = schema.tuning.coverage
    missing.sort(key=lambda t: -weights.weight(t.kind))
    asked = 0
    relaxed = {f.label() for f in state.plan.filters} - {f.label() for f in current_filters(state)}
    for target in missing:
        if asked >= MAX_TARGET_QUERIES:
            break
        if target.label in state.asked:
            continue  # asked before and still missing: the same query would not find it
        state.asked.append(target.label)
        if target.kind == "preference" and target.field:
            flt = Filter(field=target.field, operator="in", value=list(target.values))
            structured.append(
                StructuredSource(
                    filters=current_filters(state),
                    preferences=[flt],
                    top_k=top_k(depth, plan.limit, "structured"),
                )
            )
            text = " ".join([base, *map(str, target.values)])
            vector_sources.append(
                VectorSource(
                    aspect=aspect, top_k=dense_k, query_vector_source="coverage", text=text
                )
            )
            queries.append(
                RoundQuery(
                    text=text, purpose="coverage", target=target.label, modes=[f"dense:{aspect}"]
                )
            )
            queries.append(
                RoundQuery(
                    text=flt.label(), purpose="coverage", target=target.label, modes=["structured"]
                )
            )
            asked += 1
        elif target.kind == "phrase" and target.text:
            sparse_parts.append(target.text)
            queries.append(
                RoundQuery(
                    text=target.text, purpose="coverage", target=target.label, modes=["sparse"]
                )
            )
            asked += 1
        elif target.kind == "term" and target.text:
            word = surface_form(intent.query, target.text, analyzer) or target.text
            sparse_parts.append(word)
            queries.append(
                RoundQuery(text=word, purpose="coverage", target=target.label, modes=["sparse"])
            )
            asked += 1
        elif target.kind == "constraint" and target.label in relaxed:
            continue  # relaxed on purpose: asking again would find nothing new
    feedback_docs = feedback_evidence(state)
    expansion = rm3_terms(
        intent.keywords or analyzer.terms(intent.query),
        [(f"{e.title or ''} {e.text}", max(e.relevance, 1e-3)) for e in feedback_docs],
        state.caps.feedback_terms,
        analyzer,
    )
    if expansion:
        words = " ".join(expansion)
        sparse_parts.append(words)
        queries.append(
            RoundQuery(text=words, purpose="feedback", target="RM3 expansion", modes=["sparse"])
        )
        if state.caps.feedback_vector == "embed":
            text = f"{base} {words}"
            vector_sources.append(
                VectorSource(
                    aspect=aspect, top_k=dense_k, query_vector_source="feedback", text=text
                )
            )
            queries.append(RoundQuery(text=text, purpose="feedback", modes=[f"dense:{aspect}"]))
    rocchio = state.caps.feedback_vector == "rocchio" and bool(expansion)
    feedback_ids = [e.id for e in feedback_docs] if rocchio else []
    if feedback_ids:
        text = planned_dense_text(plan, aspect) or base
        vector_sources.append(
            VectorSource(
                aspect=aspect,
                top_k=dense_k,
                query_vector_source="feedback",
                text=text,
                feedback_ids=feedback_ids,
                feedback_alpha=state.caps.rocchio_alpha,
            )
        )
        queries.append(
            RoundQuery(
                text=f"{text} (Rocchio toward {', '.join(feedback_ids)})",
                purpose="feedback",
                target="Rocchio",
                modes=[f"dense:{aspect}"],
            )
        )
    if not vector_sources and not structured and len(sparse_parts) == 1:
        return None, []
    anchor = planned_dense_text(plan, aspect)
    if anchor and not vector_sources and state.caps.later_dense_weight > 0:
        # no dense query of its own (an RM3 / missing-term round): round 1's query vector
        # (cached) makes the round's list hybrid when the caps ask for it; a round with a
        # dense coverage query is hybrid already, and a second copy of round 1's list would
        # crowd out what it adds
        vector_sources.append(
            VectorSource(
                aspect=aspect,
                top_k=dense_k,
                query_vector_source="query_text",
                text=anchor,
                weight=state.caps.later_dense_weight,
            )
        )
        queries.insert(0, RoundQuery(text=anchor, purpose="plan", modes=[f"dense:{aspect}"]))
    # A missing phrase or term is in the query already: keyword_query does not add it again,
    # so it keeps its own count in the BM25 query (no boost: the doubled words written here
    # before were dropped by the distinct-term query vector, so no measured run had one).
    sparse = SparseSource(text=keyword_query(*sparse_parts), top_k=sparse_k)
    round_plan = QueryPlan(
        domain=plan.domain,
        strategy=plan.strategy,
        vector_sources=vector_sources,
        sparse_source=sparse,
        structured_sources=structured,
        filters=current_filters(state),
        exclude_ids=list(plan.exclude_ids),
        fusion="rrf",
        rrf_k=plan.rrf_k,
        limit=plan.limit,
        confidence=plan.confidence,
        rationale=[f"round {rnd}: coverage and feedback queries"],
        planner=plan.planner,
        round=rnd,
    )
    queries.insert(
        0,
        RoundQuery(
            text=sparse.text, purpose="feedback" if expansion else "coverage", modes=["sparse"]
        ),
    )
    return round_plan, queries


def bridge_round_plan(
    state: ExecutorState, schema: DomainSchema
) -> tuple[QueryPlan | None, list[RoundQuery]]:
    """The bridge round of a bridge question: only a walk of the entity graph from round 1's
    best records (see :mod:`agentic_search.logic.executor.entity_rounds`); None when round 1 found
    nothing to walk from."""
    plan = state.plan
    aspect = dense_aspect(plan, schema)
    text = planned_dense_text(plan, aspect) or base_text(state.intent)
    graph = graph_source_for(state, aspect, text, schema.tuning.graph)
    state.walked = True
    if graph is None:
        return None, []
    rnd = state.round_index + 1
    round_plan = QueryPlan(
        domain=plan.domain,
        strategy=plan.strategy,
        filters=current_filters(state),
        exclude_ids=list(plan.exclude_ids),
        fusion="none",
        rrf_k=plan.rrf_k,
        limit=plan.limit,
        confidence=plan.confidence,
        rationale=[f"round {rnd}: bridge hops from {', '.join(graph.seeds)}"],
        planner=plan.planner,
        round=rnd,
        graph_source=graph,
    )
    query = RoundQuery(
        text=f"entities named by or naming {', '.join(graph.seeds)}",
        purpose="bridge",
        target="bridge",
        modes=["graph"],
    )
    return round_plan, [query]


def surface_form(text: str, stem: str, analyzer: Analyzer) -> str | None:
    """The word of ``text`` whose stem is ``stem`` (first one), if any."""
    for word in text.split():
        if stem in analyzer.terms(word):
            return word.strip(".,;:!?\"'()")
    return None


def current_filters(state: ExecutorState) -> list[Filter]:
    """The plan's hard filters minus those the relaxation ladder dropped (musts stay)."""
    gone = set(state.report.relaxed)
    return [f for f in state.plan.filters if f.must or f.label() not in gone]


#: ``state.asked`` entries of LLM-written queries carry this prefix (target labels do not).
WRITTEN_PREFIX = "llm:"


def writer_inputs(state: ExecutorState) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """What a later round's query writer reads: the evidence so far, most relevant first
    (``(title or doc id, text)``), the labels of the targets still missing, and the texts
    LLM-written queries asked before (never asked twice)."""
    found = [(e.title or e.doc_id, e.text) for e in sorted(state.pool, key=lambda e: -e.relevance)]
    missing = [
        t.label
        for t, item in zip(state.targets, state.coverage.items, strict=False)
        if not item.covered
    ]
    asked = [a.removeprefix(WRITTEN_PREFIX) for a in state.asked if a.startswith(WRITTEN_PREFIX)]
    return found, missing, asked


def feedback_evidence(state: ExecutorState) -> list[Evidence]:
    """The feedback documents: the ``feedback_docs`` most relevant evidence so far."""
    return sorted(state.pool, key=lambda e: -e.relevance)[: state.caps.feedback_docs]


def planned_dense_text(plan: QueryPlan, aspect: str) -> str | None:
    """The text round 1 embedded for ``aspect`` (its query vector is cached by then)."""
    for vs in plan.vector_sources:
        if vs.aspect == aspect and vs.query_vector_source != "reference_tool" and vs.text:
            return vs.text
    return None
