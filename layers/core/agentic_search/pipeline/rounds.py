"""The multi-round executor: the executor subgraph of ``seeds/executor-subgraph.md``.

Nodes (pure step functions on :class:`ExecutorState`, shared by the local runner and, later,
the Step Functions states; adapters are passed in, never imported from Lambda):

``executor_gate`` -> ``prepare_round_queries`` -> ``run_retrieval`` -> ``merge_candidates``
-> ``rerank_candidates`` -> ``select_evidence`` -> ``grade_coverage`` -> ``should_continue``
-> (next round | ``finalize_evidence_pack``).

Round 1 runs the plan as planned (plus HyDE when an LLM is configured and the query has no
literal constraints; plus the filter relaxation ladder when hard filters leave fewer than
``limit`` results). Rounds 2+ ask new queries for what the coverage map still misses (soft
preferences as structured sources, quoted phrases, uncovered terms) and RM3 pseudo-relevance
feedback terms from the evidence so far, in the BM25 query; ``ExecutorCaps.feedback_vector``
adds a dense feedback query (Rocchio on stored vectors, or the query plus the RM3 words
embedded), off by default. The final ranking fuses each round's fused list by
weighted RRF, round 1 with weight 1 and later rounds with ``later_round_weight`` (the RM3
interpolation with the original query); with one round it is round 1's list unchanged.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from agentic_search.adapters.embedders import token_counter, token_counter_name
from agentic_search.adapters.hyde import HydeError, HydeGenerator
from agentic_search.adapters.rerank import Reranker, RerankerError
from agentic_search.domain.coverage import (
    CoverageGrader,
    DeterministicGrader,
    EvidenceMatcher,
    coverage_targets,
)
from agentic_search.domain.expansion import rm3_terms
from agentic_search.domain.fusion import minmax, rrf
from agentic_search.domain.planner import PlanError, fusion_for, validate_plan
from agentic_search.domain.schema import DomainSchema
from agentic_search.domain.selection import select_evidence
from agentic_search.domain.snippets import evidence_text, stored_snippet_tokens
from agentic_search.domain.text import Analyzer, default_analyzer, field_text
from agentic_search.pipeline.executor import QueryExecutor, execution_stats
from agentic_search.state import (
    FUSED_REFS,
    INTERNAL_KEYS,
    Candidate,
    CoverageTarget,
    Evidence,
    EvidencePack,
    ExecutorCaps,
    ExecutorState,
    Filter,
    Fused,
    FusedRef,
    Hit,
    IntentState,
    QueryExecutorOutput,
    QueryPlan,
    RankedList,
    RetrievedList,
    RoundQuery,
    RoundReport,
    RoundWork,
    SelectedRef,
    SourceError,
    SourceResult,
    SparseSource,
    StructuredSource,
    SubQuery,
    VectorSource,
)

#: At most this many missing targets get a query of their own per round.
MAX_TARGET_QUERIES = 3


# ----- node 1: gate ------------------------------------------------------------------------------


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
    report says why. The caps are validated by :class:`ExecutorCaps` itself (bounded fields).

    Raises:
        PlanError: for any other plan violation (unknown aspect, bad fusion, ...).
    """
    caps = caps or ExecutorCaps()
    state = ExecutorState(plan=plan, intent=intent, caps=caps)
    state.report.caps = caps
    state.report.reranker = reranker or "none (not configured)"
    state.report.hyde = hyde or "off (no LLM configured)"
    if plan.source_count == 0:
        state.continue_search = False
        state.report.stop_reason = "plan has no retrieval sources (non-retrieval strategy)"
        return state
    validate_plan(plan, schema)
    state.targets = coverage_targets(intent, schema, analyzer or default_analyzer())
    return state


def hyde_status(intent: IntentState, hyde: HydeGenerator | None) -> str:
    """Why HyDE is on or off for this intent."""
    if hyde is None:
        return "off (no LLM configured)"
    if intent.must_match_exactly or intent.must_preserve_terms:
        return "off (the query has literal constraints that must match exactly)"
    return f"on ({hyde.name})"


# ----- node 2: round queries ---------------------------------------------------------------------


def _dense_aspect(plan: QueryPlan, schema: DomainSchema) -> str:
    for vs in plan.vector_sources:
        if vs.query_vector_source != "reference_tool":
            return vs.aspect
    return schema.aspect_names[0]


