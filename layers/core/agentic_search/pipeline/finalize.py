"""Finalize: the final ranking, hydrated candidates with provenance, the evidence pack and the
round-by-round report, as the response; errors of failed steps are listed, never raised."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence

from agentic_search.dependencies import Dependencies
from agentic_search.logic.access import AccessPolicy
from agentic_search.logic.cache_keys import normalize_query
from agentic_search.logic.chunking import doc_id_of
from agentic_search.logic.comparison import compare
from agentic_search.logic.executor import final_placement, finalize_evidence_pack
from agentic_search.logic.follow_up import within_first
from agentic_search.logic.quality import (
    CandidateEvidence,
    QueryReading,
    answer_quality,
    best_cosine,
    content_words,
    function_word_text,
    ids_to_return,
    needed_relevance,
    read_query,
    supported,
)
from agentic_search.pipeline.access import as_caller
from agentic_search.pipeline.hydrate import execution_stats, hydrate
from agentic_search.wire import (
    AnswerQuality,
    CacheInfo,
    Candidate,
    Comparison,
    EvidencePack,
    ExecutorState,
    IntentState,
    QueryExecutorOutput,
    SearchResponse,
    SearchState,
    SourceError,
    elapsed_ms,
)


@as_caller
def finalize(state: SearchState, deps: Dependencies) -> SearchState:
    """Finalize: the response (candidates, evidence pack, report). A state that already
    has a response (a cache hit) passes through. Errors of failed steps (``roundError``,
    ``fuseError``, ``gradeError``) are listed; what earlier rounds found is returned.

    Raises:
        ValueError: when there is neither a response nor an executor state.
    """
    if state.response is not None:
        return state
    ex = state.need_executor()
    req = state.request
    errors = [
        err.source_error(step)
        for step, err in (
            ("PrepareRound", state.round_error),
            ("FuseRerank", state.fuse_error),
            ("GradeRound", state.grade_error),
        )
        if err is not None
    ]
    if errors:
        ex.continue_search = False
        ex.report.stop_reason = f"{errors[0].source} failed: {errors[0].error}"
    output, pack = finish(deps, ex, errors)
    refused = AccessPolicy.of(deps.schema, state.caller).refusals(
        deps.schema, state.intent, req.filters or [], normalize_query(req.query).split()
    )
    if refused:  # the same whether or not such records exist: they were never read
        output.not_permitted = refused
    stage = output.execution_stats.stage_ms
    stage.update(state.stage_ms)
    stage["pipeline_total"] = round(
        (time.time() - ex.started_at) * 1000.0 + sum(state.stage_ms.values()), 2
    )
    assert state.intent is not None  # the executor state exists only after ExtractIntent
    resp = SearchResponse(
        query=req.query,
        domain=deps.schema.name,
        intent=state.intent,
        plan=ex.plan,
        output=output,
        evidence=pack,
        comparison=comparison_of(deps, ex),
    )
    wire = resp.wire()
    wire["cache"] = (state.cache or CacheInfo()).wire()
    if state.extractor is not None:
        wire["extractor"] = state.extractor.wire()
    if state.planner is not None:
        wire["planner"] = state.planner.wire()
    if state.plan_cache is not None:
        wire["planCache"] = state.plan_cache.wire()
    state.response = wire
    state._built = resp
    state.executor = None  # the response holds what is left of it
    state.round = None
    return state


def finish(
    deps: Dependencies, state: ExecutorState, errors: Sequence[SourceError] = ()
) -> tuple[QueryExecutorOutput, EvidencePack]:
    """The final ranking, hydrated candidates with provenance, and the evidence pack.
    ``errors`` are failures outside the rounds (a failed step) to list with the rest."""
    t = time.perf_counter()
    plan, intent = state.plan, state.intent
    # the relevance of what a later round brought into this head was measured by FuseRerank
    ranking, covering = final_placement(state, deps.schema.chunking is not None)
    if intent.follow_up is not None and intent.follow_up.within:
        # a filter on the previous results: those still matching first, then the rest
        ranking = within_first(ranking, intent.follow_up.within, lambda f: doc_id_of(f.id))
    state.report.covering = dict(covering)
    results = state.retrieved
    ok_all = [r for r in results if r.error is None]
    candidates = hydrate(deps, plan, intent, ok_all, ranking[: plan.limit])
    for cand in candidates:
        cand.relevance = state.relevance.get(cand.id)
    mark_relaxed(state, candidates)
    if state.rerank_scores:  # the candidates were just built here: set, not copied
        for cand in candidates:
            cand.rerank_score = state.rerank_scores.get(cand.id)
    stage_total = dict(state.stage_totals)
    stage_total["hydrate"] = elapsed_ms(t)
    pack = finalize_evidence_pack(
        state,
        deps.grader,
        [f.id for f in ranking],
        deps.matcher.supports,
        coverage=deps.schema.tuning.coverage,
    )
    total = (time.time() - state.started_at) * 1000.0 if state.started_at else elapsed_ms(t)
    stage_total["total"] = total
    state.report.total_ms = round(total, 2)
    stats = execution_stats(
        results, ranking, state.fusion_used or plan.fusion, stage_total, intent, plan
    )
    stats.candidates_before_fusion = state.candidates_before
    stats.candidates_after_fusion = max(state.candidates_after, len(ranking))
    stats.rounds = state.round_index
    all_errors = [e for r in state.report.rounds for e in r.errors] + list(errors)
    coverage = pack.coverage.confidence if pack.evidence else 0.0
    candidates, quality = grade_answer(deps, state, candidates, coverage)
    if deps.schema.chunking is not None:
        for cand in candidates:
            as_document(cand)
        if quality.supported is not None:  # named by their documents, as the candidates
            quality.supported = [doc_id_of(rid) for rid in quality.supported]
    if quality.reason == NO_WORDS:
        coverage = 0.0  # a query with no searchable words has covered nothing
    output = QueryExecutorOutput(
        candidates=candidates,
        execution_stats=stats,
        confidence=coverage,
        errors=all_errors,
        answer_quality=quality,
    )
    return output, pack


#: The verdict's reason for a query whose every word is a stopword ("the", "to be").
NO_WORDS = "the query has no searchable words (only stopwords)"


def as_document(cand: Candidate) -> Candidate:
    """Name a candidate of a chunked domain by its document (``d5::2`` -> ``d5``), in place,
    the chunk's point id kept in ``provenance.chunk`` (``d5`` for a document's first chunk);
    returns it."""
    cand.provenance.chunk = cand.id
    cand.id = doc_id_of(cand.id)
    return cand


def grade_answer(
    deps: Dependencies, state: ExecutorState, candidates: list[Candidate], coverage: float
) -> tuple[list[Candidate], AnswerQuality]:
    """The answer quality of ``candidates`` and the candidates that clear it, each judged by
    its own evidence (see :mod:`agentic_search.logic.quality`); the cosines were measured
    by FuseRerank (round 1's head, and what later rounds brought into theirs), each raised
    to its best dense source's cosine to the query's text, so the thresholds are those
    calibrated for the embedder's model
    (:meth:`~agentic_search.logic.schema.DomainSchema.quality_for`)."""
    spec = deps.schema.quality_for(deps.embedder_model())
    reading = (
        query_reading(deps, state.intent, state.word_relevance, held_words(deps, candidates))
        if spec.reads_words
        else None
    )
    found = {cand.id for cand in candidates}
    pins = {rid for rid in state.pins if rid in found}
    words = set(deps.analyzer.terms(state.intent.normalized_query))
    asked = {
        deps.schema.vocabulary_fields[vocab]: set(values)
        for vocab, values in state.intent.matches.items()
        if vocab in deps.schema.vocabulary_fields
    }
    evidence = [
        CandidateEvidence(
            id=cand.id,
            relevance=best_cosine(state.relevance.get(cand.id), cand.provenance.hits),
            vocabulary=any(
                asked.get(field, set()) & set(values)
                for field, values in cand.provenance.matched_values.items()
            ),
            lexical=bool(words) and words <= set(cand.provenance.matched_terms),
            named=cand.id in pins,
        )
        for cand in candidates
    ]
    if not words and not pins:  # "the", "to be": nothing the query asks could be covered
        quality = AnswerQuality(verdict="none", score=0.0, reason=NO_WORDS)
    else:
        quality = answer_quality(spec, evidence, coverage, reading)
    keep = set(ids_to_return(spec, quality, evidence, reading))
    kept = [cand for cand in candidates if cand.id in keep]
    quality.withheld = len(candidates) - len(kept)
    if any(ev.relevance is not None for ev in evidence):  # judged one by one
        quality.supported = [
            ev.id for ev in evidence if ev.id in keep and supported(spec, ev, reading)
        ]
        quality.support_relevance = needed_relevance(spec, reading)
    return kept, quality


def query_reading(
    deps: Dependencies,
    intent: IntentState,
    word_relevance: Mapping[str, float],
    held: Iterable[str] = (),
) -> QueryReading:
    """Which of the query's content words (its keyword terms, less those inside a record
    name the query was linked to: a misspelt name is read) some record holds, asked of the
    keyword index (:meth:`~agentic_search.ports.KeywordIndex.known_terms`), the ``held``
    terms (:func:`held_words`) held whatever the index says; a word no record
    holds whose cosine to the query (``word_relevance``, FuseRerank's
    :func:`~agentic_search.pipeline.relevance.word_relevance`) is under the domain's
    ``candidate_relevance`` is incidental."""
    skip = list(deps.analyzer.terms(function_word_text()))
    for link in intent.entities:
        skip.extend(deps.analyzer.terms(link.surface))
    words = content_words(intent.keywords, skip)
    known = deps.keyword.known_terms(deps.schema, words) if words else set()
    if known is not None:  # None: the index cannot tell, every word is taken as held
        known |= set(held) & set(words)
    spec = deps.schema.quality_for(deps.embedder_model())
    # the words as the user wrote them (a translation's beside them, its terms are keywords)
    written = deps.analyzer.written_forms(f"{intent.query} {intent.translation or ''}")
    return read_query(words, known, word_relevance, spec.candidate_relevance, written)


def held_words(deps: Dependencies, candidates: Sequence[Candidate]) -> set[str]:
    """The analysed terms of the asked values the ``candidates`` hold
    (``provenance.matched_values``: "Healthcare" of ``industries``) and of those values'
    synonyms: a query word read as a value a returned record carries is in a record, though
    the keyword index (which need not index that field) does not hold it."""
    vocab_of = {fname: vocab for vocab, fname in deps.schema.vocabulary_fields.items()}
    phrases: set[str] = set()
    for cand in candidates:
        for fname, values in cand.provenance.matched_values.items():
            synonyms = deps.schema.vocabularies.get(vocab_of.get(fname, ""), {})
            for value in values:
                phrases.update([str(value), *synonyms.get(str(value), [])])
    return set(deps.analyzer.terms(" ".join(sorted(phrases)))) if phrases else set()


def comparison_of(deps: Dependencies, state: ExecutorState) -> Comparison | None:
    """The comparison block of a comparison query: its pinned (named) records side by side
    (None for other queries, or when fewer than two named records were found)."""
    if state.intent.primary_goal != "compare" or len(state.pins) < 2:
        return None
    records = deps.store.hydrate_records(deps.schema, state.pins)
    return compare(
        deps.schema, state.pins, {rid: rec.payload or {} for rid, rec in records.items()}
    )


def mark_relaxed(state: ExecutorState, candidates: list[Candidate]) -> None:
    """Mark the candidates found only after relaxing filters: ``relaxedFilters`` names the
    dropped filters, which leave ``filtersApplied``."""
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


__all__ = [
    "comparison_of",
    "finalize",
    "finish",
    "grade_answer",
    "held_words",
    "mark_relaxed",
    "query_reading",
]
