"""The absolute relevance of candidates: the cosine of each one's stored vector on the plan's
main aspect to the query's vector (all-MiniLM vectors are unit length, so a dot product).

Fusion scores are relative (a list's best hit scores 1 whatever it is); this is the one signal
that says how well the best candidates match at all, so it is what the answer-quality check
reads (:mod:`agentic_search.logic.quality`). The main aspect's text-embedded dense source
already scored the candidates it found (its raw scores are these cosines); the others are
computed from their stored vectors.
"""

from __future__ import annotations

import array
from collections.abc import Sequence

import numpy as np

from agentic_search.dependencies import Dependencies
from agentic_search.logic.executor import dense_aspect, planned_dense_text
from agentic_search.logic.quality import content_words, function_word_text, read_query
from agentic_search.pipeline.embedding import document_vectors, embed_texts
from agentic_search.wire import (
    ExecutorState,
    IntentState,
    QueryPlan,
    RetrievedList,
    VectorSource,
)


def query_relevance(
    deps: Dependencies, plan: QueryPlan, results: Sequence[RetrievedList], ids: Sequence[str]
) -> dict[str, float]:
    """Cosine to the query of each of ``ids`` on the plan's main aspect, rounded to 4
    decimals; empty when the plan embeds no query text (a query by example only)."""
    aspect = dense_aspect(plan, deps.schema)
    text = planned_dense_text(plan, aspect)
    if not text or not ids:
        return {}
    name_prefix = f"dense:{aspect}:"
    wanted = set(ids)
    out: dict[str, float] = {}
    for r in results:
        if r.error is None and r.name.startswith(name_prefix) and r.query == text:
            for h in r.hits:  # its first hit of an id decides, as in the source's list
                if h.id in wanted and h.id not in out:
                    out[h.id] = round(float(h.score), 4)
    missing = [rid for rid in dict.fromkeys(ids) if rid not in out]
    if missing:
        probe = QueryPlan(
            domain=deps.schema.name,
            strategy="identity-focused",
            vector_sources=[VectorSource(aspect=aspect, top_k=1, text=text)],
            fusion="none",
        )
        vectors, errors = embed_texts(deps, probe)
        if text in vectors and text not in errors:
            q = np.asarray(vectors[text], dtype=np.float32)
            q = q / (float(np.linalg.norm(q)) or 1.0)
            for rid, vec in deps.store.vectors_of(deps.schema, missing, aspect).items():
                out[rid] = round(float(np.dot(q, float32(vec))), 4)
    return out


def settle_relevance(deps: Dependencies, state: ExecutorState, ids: Sequence[str]) -> None:
    """Measure, into ``state.relevance``, the relevance of those of ``ids`` a later round
    left due (``state.relevance_due``: the round whose head an id entered first), each as
    :func:`query_relevance` of that round's lists (kept in ``state.retrieved``, pruned to
    hits of ids that can be returned, which these are) would have measured it then.
    FuseRerank asks it at a later round's end for the head Finalize would return (Finalize
    has no embedder: the Lambda function runs without it): most of a later round's head never
    is returned, and reading all their stored vectors cost time in every round
    (docs/benchmarks.md)."""
    due = state.relevance_due
    wanted: dict[int, list[str]] = {}
    for rid in dict.fromkeys(ids):
        rnd = due.get(rid)
        if rnd is not None and rid not in state.relevance:
            wanted.setdefault(rnd, []).append(rid)
    for rnd in sorted(wanted):
        lists = [r for r in state.retrieved if r.round == rnd]
        state.relevance.update(query_relevance(deps, state.plan, lists, wanted[rnd]))


def float32(vec: Sequence[float]) -> np.ndarray:
    """``vec`` as a float32 vector, as ``np.asarray(vec, dtype=np.float32)`` makes it: a list
    (what the stores hand stored vectors over as) through ``array.array("f")``, the same
    round-to-nearest cast of each value in C, several times faster for a 384-float list
    (docs/benchmarks.md); anything else, or a list ``array`` refuses (a None), through numpy."""
    if isinstance(vec, list):
        try:
            return np.frombuffer(array.array("f", vec), dtype=np.float32)
        except TypeError:
            pass
    return np.asarray(vec, dtype=np.float32)


def word_relevance(deps: Dependencies, plan: QueryPlan, intent: IntentState) -> dict[str, float]:
    """Cosine to the query (the text the plan's main aspect embedded, its vector cached by
    then; the query as written when there is none) of each content word of ``intent`` that
    no record holds, embedded as the word was written (its first surface form in the
    query), rounded to 4 decimals: how much of the need a word the catalog lacks carries
    ("Spotify" in "alternative to Spotify for streaming music": 0.78; "figure" in "figure
    out which microservice is making our requests slow": 0.10). Empty when the domain's
    abstention does not read the query's words, every word is held, the query is unread
    (another language: :class:`~agentic_search.logic.quality.QueryReading`), or the
    embedder failed (then every such word counts)."""
    spec = deps.schema.quality_for(deps.embedder_model())
    if not spec.reads_words:
        return {}
    words = content_words(intent.keywords, deps.analyzer.terms(function_word_text()))
    reading = read_query(words, deps.keyword.known_terms(deps.schema, words) if words else set())
    if not reading.missing:
        return {}
    surface: dict[str, str] = {}
    for token in intent.query.split():
        for term in deps.analyzer.terms(token):
            surface.setdefault(term, token.strip(".,;:!?()[]\"'"))
    texts = [surface.get(w, w) for w in reading.unknown]
    aspect = dense_aspect(plan, deps.schema)
    text = planned_dense_text(plan, aspect) or intent.query
    probe = QueryPlan(
        domain=deps.schema.name,
        strategy="identity-focused",
        vector_sources=[VectorSource(aspect=aspect, top_k=1, text=text)],
        fusion="none",
    )
    try:
        vectors, errors = embed_texts(deps, probe)  # round 1's vector, from the memo
        if text not in vectors or text in errors:
            return {}
        q = np.asarray(vectors[text], dtype=np.float32).reshape(-1)
        vecs = np.asarray(document_vectors(deps.embedder, texts), dtype=np.float32)
    except Exception:  # an optional signal: unmeasured, every such word counts (Finalize)
        return {}
    q = q / (float(np.linalg.norm(q)) or 1.0)
    vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    return {w: round(float(v @ q), 4) for w, v in zip(reading.unknown, vecs, strict=True)}


__all__ = ["float32", "query_relevance", "settle_relevance", "word_relevance"]