def _base_text(intent: IntentState) -> str:
    return intent.semantic_variants[0] if intent.semantic_variants else intent.query


def describe_queries(plan: QueryPlan, purposes: dict[str, str] | None = None) -> list[RoundQuery]:
    """The distinct query texts of a plan with the modes that run each."""
    purposes = purposes or {}
    out: dict[str, RoundQuery] = {}

    def add(text: str, mode: str, purpose: str = "plan", target: str | None = None) -> None:
        q = out.get(text)
        if q is None:
            q = out[text] = RoundQuery(
                text=text,
                purpose=purposes.get(text, purpose),  # type: ignore[arg-type]
                target=target,
            )
        if mode not in q.modes:
            q.modes.append(mode)

    for vs in plan.vector_sources:
        if vs.query_vector_source == "reference_tool":
            add(f"vectors of {vs.text}", f"dense:{vs.aspect}")
        else:
            add(
                vs.text or "",
                f"dense:{vs.aspect}",
                "hyde" if vs.query_vector_source == "hyde" else "plan",
            )
    if plan.sparse_source is not None:
        add(plan.sparse_source.text, "sparse")
    for st in plan.structured_sources:
        label = ", ".join(p.label() for p in st.preferences) or "filters only"
        add(label, "structured")
    return list(out.values())


