"""Running a plan's sources: embed once, every source in parallel under its deadline, fuse.

1. **embed** (:mod:`agentic_search.pipeline.embedding`): each distinct query text of the dense
   sources is embedded once, under the source deadline (a failure fails only the dense sources
   that need that text; reference-tool vectors are read from the store);
2. **retrieve**: dense sources (one per aspect x query vector source), the BM25 source and the
   structured sources run on the process's source threads
   (:mod:`~agentic_search.pipeline.source_pool`), at most ``MAX_PARALLEL_SOURCES`` of a call
   at once, each with its own deadline
   (``SOURCE_TIMEOUT_S``); hard filters are pushed down into every source; a source that
   raises or times out carries the error and the others still answer;
3. **fuse** (:func:`merge`): the plan's method over the successful ranked lists.
"""

from __future__ import annotations

import concurrent.futures as cf
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from agentic_search.dependencies import Dependencies
from agentic_search.logic.fusion import fuse
from agentic_search.logic.rocchio import rocchio_vector
from agentic_search.pipeline.embedding import embed_texts
from agentic_search.pipeline.graph import fetch_entities, walk
from agentic_search.pipeline.source_pool import SOURCES, bounded, runs_in_process
from agentic_search.wire import (
    SOURCE_TIMEOUT,
    Fused,
    QueryPlan,
    RankedList,
    RetrievedList,
    ScoredRecord,
    SourceError,
    elapsed_ms,
)


class Task(NamedTuple):
    """One source of a plan: its result shell, the call that fills it, and whether the call
    runs in the calling thread (its adapter
    :func:`~agentic_search.pipeline.source_pool.runs_in_process`)
    rather than on the source threads."""

    result: RetrievedList
    call: Callable[[], list[ScoredRecord]]
    inline: bool = False


def pinned_or_bridged(result: RetrievedList) -> bool:
    """Whether a result is placed in the ranking (the pins of an entity fetch, a bridge
    walk's best record), not fused."""
    return result.name == "entity" or (
        result.name == "graph" and result.query_vector_source != "fused"
    )


def source_tasks(
    deps: Dependencies, plan: QueryPlan, vectors: dict[str, Any], embed_errors: dict[str, str]
) -> tuple[list[Task], list[RetrievedList]]:
    """One task per source of ``plan`` (its result shell and the call that fills it), and the
    dense sources that already failed because their text could not be embedded."""
    schema = deps.schema
    store = deps.store
    on_store = runs_in_process(store)
    filters, exclude = plan.filters, plan.exclude_ids
    tasks: list[Task] = []
    failed: list[RetrievedList] = []
    for vs in plan.vector_sources:
        name = f"dense:{vs.aspect}:{vs.query_vector_source}"
        res = RetrievedList(
            name=name,
            system="qdrant",
            weight=vs.weight,
            aspect=vs.aspect,
            query_vector_source=vs.query_vector_source,
            round=plan.round,
            query=vs.text,
        )
        if vs.query_vector_source == "reference_tool":
            ref = vs.text or ""

            def run(vs=vs, ref=ref) -> list[ScoredRecord]:
                vec = store.vector_of(schema, ref, vs.aspect)
                if vec is None:
                    raise LookupError(f"reference tool {ref!r} has no stored {vs.aspect!r} vector")
                return store.query_dense(schema, vs.aspect, vec, vs.top_k, filters, exclude)

            tasks.append(Task(res, run, on_store))
            continue
        text = vs.text or ""
        if text in embed_errors:
            res.error = SourceError(source=name, error="EmbedderError", message=embed_errors[text])
            failed.append(res)
            continue
        vec = vectors[text]
        if vs.feedback_ids:

            def run_feedback(vs=vs, vec=vec) -> list[ScoredRecord]:
                stored = store.vectors_of(schema, vs.feedback_ids, vs.aspect)
                moved = rocchio_vector(vec, list(stored.values()), vs.feedback_alpha)
                return store.query_dense(schema, vs.aspect, moved, vs.top_k, filters, exclude)

            tasks.append(Task(res, run_feedback, on_store))
            continue
        tasks.append(
            Task(
                res,
                lambda vs=vs, vec=vec: store.query_dense(
                    schema, vs.aspect, vec, vs.top_k, filters, exclude
                ),
                on_store,
            )
        )
    if plan.sparse_source is not None:
        sp = plan.sparse_source
        keyword = deps.keyword
        res = RetrievedList(
            name=f"sparse:{keyword.name}",
            system="qdrant",
            weight=sp.weight,
            round=plan.round,
            query=sp.text,
        )
        tasks.append(
            Task(
                res,
                lambda sp=sp: keyword.search(schema, sp.text, sp.top_k, filters, exclude),
                runs_in_process(keyword),
            )
        )
    if plan.entity_source is not None:
        es = plan.entity_source
        res = RetrievedList(
            name="entity", system="qdrant", round=plan.round, query=", ".join(es.names) or None
        )
        tasks.append(Task(res, lambda es=es: fetch_entities(deps, es, filters), on_store))
    if plan.graph_source is not None:
        gs = plan.graph_source
        res = RetrievedList(
            name="graph",
            system="qdrant",
            weight=gs.weight,
            aspect=gs.aspect,
            query_vector_source=gs.placement,
            round=plan.round,
            query=gs.text or (f"neighbours of {gs.reference}" if gs.reference else None),
        )
        tasks.append(Task(res, lambda gs=gs: walk(deps, gs, filters, exclude), on_store))
    if plan.structured_sources:
        structured = deps.structured
        for i, st in enumerate(plan.structured_sources):
            res = RetrievedList(
                name=f"structured:{structured.system}:{i}",
                system=structured.system,
                weight=st.weight,
                round=plan.round,
                query=", ".join(p.label() for p in st.preferences) or None,
            )
            tasks.append(
                Task(
                    res,
                    lambda st=st: structured.find(
                        schema, [*filters, *st.filters], st.preferences, st.top_k, exclude
                    ),
                    runs_in_process(structured),
                )
            )
    return tasks, failed


