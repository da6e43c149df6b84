"""Deterministic plan execution: every source in parallel, fusion, dedupe, provenance.

Steps of :meth:`QueryExecutor.execute`:

1. **embed**: each distinct query text of the dense sources is embedded once (a failure here
   fails only the dense sources that need that text; reference-tool vectors are read from the
   store);
2. **retrieve**: dense sources (one per aspect x query vector source), the BM25 source and the
   structured sources run in a bounded thread pool, each with its own deadline
   (``SOURCE_TIMEOUT_S``); hard filters are pushed down into every source; a source that
   raises or times out is recorded in ``errors`` and the others still answer;
3. **fuse**: the plan's method over the ranked lists (RRF / weighted sum / DBSF / none);
4. **hydrate**: candidates are deduplicated by id, keep every source that found them (rank,
   raw score, per-list min-max score) and get payload-derived metadata and explanations.
"""

from __future__ import annotations

import concurrent.futures as cf
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
from pydantic import TypeAdapter

from agentic_search.adapters.embedders import Embedder, embed_within
from agentic_search.adapters.keyword_index import KeywordIndex
from agentic_search.adapters.qdrant.store import QdrantStore
from agentic_search.adapters.structured import StructuredStore
from agentic_search.config import Settings
from agentic_search.domain.expansion import rocchio_vector
from agentic_search.domain.filters import to_qdrant
from agentic_search.domain.fusion import fuse, minmax
from agentic_search.domain.schema import DomainSchema
from agentic_search.domain.text import default_analyzer, field_text, keyword_text
from agentic_search.state import (
    INTERNAL_KEYS,
    Candidate,
    ExecutionStats,
    Fused,
    IntentState,
    QueryExecutorOutput,
    QueryPlan,
    RankedList,
    ScoredRecord,
    SourceError,
    SourceResult,
)


class EmbedderProvider(Protocol):
    """Anything with an ``embedder`` attribute (the engine, which loads it lazily)."""

    @property
    def embedder(self) -> Embedder: ...


#: Query texts whose vectors are kept (LRU): sub-queries of one round and repeated queries
#: embed a text once.
QUERY_VECTOR_CACHE = 256


#: Hydrated candidates validated in one call (see :meth:`QueryExecutor.hydrate`).
_CANDIDATES = TypeAdapter(list[Candidate])


class SourceTimeout(TimeoutError):
    """A source did not answer before its deadline."""