def prepare_round_queries(
    state: ExecutorState,
    schema: DomainSchema,
    *,
    hyde: HydeGenerator | None = None,
    analyzer: Analyzer | None = None,
) -> tuple[QueryPlan | None, list[RoundQuery], list[SourceError]]:
    """The plan of the next round, the queries it asks (for the report) and HyDE errors.

    Round 1: the plan itself; each must-preserve term is put verbatim into the sparse query if
    missing; a HyDE passage is added as an extra dense query on the main aspect when
    :func:`hyde_status` says on. Rounds 2+: see the module docstring. Returns ``None`` as the
    plan when there is nothing new to ask.
    """
    analyzer = analyzer or default_analyzer()
    intent, plan = state.intent, state.plan
    rnd = state.round_index + 1
    errors: list[SourceError] = []
    if rnd == 1:
        update: dict[str, Any] = {"round": 1}
        if plan.sparse_source is not None:
            text = plan.sparse_source.text
            ref = (intent.reference_tool_name or "").lower()
            lacking = [
                t
                for t in intent.must_preserve_terms
                if t.lower() not in text.lower() and t.lower() != ref
            ]
            if lacking:
                update["sparse_source"] = plan.sparse_source.model_copy(
                    update={"text": " ".join([text, *lacking])}
                )
        purposes: dict[str, str] = {}
        if hyde_status(intent, hyde).startswith("on") and hyde is not None:
            try:
                passage = hyde.generate(intent.query)
                aspect = _dense_aspect(plan, schema)
                top_k = max((v.top_k for v in plan.vector_sources), default=plan.limit * 2)
                sources = [
                    *plan.vector_sources,
                    VectorSource(
                        aspect=aspect, top_k=top_k, query_vector_source="hyde", text=passage
                    ),
                ]
                update["vector_sources"] = sources
                count = plan.source_count + 1
                if plan.fusion != "rrf":
                    update["fusion"] = fusion_for(count)
                purposes[passage] = "hyde"
            except HydeError as exc:
                errors.append(SourceError(source="hyde", error="HydeError", message=str(exc)))
        round_plan = plan.model_copy(update=update)
        return round_plan, describe_queries(round_plan, purposes), errors

    base = _base_text(intent)
    aspect = _dense_aspect(plan, schema)
    dense_k = max((v.top_k for v in plan.vector_sources), default=max(20, plan.limit * 2))
    sparse_k = plan.sparse_source.top_k if plan.sparse_source else max(50, plan.limit * 3)
    queries: list[RoundQuery] = []
    vector_sources: list[VectorSource] = []
    structured: list[StructuredSource] = []
    sparse_parts: list[str] = [intent.query]
    missing = [
        t for t, item in zip(state.targets, state.coverage.items, strict=False) if not item.covered
    ]
    missing.sort(key=lambda t: -t.weight)
    asked = 0
    relaxed = {f.label() for f in state.plan.filters} - {f.label() for f in _current_filters(state)}
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
                    filters=_current_filters(state),
                    preferences=[flt],
                    top_k=min(200, max(30, plan.limit * 2)),
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
            sparse_parts.append(f"{target.text} {target.text}")
            queries.append(
                RoundQuery(
                    text=target.text, purpose="coverage", target=target.label, modes=["sparse"]
                )
            )
            asked += 1
        elif target.kind == "term" and target.text:
            word = _surface(intent.query, target.text, analyzer) or target.text
            sparse_parts.append(f"{word} {word}")
            queries.append(
                RoundQuery(text=word, purpose="coverage", target=target.label, modes=["sparse"])
            )
            asked += 1
        elif target.kind == "constraint" and target.label in relaxed:
            continue  # relaxed on purpose: asking again would find nothing new
    feedback_docs = _feedback_evidence(state)
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
        text = _planned_dense_text(plan, aspect) or base
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
        return None, [], errors
    sparse = SparseSource(text=" ".join(sparse_parts), top_k=sparse_k)
    round_plan = QueryPlan(
        domain=plan.domain,
        strategy=plan.strategy,
        vector_sources=vector_sources,
        sparse_source=sparse,
        structured_sources=structured,
        filters=_current_filters(state),
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
    return round_plan, queries, errors


def _surface(text: str, stem: str, analyzer: Analyzer) -> str | None:
    """The word of ``text`` whose stem is ``stem`` (first one), if any."""
    for word in text.split():
        if stem in analyzer.terms(word):
            return word.strip(".,;:!?\"'()")
    return None


def _current_filters(state: ExecutorState) -> list[Filter]:
    gone = set(state.report.relaxed)
    return [f for f in state.plan.filters if f.must or f.label() not in gone]


def _feedback_evidence(state: ExecutorState) -> list[Evidence]:
    """The feedback documents: the ``feedback_docs`` most relevant evidence so far."""
    return sorted(state.pool, key=lambda e: -e.relevance)[: state.caps.feedback_docs]


def _planned_dense_text(plan: QueryPlan, aspect: str) -> str | None:
    """The text round 1 embedded for ``aspect`` (its query vector is cached by then)."""
    for vs in plan.vector_sources:
        if vs.aspect == aspect and vs.query_vector_source != "reference_tool" and vs.text:
            return vs.text
    return None


# ----- node 10: relaxation ladder ----------------------------------------------------------------


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


# ----- nodes 3-4: retrieval and merge ------------------------------------------------------------


def run_retrieval(
    executor: QueryExecutor, plan: QueryPlan
) -> tuple[list[SourceResult], dict[str, float]]:
    """Run every source of a round's plan; each result carries its round and query text."""
    return executor.run_sources(plan)


def merge_candidates(results: Sequence[SourceResult], plan: QueryPlan) -> tuple[list[Fused], str]:
    """Dedupe by stable identity (record id = doc_id + chunk_id) and fuse the round's ranked
    lists with the round plan's method (rounds 2+: RRF). Rank features stay in the results."""
    return QueryExecutor.merge(list(results), plan.fusion, plan.rrf_k)


# ----- node 5: rerank ----------------------------------------------------------------------------


def rerank_candidates(
    reranker: Reranker | None, query: str, evidence: Sequence[Evidence], top_n: int
) -> tuple[list[Evidence], SourceError | None]:
    """Rerank the top ``top_n`` (by fused order) with ``reranker``; the rest keep their order
    after them. Scores go to ``rerank_score`` and ``relevance`` (min-max of the rerank
    scores); ``fused_score`` is untouched. No reranker or a failing one: input unchanged (the
    failure is returned as an error)."""
    if reranker is None or not evidence:
        return list(evidence), None
    head, tail = list(evidence[:top_n]), list(evidence[top_n:])
    try:
        scores = reranker.score(query, [f"{e.title or ''}. {e.text}" for e in head])
    except RerankerError as exc:
        return list(evidence), SourceError(
            source="reranker", error="RerankerError", message=str(exc)
        )
    real = [float(s) for s in scores if np.isfinite(s)]
    floor = (min(real) - 1.0) if real else 0.0
    finite = [float(s) if np.isfinite(s) else floor for s in scores]
    norm = minmax(finite)
    ranked = sorted(
        (
            e.model_copy(update={"rerank_score": round(float(s), 6), "relevance": round(n, 6)})
            for e, s, n in zip(head, finite, norm, strict=True)
        ),
        key=lambda e: -(e.rerank_score or 0.0),
    )
    tail = [e.model_copy(update={"relevance": 0.0}) for e in tail]
    return ranked + tail, None


# ----- node 8: stopping --------------------------------------------------------------------------


def should_continue(
    state: ExecutorState, new_evidence: Sequence[str], round_ms: float, found_any: bool
) -> tuple[bool, str]:
    """The deterministic stopping policy after a round; updates ``no_new_streak``.

    Stops (in this order of precedence) when: the round found no candidates at all; the
    confidence reaches ``confidence_threshold``; ``max_rounds`` are done; ``max_no_new_rounds``
    rounds in a row added no new evidence; the round took longer than ``round_budget_ms``.
    """
    caps = state.caps
    report = state.report
    report.no_new_streak = 0 if new_evidence else report.no_new_streak + 1
    conf = state.coverage.confidence
    if not found_any and state.round_index == 1:
        return False, "no candidates: the sources found nothing for this query and filters"
    if conf >= caps.confidence_threshold:
        return False, f"confidence {conf:.2f} reached the threshold {caps.confidence_threshold:.2f}"
    if state.round_index >= caps.max_rounds:
        return False, f"max rounds reached ({caps.max_rounds})"
    if report.no_new_streak >= caps.max_no_new_rounds:
        return False, f"no new evidence for {report.no_new_streak} round(s)"
    if round_ms > caps.round_budget_ms:
        return (
            False,
            f"round latency budget exceeded ({round_ms:.0f} ms > {caps.round_budget_ms:.0f} ms)",
        )
    missing = state.coverage.missing
    why = f"missing {', '.join(missing[:5])}" if missing else "evidence still below the threshold"
    return True, f"continue: confidence {conf:.2f} < {caps.confidence_threshold:.2f}; {why}"


# ----- node 9: finalize --------------------------------------------------------------------------


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
) -> EvidencePack:
    """Sort pooled evidence by its best available score (rerank score when every piece has
    one, else its position in ``order``, the final ranking, then relevance), trim to
    ``max_total_docs`` and ``max_total_tokens``, grade the result and attach the report.

    With ``supports``, trimming keeps coverage first: for each target the pool covers, the
    best piece supporting it is kept (budget permitting) before the rest fill by order.
    """
    pos = {rid: i for i, rid in enumerate(order)}
    pool = list(state.pool)
    if pool and all(e.rerank_score is not None for e in pool):
        pool.sort(key=lambda e: -(e.rerank_score or 0.0))
    else:
        pool.sort(key=lambda e: (pos.get(e.id, len(pos)), -e.relevance))
    caps = state.caps
    kept: list[Evidence] = []
    used = 0

    def keep(ev: Evidence) -> bool:
        nonlocal used
        if len(kept) >= caps.max_total_docs or used + ev.tokens > caps.max_total_tokens:
            return False
        kept.append(ev)
        used += ev.tokens
        return True

    if supports is not None:
        for target in sorted(state.targets, key=lambda t: -t.weight):
            if any(supports(target, e) for e in kept):
                continue
            for ev in pool:
                if ev not in kept and supports(target, ev) and keep(ev):
                    break
    for ev in pool:
        if ev not in kept:
            keep(ev)
    kept.sort(key=lambda e: pool.index(e))
    coverage = grader.grade(state.targets, kept)
    return EvidencePack(evidence=kept, coverage=coverage, report=state.report, tokens=used)