def run_sources(
    deps: Dependencies, plan: QueryPlan
) -> tuple[list[RetrievedList], dict[str, float]]:
    """Embed, then run every source of ``plan``; returns the results (in the plan's order)
    and the ``embed`` and ``retrieve`` stage times (ms). Never raises for a failing source:
    its :class:`~agentic_search.wire.RetrievedList` carries the error instead of hits.

    Sources on a remote system run on the source threads
    (:mod:`~agentic_search.pipeline.source_pool`), at most ``MAX_PARALLEL_SOURCES`` at once,
    each abandoned at the deadline (``SOURCE_TIMEOUT_S`` from the start), its result's error
    then :data:`~agentic_search.wire.SOURCE_TIMEOUT`; sources in this process
    (:attr:`Task.inline`) run in the calling thread meanwhile, and answer whenever they
    finish."""
    stage: dict[str, float] = {}
    t = time.perf_counter()
    vectors, embed_errors = embed_texts(deps, plan)
    stage["embed"] = elapsed_ms(t)

    tasks, results = source_tasks(deps, plan, vectors, embed_errors)
    t = time.perf_counter()
    settings = deps.settings
    timeout = settings.source_timeout_s
    deadline = time.monotonic() + timeout
    pool = None if all(task.inline for task in tasks) else SOURCES.executor()
    futures: dict[int, cf.Future] = {}  # task index -> its run on the source threads
    if pool is not None:
        gate = threading.BoundedSemaphore(max(1, settings.max_parallel_sources))
        futures = {
            i: pool.submit(_timed, bounded(task.call, gate))
            for i, task in enumerate(tasks)
            if not task.inline
        }
    abandoned = False
    for i, task in enumerate(tasks):
        res = task.result
        try:
            if task.inline:
                records, ms = _timed(task.call)
            else:
                fut = futures[i]
                try:
                    records, ms = fut.result(timeout=max(0.0, deadline - time.monotonic()))
                except cf.TimeoutError:
                    abandoned |= not fut.cancel()  # still running: its thread is not given back
                    res.ms = timeout * 1000
                    res.error = SourceError(
                        source=res.name,
                        error=SOURCE_TIMEOUT,
                        message=f"no answer within {timeout:.1f} s",
                    )
                    results.append(res)
                    continue
            res.add_hits(records)  # the one conversion of a store's answer
            res.ms = round(ms, 2)
        except Exception as exc:
            res.error = SourceError(
                source=res.name, error=type(exc).__name__, message=str(exc)[:500]
            )
        results.append(res)
    if abandoned and pool is not None:
        SOURCES.discard(pool)
    stage["retrieve"] = elapsed_ms(t)
    log = deps.caches.source_log
    if log is not None:
        log.append((list(results), dict(stage)))
    return results, stage


def merge(results: Sequence[RetrievedList], method: str, rrf_k: int) -> tuple[list[Fused], str]:
    """Fuse the successful sources' ranked lists (deduplicated by record id); returns the
    fused list (best first) and the method actually used ("none" with several non-empty
    lists becomes "rrf")."""
    ok = [r for r in results if r.error is None and not pinned_or_bridged(r)]
    lists = [
        RankedList(r.name, [h.id for h in r.hits], [h.score for h in r.hits], r.weight) for r in ok
    ]
    non_empty = [lst for lst in lists if lst.ids]
    if method == "none" and len(non_empty) > 1:
        method = "rrf"
    return (fuse(lists, method, rrf_k) if non_empty else []), method


def _timed(fn: Callable[[], list[ScoredRecord]]) -> tuple[list[ScoredRecord], float]:
    t = time.perf_counter()
    result = fn()
    return result, elapsed_ms(t)


__all__ = [
    "merge",
    "pinned_or_bridged",
    "run_sources",
    "source_tasks",
]