class QueryExecutor:
    """Runs a QueryPlan against the stores of one domain."""

    def __init__(
        self,
        schema: DomainSchema,
        store: QdrantStore,
        embedders: EmbedderProvider,
        keyword: KeywordIndex,
        structured: StructuredStore,
        settings: Settings,
    ) -> None:
        self.schema = schema
        self.store = store
        self._embedders = embedders
        self.keyword = keyword
        self.structured = structured
        self.settings = settings
        self.analyzer = default_analyzer()
        self._vector_cache: OrderedDict[tuple[int, str], np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._in_flight: dict[tuple[int, str], cf.Future] = {}

    def clear_vector_cache(self) -> None:
        """Forget cached query vectors (benchmarks call this so a query is timed cold)."""
        with self._cache_lock:
            self._vector_cache.clear()

    @property
    def embedder(self) -> Embedder:
        """The provider's embedder (it may load the model on first use)."""
        return self._embedders.embedder

    # ----- sources ----------------------------------------------------------------------------

    def _tasks(
        self, plan: QueryPlan, vectors: dict[str, np.ndarray], embed_errors: dict[str, str]
    ) -> tuple[list[tuple[SourceResult, Callable[[], list[ScoredRecord]]]], list[SourceResult]]:
        schema = self.schema
        flt = to_qdrant(schema, plan.filters, plan.exclude_ids)
        tasks: list[tuple[SourceResult, Callable[[], list[ScoredRecord]]]] = []
        failed: list[SourceResult] = []
        for vs in plan.vector_sources:
            name = f"dense:{vs.aspect}:{vs.query_vector_source}"
            res = SourceResult(
                name,
                "qdrant",
                weight=vs.weight,
                aspect=vs.aspect,
                query_vector_source=vs.query_vector_source,
                round=plan.round,
                query=vs.text,
            )
            if vs.query_vector_source == "reference_tool":
                ref = vs.text or ""

                def run(vs=vs, ref=ref) -> list[ScoredRecord]:
                    vec = self.store.vector_of(schema, ref, vs.aspect)
                    if vec is None:
                        raise LookupError(
                            f"reference tool {ref!r} has no stored {vs.aspect!r} vector"
                        )
                    return self.store.query_dense(schema, vs.aspect, vec, vs.top_k, flt)

                tasks.append((res, run))
                continue
            text = vs.text or ""
            if text in embed_errors:
                res.error = SourceError(
                    source=name, error="EmbedderError", message=embed_errors[text]
                )
                failed.append(res)
                continue
            vec = vectors[text]
            if vs.feedback_ids:

                def run_feedback(vs=vs, vec=vec) -> list[ScoredRecord]:
                    stored = self.store.vectors_of(schema, vs.feedback_ids, vs.aspect)
                    moved = rocchio_vector(vec, list(stored.values()), vs.feedback_alpha)
                    return self.store.query_dense(schema, vs.aspect, moved, vs.top_k, flt)

                tasks.append((res, run_feedback))
                continue
            tasks.append(
                (
                    res,
                    lambda vs=vs, vec=vec: self.store.query_dense(
                        schema, vs.aspect, vec, vs.top_k, flt
                    ),
                )
            )
        if plan.sparse_source is not None:
            sp = plan.sparse_source
            res = SourceResult(
                f"sparse:{self.keyword.name}",
                "qdrant",
                weight=sp.weight,
                round=plan.round,
                query=sp.text,
            )
            tasks.append(
                (
                    res,
                    lambda sp=sp: self.keyword.search(
                        schema, sp.text, sp.top_k, plan.filters, plan.exclude_ids
                    ),
                )
            )
        for i, st in enumerate(plan.structured_sources):
            res = SourceResult(
                f"structured:{self.structured.system}:{i}",
                self.structured.system,
                weight=st.weight,
                round=plan.round,
                query=", ".join(p.label() for p in st.preferences) or None,
            )
            tasks.append(
                (
                    res,
                    lambda st=st: self.structured.find(
                        schema,
                        [*plan.filters, *st.filters],
                        st.preferences,
                        st.top_k,
                        plan.exclude_ids,
                    ),
                )
            )
        return tasks, failed

    def _embed(self, plan: QueryPlan) -> tuple[dict[str, np.ndarray], dict[str, str]]:
        texts = list(
            dict.fromkeys(
                vs.text or ""
                for vs in plan.vector_sources
                if vs.query_vector_source != "reference_tool"
            )
        )
        vectors: dict[str, np.ndarray] = {}
        errors: dict[str, str] = {}
        embedder = self.embedder
        tag = id(embedder)  # a swapped embedder never sees another one's vectors
        mine: list[str] = []  # texts this call embeds
        waits: dict[str, cf.Future] = {}  # texts another thread is embedding right now
        with self._cache_lock:
            for t in texts:
                key = (tag, t)
                if key in self._vector_cache:
                    self._vector_cache.move_to_end(key)
                    vectors[t] = self._vector_cache[key]
                elif key in self._in_flight:
                    waits[t] = self._in_flight[key]
                else:
                    self._in_flight[key] = cf.Future()
                    mine.append(t)
        if mine:
            try:
                # bounded by the source deadline: a hanging embedding API fails only dense
                embedded = embed_within(embedder, mine, self.settings.source_timeout_s)
                failure: Exception | None = None
            except Exception as exc:  # any embedder failure fails only the dense sources
                embedded, failure = [], exc
            with self._cache_lock:
                for i, t in enumerate(mine):
                    fut = self._in_flight.pop((tag, t))
                    if failure is not None:
                        fut.set_exception(failure)
                        errors[t] = f"{type(failure).__name__}: {failure}"
                        continue
                    vectors[t] = embedded[i]
                    fut.set_result(embedded[i])
                    self._vector_cache[(tag, t)] = embedded[i]
                    while len(self._vector_cache) > QUERY_VECTOR_CACHE:
                        self._vector_cache.popitem(last=False)
        for t, fut in waits.items():  # sub-queries of one round share one embedding
            try:
                vectors[t] = fut.result()
            except Exception as exc:
                errors[t] = f"{type(exc).__name__}: {exc}"
        return vectors, errors

    # ----- main -------------------------------------------------------------------------------

    def run_sources(self, plan: QueryPlan) -> tuple[list[SourceResult], dict[str, float]]:
        """Embed, then run every source of ``plan`` in the bounded pool (``embed`` and
        ``retrieve`` stage times in ms). Never raises for a failing source: its
        :class:`SourceResult` carries the error instead of hits."""
        stage: dict[str, float] = {}
        t = time.perf_counter()
        vectors, embed_errors = self._embed(plan)
        stage["embed"] = _ms(t)

        tasks, results = self._tasks(plan, vectors, embed_errors)
        t = time.perf_counter()
        timeout = self.settings.source_timeout_s
        pool = cf.ThreadPoolExecutor(
            max_workers=max(1, min(self.settings.max_parallel_sources, len(tasks) or 1)),
            thread_name_prefix="source",
        )
        try:
            futures = {}
            for res, fn in tasks:
                futures[pool.submit(_timed, fn)] = res
            deadline = time.monotonic() + timeout
            for fut, res in futures.items():
                try:
                    hits, ms = fut.result(timeout=max(0.0, deadline - time.monotonic()))
                    res.hits, res.ms = hits, ms
                except cf.TimeoutError:
                    res.ms = timeout * 1000
                    res.error = SourceError(
                        source=res.name,
                        error="SourceTimeout",
                        message=f"no answer within {timeout:.1f} s",
                    )
                except Exception as exc:
                    res.error = SourceError(
                        source=res.name, error=type(exc).__name__, message=str(exc)[:500]
                    )
                results.append(res)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        stage["retrieve"] = _ms(t)
        return results, stage

    @staticmethod
    def merge(results: list[SourceResult], method: str, rrf_k: int) -> tuple[list[Fused], str]:
        """Fuse the successful sources' ranked lists; returns the fused list (best first)
        and the method actually used ("none" with several non-empty lists becomes "rrf")."""
        ok = [r for r in results if r.error is None]
        lists = [
            RankedList(r.name, [h.id for h in r.hits], [h.score for h in r.hits], r.weight)
            for r in ok
        ]
        non_empty = [lst for lst in lists if lst.ids]
        if method == "none" and len(non_empty) > 1:
            method = "rrf"
        return (fuse(lists, method, rrf_k) if non_empty else []), method

    def execute(self, plan: QueryPlan, intent: IntentState | None = None) -> QueryExecutorOutput:
        """Execute ``plan`` in one round; never raises for a failing source (see ``errors``)."""
        t0 = time.perf_counter()
        results, stage = self.run_sources(plan)

        t = time.perf_counter()
        fused, method = self.merge(results, plan.fusion, plan.rrf_k)
        stage["fusion"] = _ms(t)

        t = time.perf_counter()
        ok = [r for r in results if r.error is None]
        candidates = self.hydrate(plan, intent, ok, fused[: plan.limit])
        stage["hydrate"] = _ms(t)

        total = _ms(t0)
        stage["total"] = total
        stats = execution_stats(results, fused, method, stage, intent, plan)
        return QueryExecutorOutput(
            candidates=candidates,
            execution_stats=stats,
            confidence=_confidence(candidates, intent),
            errors=[r.error for r in results if r.error is not None],
        )

    def hydrate(
        self,
        plan: QueryPlan,
        intent: IntentState | None,
        results: list[SourceResult],
        fused: list[Fused],
        query_text: str | None = None,
        known_payloads: dict[str, dict[str, Any]] | None = None,
    ) -> list[Candidate]:
        """Candidates for ``fused`` (in its order) with payload metadata and provenance: every
        source hit of ``results`` that found them, matched query terms, matched values.
        ``query_text`` (default: the plan's sparse text) is what matched terms are taken from.
        ``known_payloads`` (record id -> payload) already read by the caller are not fetched
        again.
        """
        schema = self.schema
        payloads: dict[str, dict[str, Any]] = dict(known_payloads or {})
        # Plain dicts, validated once per call as a list of candidates (below): hundreds of
        # SourceHit/Provenance/Candidate constructions one by one were a large share of it.
        hits: dict[str, list[dict[str, Any]]] = {}
        wanted = {f.id for f in fused}  # hits of other ids would be built and never read
        for r in results:
            norm = minmax([h.score for h in r.hits])
            for rank, (h, n) in enumerate(zip(r.hits, norm, strict=True), start=1):
                if h.id not in wanted:
                    continue
                if h.payload:
                    payloads.setdefault(h.id, h.payload)
                hits.setdefault(h.id, []).append(
                    {
                        "source": r.name,
                        "system": r.system,
                        "aspect": r.aspect,
                        "query_vector_source": r.query_vector_source,
                        "rank": rank,
                        "raw_score": round(float(h.score), 6),
                        "normalized_score": round(n, 6),
                        "round": r.round,
                        "query": r.query,
                    }
                )
        missing = [f.id for f in fused if f.id not in payloads]
        if missing:
            for rid, rec in self.store.read_records(schema, missing).items():
                payloads[rid] = rec.payload or {}
        filters_applied = [f.label() for f in plan.filters]
        if plan.exclude_ids:
            filters_applied.append(f"{schema.id_field} not in [{', '.join(plan.exclude_ids)}]")
        if query_text is None and plan.sparse_source is not None:
            query_text = plan.sparse_source.text
        query_terms = set(self.analyzer.terms(query_text)) if query_text else set()
        # Which query terms each candidate contains, from the keyword index's postings when it
        # can tell (bm25s): analysing 100 abstracts per search was most of this step's time.
        presence: dict[str, set[str]] = {}
        lookup = getattr(self.keyword, "term_presence", None)
        if query_terms and lookup is not None:
            presence = lookup(schema, sorted(query_terms), [f.id for f in fused])
        collection = self.store.collection(schema)
        out: list[dict[str, Any]] = []
        for f in fused:
            payload = {k: v for k, v in payloads.get(f.id, {}).items() if k not in INTERNAL_KEYS}
            own = sorted(
                hits.get(f.id, []),
                key=lambda h: (-f.contributions.get(h["source"], 0.0), h["round"] or 1, h["rank"]),
            )
            best = own[0] if own else None
            dense = next((h for h in own if h["aspect"]), None)
            if not query_terms:
                matched_terms: list[str] = []
            elif f.id in presence:
                matched_terms = sorted(presence[f.id])
            else:
                matched_terms = sorted(
                    query_terms & set(self.analyzer.terms(keyword_text(schema, payload)))
                )
            out.append(
                {
                    "id": f.id,
                    "source": best["system"] if best else "qdrant",
                    "score": round(f.score, 6),
                    "fused_score": round(f.fused, 6),
                    "metadata": self._metadata(payload),
                    "provenance": {
                        "collection": collection,
                        "aspect": dense["aspect"] if dense else None,
                        "query_vector_source": dense["query_vector_source"] if dense else None,
                        "filters_applied": filters_applied,
                        "hits": own,
                        "matched_terms": matched_terms,
                        "matched_values": self._matched_values(intent, payload),
                    },
                }
            )
        return _CANDIDATES.validate_python(out)

    def _metadata(self, payload: dict[str, Any]) -> dict[str, Any]:
        meta: dict[str, Any] = {}
        for key, fname in self.schema.candidate_metadata.items():
            value = payload.get(fname)
            if key == "platform" and isinstance(value, list):
                value = ", ".join(value)
            if key == "description" and isinstance(value, str) and len(value) > 600:
                value = value[:597] + "..."
            if value is not None:
                meta[key] = value
        return meta

    def _matched_values(
        self, intent: IntentState | None, payload: dict[str, Any]
    ) -> dict[str, list[str]]:
        if intent is None:
            return {}
        out: dict[str, list[str]] = {}
        for vocab, values in intent.matches.items():
            fname = self.schema.vocabulary_fields.get(vocab)
            if not fname:
                continue
            have = payload.get(fname)
            have_list = have if isinstance(have, list) else [have]
            got = [v for v in values if v in have_list]
            if got:
                out[fname] = got
        for flt in intent.constraints:
            value = payload.get(flt.field)
            if value is not None:
                out.setdefault(flt.field, [field_text(value)])
        return out


def execution_stats(
    results: list[SourceResult],
    fused: list[Fused],
    method: str,
    stage: dict[str, float],
    intent: IntentState | None,
    plan: QueryPlan,
) -> ExecutionStats:
    """Counters of one execution (``stage`` in ms, with a ``total``)."""
    ok = [r for r in results if r.error is None]
    return ExecutionStats(
        vector_queries_executed=sum(1 for r in ok if r.name.startswith("dense:")),
        structured_queries_executed=sum(1 for r in ok if r.name.startswith("structured:")),
        sparse_queries_executed=sum(1 for r in ok if r.name.startswith("sparse:")),
        fusion_method=method,
        latency_ms=round(stage.get("total", 0.0)),
        candidates_before_fusion=sum(len(r.hits) for r in ok),
        candidates_after_fusion=len(fused),
        stage_ms={k: round(v, 2) for k, v in stage.items()},
        source_ms={r.name: round(r.ms, 2) for r in results},
        extractor=intent.extractor if intent else "none",
        planner=plan.planner,
    )


def _timed(fn: Callable[[], list[ScoredRecord]]) -> tuple[list[ScoredRecord], float]:
    t = time.perf_counter()
    result = fn()
    return result, _ms(t)


def _ms(t: float) -> float:
    return (time.perf_counter() - t) * 1000.0


def _confidence(candidates: list[Candidate], intent: IntentState | None) -> float:
    """Heuristic in [0, 1]: half the intent's confidence, half the share of the top 5
    candidates that two or more sources agree on (0 without candidates)."""
    if not candidates:
        return 0.0
    top = candidates[:5]
    agree = sum(1 for c in top if len({h.source for h in c.provenance.hits}) >= 2) / len(top)
    base = intent.confidence if intent else 0.5
    return round(0.5 * base + 0.5 * agree, 3)