# ----- the local runner --------------------------------------------------------------------------


def split_plan(plan: QueryPlan, keyword_name: str, structured_system: str) -> list[SubQuery]:
    """One single-source plan per source of ``plan`` (dense, sparse, structured), named as the
    executor names its results, so the Map can run them in parallel."""
    base = {"vector_sources": [], "sparse_source": None, "structured_sources": []}
    subs: list[SubQuery] = []
    for vs in plan.vector_sources:
        subs.append(
            SubQuery(
                name=f"dense:{vs.aspect}:{vs.query_vector_source}",
                kind="dense",
                plan=plan.model_copy(update={**base, "vector_sources": [vs]}),
            )
        )
    if plan.sparse_source is not None:
        subs.append(
            SubQuery(
                name=f"sparse:{keyword_name}",
                kind="sparse",
                plan=plan.model_copy(update={**base, "sparse_source": plan.sparse_source}),
            )
        )
    for i, st in enumerate(plan.structured_sources):
        subs.append(
            SubQuery(
                name=f"structured:{structured_system}:{i}",
                kind="structured",
                plan=plan.model_copy(update={**base, "structured_sources": [st]}),
            )
        )
    return subs


#: Snippet texts whose token counts are remembered (LRU).
TOKEN_COUNT_CACHE = 8192

#: Each round's fused ranking is kept to this many ids in the state (the final ranking never
#: returns more than 100).
RANKING_KEEP = 300


class MultiRoundExecutor:
    """The executor subgraph's nodes wired with the stores of one domain.

    The rounds run as steps on a JSON-able :class:`ExecutorState`: :meth:`start`, then per
    round :meth:`prepare_round` -> :meth:`retrieve` (one per sub-query) -> :meth:`fuse_rerank`
    -> :meth:`grade_round`, then :meth:`finalize`. :meth:`run` runs them in-process; the
    local runner and the Step Functions states call them one by one.
    """

    def __init__(
        self,
        executor: QueryExecutor,
        *,
        reranker: Reranker | None = None,
        hyde: HydeGenerator | None = None,
        grader: CoverageGrader | None = None,
        count_tokens: Callable[[Sequence[str]], list[int]] | None = None,
    ) -> None:
        self.executor = executor
        self.schema = executor.schema
        self.reranker = reranker
        self.hyde = hyde
        self.analyzer = default_analyzer()
        self.matcher = EvidenceMatcher(self.schema, self.analyzer)
        self.grader = grader or DeterministicGrader(self.schema, self.matcher)
        self._count_tokens = count_tokens
        self._token_memo: OrderedDict[str, int] = OrderedDict()
        self._memo_lock = threading.Lock()
        self._fields = [
            f
            for f in self.schema.fields
            if f in self.schema.filterable_fields or f in self.schema.vocabulary_fields.values()
        ]

    def clear_token_counts(self) -> None:
        """Forget memoized token counts (benchmarks time searches cold)."""
        with self._memo_lock:
            self._token_memo.clear()

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Token counts with the embedder's tokenizer (see :func:`token_counter`).

        Counts are memoized by text (LRU of ``TOKEN_COUNT_CACHE`` texts): the same snippets
        come back round after round and query after query, and word-piece tokenizing 30
        snippets of 1,200 characters took longer than the round's retrieval.
        """
        if self._count_tokens is None:
            self._count_tokens = token_counter(self.executor.embedder)
        memo = self._token_memo
        with self._memo_lock:
            out: list[int | None] = []
            for t in texts:
                n = memo.get(t)
                if n is not None:
                    memo.move_to_end(t)
                out.append(n)
        todo = list(dict.fromkeys(t for t, n in zip(texts, out, strict=True) if n is None))
        if todo:
            counted = dict(zip(todo, self._count_tokens(todo), strict=True))
            with self._memo_lock:
                memo.update(counted)
                while len(memo) > TOKEN_COUNT_CACHE:
                    memo.popitem(last=False)
            out = [counted[t] if n is None else n for t, n in zip(texts, out, strict=True)]
        return [int(n) for n in out]  # type: ignore[arg-type]

    # ----- steps -----------------------------------------------------------------------------

    def start(
        self, plan: QueryPlan, intent: IntentState, caps: ExecutorCaps | None = None
    ) -> ExecutorState:
        """The gate: a validated plan and a fresh state.

        Raises:
            PlanError: when the plan is invalid.
        """
        state = executor_gate(
            plan,
            intent,
            self.schema,
            caps,
            reranker=self.reranker.name if self.reranker else None,
            hyde=hyde_status(intent, self.hyde),
            analyzer=self.analyzer,
        )
        state.started_at = time.time()
        return state

    def prepare_round(self, state: ExecutorState) -> RoundWork | None:
        """The next round's plan and sub-queries; ``None`` (and ``continue_search`` False)
        when the search is over or there is nothing new to ask."""
        if not state.continue_search:
            return None
        started = time.time()
        round_plan, queries, errors = prepare_round_queries(
            state, self.schema, hyde=self.hyde, analyzer=self.analyzer
        )
        if round_plan is None:
            state.continue_search = False
            state.report.stop_reason = "nothing new to ask: no missing targets or feedback terms"
            return None
        rnd = state.round_index + 1
        subs = split_plan(round_plan, self.executor.keyword.name, self.executor.structured.system)
        return RoundWork(
            index=rnd,
            plan=round_plan,
            sub_queries=subs,
            report=RoundReport(round=rnd, queries=queries, errors=errors),
            started_at=started,
        )

    def retrieve(self, sub: SubQuery) -> RetrievedList:
        """Run one sub-query's source; never raises for a failing source (the error is in
        the result)."""
        results, _ = self.executor.run_sources(sub.plan)
        if not results:
            return RetrievedList(
                name=sub.name,
                error=SourceError(source=sub.name, error="EmptyPlan", message="no source"),
            )
        return RetrievedList.of(results[0])

    def retrieve_all(self, work: RoundWork) -> RoundWork:
        """Every sub-query of the round in one in-process pass (texts embedded once, sources
        in the executor's bounded pool); the same results as one :meth:`retrieve` each."""
        t = time.perf_counter()
        results, stage = run_retrieval(self.executor, work.plan)
        work.results = [RetrievedList.of(r) for r in results]
        work.report.stage_ms.update(stage)
        work.report.stage_ms["retrieve_all"] = _ms(t)
        return work

    def fuse_rerank(self, state: ExecutorState, work: RoundWork) -> RoundWork:
        """Fuse the round's results (relaxing filters in round 1 when too few), build and
        rerank evidence for the top of the fused list and select new evidence into the pool.
        Keeps in the state only the hits of candidates that can still be returned."""
        rnd = work.index
        rep = work.report
        stage = rep.stage_ms
        if "retrieve" not in stage:
            stage["retrieve"] = max((r.ms for r in work.results), default=0.0)
        intent = state.intent
        results = [r.result() for r in work.results]
        t = time.perf_counter()
        fused, used = merge_candidates(results, work.plan)
        if rnd == 1:
            state.fusion_used = used
            fused, results = self._relax(state, work.plan, fused, results, rep)
        stage["fusion"] = _ms(t)
        ok = [r for r in results if r.error is None]
        rep.errors += [r.error for r in results if r.error is not None]
        rep.candidates_before_fusion = sum(len(r.hits) for r in ok)
        rep.candidates_after_fusion = len(fused)
        state.candidates_before += rep.candidates_before_fusion
        state.candidates_after = max(state.candidates_after, len(fused))
        state.round_rankings.append([f.id for f in fused[:RANKING_KEEP]])
        keep_n = max(state.plan.limit, state.caps.selection_pool, state.caps.rerank_top_n)
        if rnd == 1:
            state.first_fused = FUSED_REFS.validate_python(
                [
                    {
                        "id": f.id,
                        "fused": f.fused,
                        "score": f.score,
                        "best_rank": f.best_rank,
                        "contributions": f.contributions,
                    }
                    # only what can still be returned: the state crosses every step as JSON
                    for f in fused[:keep_n]
                ]
            )

        t = time.perf_counter()
        pool_n = max(state.caps.selection_pool, state.caps.rerank_top_n if self.reranker else 0)
        evidence, vectors = self._evidence(
            work.plan, intent, ok, fused[:pool_n], rnd, state.caps.snippet_chars
        )
        stage["evidence"] = _ms(t)
        t = time.perf_counter()
        evidence, err = rerank_candidates(
            self.reranker, intent.query, evidence, state.caps.rerank_top_n
        )
        if self.reranker is not None:
            stage["rerank"] = _ms(t)
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
        selected = select_evidence(
            evidence,
            vectors,
            max_docs=state.caps.max_docs,
            fill=rnd == 1,
            max_tokens=state.caps.max_total_tokens,
            max_chunks_per_doc=state.caps.max_chunks_per_doc,
            mmr_lambda=state.caps.mmr_lambda,
            must_phrases=intent.must_preserve_terms,
            seed_targets=[(lambda e, t_=t_: self.matcher.supports(t_, e)) for t_ in seeds],
            already=state.pool,
            # Stored counts first; only candidates without one whose budget check matters
            # get tokenized.
            count_tokens=lambda e: e.tokens or self.count_tokens([e.text])[0],
        )
        stage["select"] = _ms(t)
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
        work.found_any = bool(fused)
        keep = {f.id for f in fused[:keep_n]} | set(state.relaxed_ids)
        state.retrieved += [RetrievedList.of(r, keep) for r in results]
        work.results = []
        return work

    def grade_round(self, state: ExecutorState, work: RoundWork) -> ExecutorState:
        """Grade the pool's coverage, decide whether to go on and close the round's report."""
        rep = work.report
        t = time.perf_counter()
        before_cov = set(state.coverage.covered)
        state.coverage = self.grader.grade(state.targets, state.pool)
        rep.stage_ms["grade"] = _ms(t)
        state.round_index = work.index
        round_ms = (time.time() - work.started_at) * 1000.0
        rep.stage_ms["round_total"] = round_ms
        go, reason = should_continue(state, work.new_ids, round_ms, work.found_any)
        rep.new_evidence = list(work.new_ids)
        rep.newly_covered = [c for c in state.coverage.covered if c not in before_cov]
        rep.missing = state.coverage.missing
        rep.confidence = state.coverage.confidence
        rep.stage_ms = {k: round(v, 2) for k, v in rep.stage_ms.items()}
        rep.decision = reason
        state.report.rounds.append(rep)
        for k, v in rep.stage_ms.items():
            state.stage_totals[k] = round(state.stage_totals.get(k, 0.0) + v, 2)
        state.continue_search = go
        if not go:
            state.report.stop_reason = reason
        return state

    def finalize(
        self, state: ExecutorState, errors: Sequence[SourceError] = ()
    ) -> tuple[QueryExecutorOutput, EvidencePack]:
        """The final ranking, hydrated candidates with provenance, and the evidence pack.
        ``errors`` are failures outside the rounds (a failed step) to list with the rest."""
        t = time.perf_counter()
        plan, intent = state.plan, state.intent
        if len(state.round_rankings) > 1:
            ranking = final_ranking(state)
        else:
            first = [f.fused_entry() for f in state.first_fused]
            ranking = rerank_order(first, state.rerank_scores, state.caps.rerank_top_n)
        results = [r.result() for r in state.retrieved]
        ok_all = [r for r in results if r.error is None]
        candidates = self.executor.hydrate(plan, intent, ok_all, ranking[: plan.limit])
        self._mark_relaxed(state, candidates)
        if state.rerank_scores:
            candidates = [
                c.model_copy(update={"rerank_score": state.rerank_scores.get(c.id)})
                for c in candidates
            ]
        stage_total = dict(state.stage_totals)
        stage_total["hydrate"] = _ms(t)
        pack = finalize_evidence_pack(
            state, self.grader, [f.id for f in ranking], self.matcher.supports
        )
        total = (time.time() - state.started_at) * 1000.0 if state.started_at else _ms(t)
        stage_total["total"] = total
        state.report.total_ms = round(total, 2)
        stats = execution_stats(
            results, ranking, state.fusion_used or plan.fusion, stage_total, intent, plan
        )
        stats.candidates_before_fusion = state.candidates_before
        stats.candidates_after_fusion = max(state.candidates_after, len(ranking))
        stats.rounds = state.round_index
        all_errors = [e for r in state.report.rounds for e in r.errors] + list(errors)
        output = QueryExecutorOutput(
            candidates=candidates,
            execution_stats=stats,
            confidence=pack.coverage.confidence if pack.evidence else 0.0,
            errors=all_errors,
        )
        return output, pack

    def run(
        self, plan: QueryPlan, intent: IntentState, caps: ExecutorCaps | None = None
    ) -> tuple[QueryExecutorOutput, EvidencePack]:
        """Run rounds in-process until the stopping policy says stop; never raises for a
        failing source.

        Raises:
            PlanError: when the plan is invalid.
        """
        state = self.start(plan, intent, caps)
        while (work := self.prepare_round(state)) is not None:
            self.retrieve_all(work)
            self.fuse_rerank(state, work)
            self.grade_round(state, work)
        return self.finalize(state)

    # ----- helpers ---------------------------------------------------------------------------

    def _relax(
        self,
        state: ExecutorState,
        plan: QueryPlan,
        fused: list[Fused],
        results: list[SourceResult],
        rep: RoundReport,
    ) -> tuple[list[Fused], list[SourceResult]]:
        """The relaxation ladder: while fewer than ``limit`` results, drop the softest
        non-must filter and append what the relaxed plan finds (after the strict results)."""
        current = plan
        have = [f.id for f in fused]
        relaxed_ids: list[str] = []
        while len(have) < plan.limit:
            step = relax_step(current, self.schema)
            if step is None:
                break
            current, dropped = step
            label = dropped.label()
            state.report.relaxed.append(label)
            rep.relaxed.append(label)
            more, _ = self.executor.run_sources(current)
            results = [*results, *more]
            extra, _ = merge_candidates(more, current)
            for f in extra:
                if f.id not in have:
                    have.append(f.id)
                    relaxed_ids.append(f.id)
        if not relaxed_ids:
            return fused, results
        state.relaxed_ids = relaxed_ids
        return rrf([RankedList("round1", have)], plan.rrf_k), results

    def _mark_relaxed(self, state: ExecutorState, candidates: list[Candidate]) -> None:
        if not state.relaxed_ids:
            return
        relaxed = set(state.relaxed_ids)
        labels = list(state.report.relaxed)
        for c in candidates:
            if c.id in relaxed:
                c.provenance.relaxed_filters = labels
                c.provenance.filters_applied = [
                    f for f in c.provenance.filters_applied if f not in labels
                ]

    def _evidence(
        self,
        plan: QueryPlan,
        intent: IntentState,
        results: list[SourceResult],
        fused: list[Fused],
        rnd: int,
        snippet_chars: int,
    ) -> tuple[list[Evidence], dict[str, np.ndarray]]:
        """Evidence for the round's top fused candidates, with unit vectors of the main
        aspect (for MMR). ``tokens`` is the snippet's count stored at ingest
        (:mod:`agentic_search.domain.snippets`), or 0 when there is none: selection then counts the
        candidates it needs (``select_evidence(count_tokens=...)``)."""
        if not fused:
            return [], {}
        schema = self.schema
        aspect = _dense_aspect(plan, schema)
        records = self.executor.store.read_records(schema, [f.id for f in fused], with_vectors=True)
        cands = {
            c.id: c
            for c in self.executor.hydrate(
                plan,
                intent,
                results,
                fused,
                query_text=intent.query,
                known_payloads={rid: rec.payload or {} for rid, rec in records.items()},
            )
        }
        rel = minmax([f.fused for f in fused])
        texts: list[str] = []
        rows: list[tuple[Fused, dict[str, Any], float, int]] = []
        vectors: dict[str, np.ndarray] = {}
        counter = token_counter_name(self.executor.embedder)
        for f, r in zip(fused, rel, strict=True):
            rec = records.get(f.id)
            if rec is None:
                continue
            stored = rec.payload or {}
            payload = {k: v for k, v in stored.items() if k not in INTERNAL_KEYS}
            texts.append(evidence_text(schema, payload))
            # the count the indexer stored, else 0: counted on demand by select_evidence
            tokens = stored_snippet_tokens(stored, snippet_chars, counter) or 0
            rows.append((f, payload, r, tokens))
            vec = rec.vector.get(aspect) if isinstance(rec.vector, dict) else None
            if vec is not None:
                arr = np.asarray(vec, dtype=np.float32)
                norm = float(np.linalg.norm(arr))
                vectors[f.id] = arr / norm if norm > 0 else arr
        snippets = [t[:snippet_chars] for t in texts]
        out: list[Evidence] = []
        queries = sorted({r.query for r in results if r.query})
        for (f, payload, r, tokens), text in zip(rows, snippets, strict=True):
            cand = cands.get(f.id)
            found_by = (
                sorted({h.query for h in (cand.provenance.hits if cand else []) if h.query})
                or queries[:1]
            )
            out.append(
                Evidence(
                    id=f.id,
                    doc_id=str(payload.get("doc_id", f.id)),
                    chunk_id=int(payload.get("chunk_id", 0) or 0),
                    title=field_text(payload.get(schema.title_field)) or None,
                    text=text,
                    tokens=tokens,
                    fields={k: payload[k] for k in self._fields if k in payload},
                    fused_score=round(f.fused, 6),
                    relevance=round(r, 6),
                    round=rnd,
                    rounds=[rnd],
                    queries=found_by,
                    provenance=cand.provenance if cand else None,
                )
            )
        return out, vectors


def _ms(t: float) -> float:
    return (time.perf_counter() - t) * 1000.0


__all__ = [
    "ExecutorState",
    "FusedRef",
    "Hit",
    "MultiRoundExecutor",
    "PlanError",
    "RetrievedList",
    "RoundWork",
    "SubQuery",
    "executor_gate",
    "final_ranking",
    "finalize_evidence_pack",
    "hyde_status",
    "merge_candidates",
    "prepare_round_queries",
    "relax_step",
    "rerank_candidates",
    "rerank_order",
    "run_retrieval",
    "should_continue",
    "split_plan",
]
