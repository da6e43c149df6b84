"""BEIR-layout relevance evaluation: several systems on the same index and queries, one run.

A dataset folder holds (BEIR, Thakur et al., "BEIR: A Heterogeneous Benchmark for Zero-shot
Evaluation of Information Retrieval Models", NeurIPS Datasets and Benchmarks 2021):

* ``corpus.jsonl``: one ``{"_id", "title", "text"}`` object per line (the ``documents`` domain);
* ``queries.jsonl``: one ``{"_id", "text"}`` object per line;
* ``qrels/<split>.tsv``: a header line ``query-id corpus-id score`` then one judgment per line,
  tab-separated; ``score`` is an integer graded relevance (0 = judged not relevant).

Only queries with at least one judgment in the split are evaluated. The corpus is ingested into
the ``documents`` domain when the collection does not hold exactly the corpus ids (records
that are not in the corpus are deleted first, so every system searches exactly this corpus;
the CLI gives the evaluation its own collection, ``eval-<dataset>-documents``, so this never
touches a user's ``documents`` collection).

Systems (all over the same collection, each asked for its top ``TOP_K`` = 100):

* ``bm25``: the keyword index alone (:meth:`KeywordIndex.search` on the query text);
* ``dense``: the ``content`` named vector alone, queried with the embedded query text;
* ``hybrid-rrf``: the two lists above fused in one step by plain RRF, k = 60
  (:func:`agentic_search.domain.fusion.rrf`; Cormack, Clarke, Buettcher, SIGIR 2009);
* ``executor-1round``: the engine's own pipeline, ``engine.search(query, limit=100)``
  (rule-based intent, plan, executor with one round, fusion, hydration);
* ``executor``: the multi-round executor (``engine.search(query, limit=100)`` with
  ``MAX_ROUNDS`` rounds at most);
* ``hybrid-rrf-qdrant`` (optional, ``--systems``): the same fusion done by Qdrant itself, one
  ``query_points`` call with a dense and a sparse prefetch (top 100 each) fused by Qdrant's
  RRF with k = 60. It needs the collection's sparse ``bm25`` vector, i.e. a Qdrant server
  (``QDRANT_URL``); in local mode BM25 lives in bm25s and the system is reported unavailable.

Metrics come from ``pytrec_eval`` (trec_eval's C code; Van Gysel and de Rijke, SIGIR 2018),
as BEIR computes them, per query and as the mean over the evaluated queries:

* ``ndcg@10`` (trec_eval ``ndcg_cut_10``): DCG@10 / IDCG@10 with
  ``DCG@k = sum_{i=1..k} rel_i / log2(i + 1)`` (linear gains, as trec_eval and BEIR; Järvelin
  and Kekäläinen, "Cumulated gain-based evaluation of IR techniques", ACM TOIS 20(4), 2002);
* ``recall@100`` (``recall_100``): relevant documents in the top 100 / relevant documents;
* ``mrr@10``: ``recip_rank`` (1 / rank of the first relevant document, 0 if none) computed on
  each ranking truncated to its top 10.

Rankings are handed to trec_eval with scores ``n, n-1, ..., 1`` so that its sort (by score,
ties by document id) keeps each system's own order exactly. As BEIR does by default, a ranked
document whose id equals the query id is dropped before scoring (``ignore_identical_ids``).

Latency is wall-clock time per query per system in milliseconds (``time.perf_counter``),
in-process, measured after a warm-up of a few queries through every system, reported as
p50/p95/p99 (numpy's linear-interpolation percentiles) over the evaluated queries.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from agentic_search.domain.chunking import doc_id_of, doc_ranking
from agentic_search.domain.fusion import DEFAULT_RRF_K, rrf
from agentic_search.domain.schema import DomainSchema
from agentic_search.process_tuning import freeze_long_lived
from agentic_search.state import RankedList
from agentic_search.sync.files import CatalogRead, read_beir_corpus
from agentic_search.sync.indexer import Indexer

if TYPE_CHECKING:
    from agentic_search.service import SearchService

TOP_K = 100
RRF_K = DEFAULT_RRF_K  # plain RRF, k = 60, whatever RRF_K the engine is configured with
DENSE_ASPECT = "content"
DEFAULT_WARMUP = 3

SYSTEMS: tuple[str, ...] = ("bm25", "dense", "hybrid-rrf", "executor-1round", "executor")
#: Systems run only when asked for by name (``--systems``).
OPTIONAL_SYSTEMS: tuple[str, ...] = ("hybrid-rrf-qdrant",)
#: Systems that cannot run in this build, with the reason shown in the output.
UNAVAILABLE: dict[str, str] = {}

METRICS: tuple[str, ...] = ("ndcg@10", "recall@100", "mrr@10")
_TREC_FULL = {"ndcg_cut_10": "ndcg@10", "recall_100": "recall@100"}
_TREC_TOP10 = {"recip_rank": "mrr@10"}


class DatasetError(ValueError):
    """A dataset folder that cannot be evaluated (a usage problem: missing file, bad split)."""


# ----- dataset -----------------------------------------------------------------------------------


@dataclass
class BeirDataset:
    """A loaded BEIR dataset restricted to the queries judged in one split.

    ``queries`` maps query id -> text in ``queries.jsonl`` order; ``qrels`` maps query id ->
    {corpus id -> integer relevance}; ``corpus`` holds the validated ``documents`` records and
    the rejected corpus lines.
    """

    path: Path
    split: str
    corpus: CatalogRead
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    judged_without_text: int = 0

    @property
    def name(self) -> str:
        """The dataset folder's name (e.g. ``scifact``)."""
        return self.path.resolve().name

    @property
    def corpus_ids(self) -> set[str]:
        """Ids of the valid corpus records."""
        return {str(r["id"]) for r in self.corpus.records}

    def limit(self, max_queries: int | None) -> BeirDataset:
        """The same dataset with only its first ``max_queries`` queries (None: all)."""
        if max_queries is None or max_queries >= len(self.queries):
            return self
        keep = list(self.queries)[:max_queries]
        return BeirDataset(
            path=self.path,
            split=self.split,
            corpus=self.corpus,
            queries={q: self.queries[q] for q in keep},
            qrels={q: self.qrels[q] for q in keep},
            judged_without_text=self.judged_without_text,
        )


def available_splits(path: Path) -> list[str]:
    """The qrels splits present in a dataset folder (``qrels/*.tsv`` stems), sorted."""
    qdir = path / "qrels"
    return sorted(p.stem for p in qdir.glob("*.tsv")) if qdir.is_dir() else []


def check_dataset(path: Path, split: str) -> None:
    """Check a folder has the BEIR layout for ``split`` (cheap: only looks at file names).

    Raises:
        DatasetError: naming the first missing piece in one line.
    """
    if not path.is_dir():
        raise DatasetError(f"no such dataset folder: {path}")
    for name in ("corpus.jsonl", "queries.jsonl"):
        if not (path / name).is_file():
            raise DatasetError(f"{path} has no {name} (BEIR layout expected)")
    if not (path / "qrels" / f"{split}.tsv").is_file():
        splits = available_splits(path)
        have = ", ".join(splits) if splits else "none"
        raise DatasetError(f"{path} has no qrels/{split}.tsv (available splits: {have})")


def read_queries(path: Path) -> dict[str, str]:
    """``queries.jsonl`` -> {query id: text}, in file order (blank lines skipped).

    Raises:
        DatasetError: for a line that is not a JSON object with ``_id`` and ``text``.
    """
    out: dict[str, str] = {}
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                out[str(obj["_id"])] = str(obj.get("text") or "")
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise DatasetError(
                    f"{path} line {number}: not a query object with _id and text ({exc})"
                ) from None
    return out


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """``qrels/<split>.tsv`` -> {query id: {corpus id: relevance}}.

    The first line is skipped when it is the ``query-id corpus-id score`` header (any line
    whose score column is not a number is taken as the header if it is the first).

    Raises:
        DatasetError: for a line without three columns or with a non-numeric score.
    """
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 3:
                cols = line.split()
            if len(cols) < 3:
                raise DatasetError(f"{path} line {number}: expected query-id, corpus-id, score")
            qid, did, score = cols[0].strip(), cols[1].strip(), cols[-1].strip()
            try:
                rel = int(float(score))
            except ValueError:
                if number == 1:
                    continue  # the header
                raise DatasetError(
                    f"{path} line {number}: score {score!r} is not a number"
                ) from None
            qrels.setdefault(qid, {})[did] = rel
    return qrels


def load_beir(path: Path, split: str, schema: DomainSchema) -> BeirDataset:
    """Load a BEIR dataset folder, keeping only queries judged in ``split``.

    Raises:
        DatasetError: for a missing file or split, malformed queries or qrels, no query of
            ``queries.jsonl`` judged in the split, or no valid corpus document.
    """
    check_dataset(path, split)
    queries = read_queries(path / "queries.jsonl")
    qrels = read_qrels(path / "qrels" / f"{split}.tsv")
    judged = {q: t for q, t in queries.items() if q in qrels}
    if not judged:
        raise DatasetError(f"no query of {path / 'queries.jsonl'} has qrels in split {split!r}")
    corpus = read_beir_corpus(path, schema)
    if not corpus.records:
        raise DatasetError(f"{path / 'corpus.jsonl'} holds no valid document")
    return BeirDataset(
        path=path,
        split=split,
        corpus=corpus,
        queries=judged,
        qrels={q: qrels[q] for q in judged},
        judged_without_text=sum(1 for q in qrels if q not in queries),
    )


# ----- metrics -----------------------------------------------------------------------------------


def _trec_run(ranking: Sequence[str], exclude: str | None = None) -> dict[str, float]:
    ids = [d for d in dict.fromkeys(ranking) if d != exclude]
    n = len(ids)
    return {d: float(n - i) for i, d in enumerate(ids)}


def evaluate_rankings(
    qrels: Mapping[str, Mapping[str, int]],
    rankings: Mapping[str, Sequence[str]],
    ignore_identical_ids: bool = True,
) -> dict[str, dict[str, float]]:
    """Per-query ``ndcg@10``, ``recall@100`` and ``mrr@10`` (each in [0, 1]) via pytrec_eval.

    ``qrels``: {query id: {doc id: relevance}}; ``rankings``: {query id: doc ids, best first}.
    Every query of ``qrels`` gets a row; a query without a ranking (or an empty one) scores 0.
    See the module docstring for the definitions.
    """
    import pytrec_eval

    qrels_d = {q: {d: int(r) for d, r in rels.items()} for q, rels in qrels.items()}
    runs_full: dict[str, dict[str, float]] = {}
    runs_top10: dict[str, dict[str, float]] = {}
    for q in qrels_d:
        ranking = list(rankings.get(q, ()))
        exclude = q if ignore_identical_ids else None
        runs_full[q] = _trec_run(ranking, exclude)
        runs_top10[q] = _trec_run([d for d in ranking if d != exclude][:10])
    full = pytrec_eval.RelevanceEvaluator(qrels_d, set(_TREC_FULL)).evaluate(runs_full)
    top10 = pytrec_eval.RelevanceEvaluator(qrels_d, set(_TREC_TOP10)).evaluate(runs_top10)
    out: dict[str, dict[str, float]] = {}
    for q in qrels_d:
        row = {name: 0.0 for name in METRICS}
        for trec, name in _TREC_FULL.items():
            row[name] = float(full.get(q, {}).get(trec, 0.0))
        for trec, name in _TREC_TOP10.items():
            row[name] = float(top10.get(q, {}).get(trec, 0.0))
        out[q] = row
    return out


def mean_metrics(per_query: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Arithmetic mean of each metric over the queries (0.0 for no queries)."""
    n = len(per_query)
    return {m: (sum(row[m] for row in per_query.values()) / n if n else 0.0) for m in METRICS}


def latency_percentiles(latencies_ms: Sequence[float]) -> dict[str, float]:
    """p50, p95, p99 (and mean) in milliseconds, numpy linear interpolation; zeros if empty."""
    if not latencies_ms:
        return {"p50": 0.0, "p95": 0.0, "p99": 0.0, "mean": 0.0}
    arr = np.asarray(latencies_ms, dtype=np.float64)
    p50, p95, p99 = np.percentile(arr, [50, 95, 99])
    return {"p50": float(p50), "p95": float(p95), "p99": float(p99), "mean": float(arr.mean())}


# ----- systems -----------------------------------------------------------------------------------


def bm25_ranking(engine: SearchService, text: str, top_k: int = TOP_K) -> list[str]:
    """Doc ids from the keyword index alone, best first (at most ``top_k``)."""
    return [h.id for h in engine.components.keyword.search(engine.schema, text, top_k)]


def dense_ranking(engine: SearchService, text: str, top_k: int = TOP_K) -> list[str]:
    """Doc ids from the ``content`` named vector with the embedded query, best first."""
    vec = engine.components.embedder.embed_query(text)
    return [
        h.id for h in engine.components.store.query_dense(engine.schema, DENSE_ASPECT, vec, top_k)
    ]


def hybrid_rrf_ranking(
    dense: Sequence[str], bm25: Sequence[str], top_k: int = TOP_K, k: int = RRF_K
) -> list[str]:
    """Plain RRF (k = 60, equal weights) of a dense and a BM25 ranking, top ``top_k`` ids."""
    fused = rrf([RankedList("dense", list(dense)), RankedList("bm25", list(bm25))], k)
    return [f.id for f in fused[:top_k]]


def _run_hybrid(engine: SearchService, text: str) -> tuple[list[str], str | None]:
    return hybrid_rrf_ranking(dense_ranking(engine, text), bm25_ranking(engine, text)), None


def hybrid_rrf_qdrant_ranking(engine: SearchService, text: str, top_k: int = TOP_K) -> list[str]:
    """Doc ids of Qdrant's server-side RRF (k = 60) of a dense and a sparse prefetch."""
    from agentic_search.adapters.qdrant.sparse import QdrantSparseKeywordIndex

    vec = engine.components.embedder.embed_query(text)
    sparse = QdrantSparseKeywordIndex(engine.components.store).query_vector(text)
    hits = engine.components.store.query_hybrid_rrf(
        engine.schema, DENSE_ASPECT, vec, sparse, top_k, RRF_K
    )
    return [h.id for h in hits]


def unavailable_reason(engine: SearchService, name: str) -> str | None:
    """Why ``name`` cannot run on ``engine``'s collection (None: it can)."""
    if name in UNAVAILABLE:
        return UNAVAILABLE[name]
    if name == "hybrid-rrf-qdrant" and not engine.components.store.has_sparse(engine.schema):
        return (
            "needs the collection's sparse bm25 vector (a Qdrant server, QDRANT_URL); "
            "local mode keeps BM25 in bm25s"
        )
    return None


def cold_start(engine: SearchService) -> None:
    """Forget what earlier searches left behind (query vectors, records read back, token
    counts of snippets), so the next search gets no head start from another system's run of
    the same query or from earlier queries. Not timed (:func:`evaluate` calls it first)."""
    engine.components.memo.clear_query_vectors()
    engine.components.store.clear_record_cache()
    engine.components.memo.clear_token_counts()


def _run_executor(engine: SearchService, text: str, rounds: int) -> tuple[list[str], str | None]:
    try:
        resp = engine.search(text, limit=TOP_K, rounds=rounds)
    except ValueError as exc:  # empty or over-long query: no ranking, counted as an error
        return [], str(exc)
    errors = resp.output.errors
    note = "; ".join(f"{e.source}: {e.error}" for e in errors) if errors else None
    return [c.id for c in resp.output.candidates], note


def _run_executor_1round(engine: SearchService, text: str) -> tuple[list[str], str | None]:
    return _run_executor(engine, text, 1)


def _run_executor_multi(engine: SearchService, text: str) -> tuple[list[str], str | None]:
    return _run_executor(engine, text, max(2, engine.settings.max_rounds))


SystemFn = Callable[["SearchService", str], tuple[list[str], str | None]]

RUNNERS: dict[str, SystemFn] = {
    "bm25": lambda e, t: (bm25_ranking(e, t), None),
    "dense": lambda e, t: (dense_ranking(e, t), None),
    "hybrid-rrf": _run_hybrid,
    "hybrid-rrf-qdrant": lambda e, t: (hybrid_rrf_qdrant_ranking(e, t), None),
    "executor-1round": _run_executor_1round,
    "executor": _run_executor_multi,
}

#: Systems timed cold (:func:`cold_start` before each of their searches).
COLD = frozenset({"executor-1round", "executor"})


def parse_systems(text: str | None) -> list[str]:
    """Comma-separated system names -> list in the given order (None or empty: every one of
    ``SYSTEMS``; ``OPTIONAL_SYSTEMS`` run only when named).

    Raises:
        ValueError: naming the unknown systems and the known ones.
    """
    if not text or not text.strip():
        return list(SYSTEMS)
    names = list(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    known = (*SYSTEMS, *OPTIONAL_SYSTEMS)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown system(s) {', '.join(unknown)}; choose from {', '.join(known)}")
    if not names:
        raise ValueError(f"no system given; choose from {', '.join(known)}")
    return names


# ----- results -----------------------------------------------------------------------------------


@dataclass
class SystemResult:
    """One system's outcome: rankings, per-query metrics and latencies (ms), or why it is absent.

    ``rankings``: {query id: doc ids, best first, at most 100}; ``per_query``: {query id:
    {metric: value in [0, 1]}}; ``latency_ms``: {query id: wall-clock ms}; ``errors``: {query
    id: message} for queries where the system failed or reported failing sources.
    """

    name: str
    available: bool = True
    reason: str | None = None
    rankings: dict[str, list[str]] = field(default_factory=dict)
    per_query: dict[str, dict[str, float]] = field(default_factory=dict)
    latency_ms: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def means(self) -> dict[str, float]:
        """Mean of each metric over the evaluated queries."""
        return mean_metrics(self.per_query)

    @property
    def percentiles(self) -> dict[str, float]:
        """Latency p50/p95/p99/mean in ms."""
        return latency_percentiles(list(self.latency_ms.values()))

    def summary(self) -> dict[str, Any]:
        """``{"ndcg@10", "recall@100", "mrr@10", "latency_ms": {"p50", "p95", "p99"}}``, or
        ``{"available": false, "reason"}``."""
        if not self.available:
            return {"available": False, "reason": self.reason}
        pct = self.percentiles
        return {
            **{m: round(v, 4) for m, v in self.means.items()},
            "latency_ms": {p: round(pct[p], 2) for p in ("p50", "p95", "p99")},
        }

    def detail(self) -> dict[str, Any]:
        """The summary plus mean latency, error count and per-query metrics and latency."""
        if not self.available:
            return self.summary()
        out = self.summary()
        out["latency_ms"]["mean"] = round(self.percentiles["mean"], 2)
        out["errors"] = len(self.errors)
        out["per_query"] = {
            q: {
                **{m: round(v, 4) for m, v in row.items()},
                "latency_ms": round(self.latency_ms.get(q, 0.0), 2),
                **({"error": self.errors[q]} if q in self.errors else {}),
            }
            for q, row in self.per_query.items()
        }
        return out


@dataclass
class EvaluationResult:
    """All systems of one run on one dataset split."""

    dataset: str
    dataset_path: str
    split: str
    query_ids: list[str]
    systems: dict[str, SystemResult]
    info: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """The ``--json`` object: ``{"dataset", "split", "queries", "systems": {NAME: ...}}``."""
        return {
            "dataset": self.dataset,
            "split": self.split,
            "queries": len(self.query_ids),
            "systems": {name: s.summary() for name, s in self.systems.items()},
        }

    def detail(self) -> dict[str, Any]:
        """``results.json``: the summary with per-query metrics, settings, corpus and machine."""
        out = self.summary()
        out["dataset_path"] = self.dataset_path
        out["systems"] = {name: s.detail() for name, s in self.systems.items()}
        out.update(self.info)
        return out


# ----- ingest and run ----------------------------------------------------------------------------


@dataclass
class CorpusSync:
    """What was done to make the collection hold exactly the corpus."""

    documents: int
    rejected_lines: int
    ingested: bool
    removed: int = 0
    inserted: int = 0
    seconds: float = 0.0

    def wire(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "documents": self.documents,
            "rejected_lines": self.rejected_lines,
            "ingested": self.ingested,
            "removed": self.removed,
            "inserted": self.inserted,
            "seconds": round(self.seconds, 2),
        }


def indexed_ids(engine: SearchService) -> set[str]:
    """Document ids currently in the engine's collection (chunks map to their document;
    empty when the collection does not exist)."""
    if not engine.components.store.exists(engine.schema):
        return set()
    idf = engine.schema.id_field
    return {
        doc_id_of(str(p[idf]))
        for p in engine.components.store.scroll(engine.schema, payload=[idf])
        if idf in p
    }


def ensure_corpus(
    engine: SearchService,
    dataset: BeirDataset,
    on_start: Callable[[int], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> CorpusSync:
    """Make the collection hold exactly the corpus ids: delete strays, ingest when needed.

    Nothing is written when the ids already match (``ingested`` is False). Re-ingesting is
    idempotent: unchanged records are not re-embedded.
    """
    t0 = time.perf_counter()
    want = dataset.corpus_ids
    have = indexed_ids(engine)
    sync = CorpusSync(
        documents=len(dataset.corpus.records),
        rejected_lines=len(dataset.corpus.errors),
        ingested=False,
    )
    if have == want:
        return sync
    stray = sorted(have - want)
    if stray:
        gone = set(stray)
        idf = engine.schema.id_field
        points = [
            str(p[idf])
            for p in engine.components.store.scroll(engine.schema, payload=[idf])
            if idf in p and doc_id_of(str(p[idf])) in gone
        ]
        c = engine.components
        Indexer(c.store, c.embedder, c.keyword).delete(engine.schema, points, refresh_keyword=False)
        sync.removed = len(stray)
    if on_start:
        on_start(len(dataset.corpus.records))
    stats = engine.ingest_records(dataset.corpus.records, on_progress=on_progress)
    if stray and not stats.changed:
        engine.components.keyword.refresh(engine.schema)
    sync.ingested = True
    sync.inserted = stats.inserted
    sync.seconds = time.perf_counter() - t0
    return sync


def evaluate(
    engine: SearchService,
    dataset: BeirDataset,
    systems: Sequence[str] = SYSTEMS,
    warmup: int = DEFAULT_WARMUP,
    on_start: Callable[[int], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
    ignore_identical_ids: bool = True,
    sync: CorpusSync | None = None,
) -> EvaluationResult:
    """Run every available system on every judged query and score them.

    The engine's collection must already hold the corpus (see :func:`ensure_corpus`). Systems
    run query by query, interleaved (each query through every system in turn), after
    ``warmup`` untimed queries through every system. ``on_start(n)`` receives the number of
    timed system-queries, ``on_progress(1)`` is called after each.
    """
    reasons = {name: unavailable_reason(engine, name) for name in systems}
    results = {
        name: SystemResult(name, available=False, reason=reasons[name])
        if reasons[name]
        else SystemResult(name)
        for name in systems
    }
    runnable = [name for name in systems if name in RUNNERS and not reasons[name]]
    qids = list(dataset.queries)
    for qid in qids[: max(0, warmup)]:
        for name in runnable:
            RUNNERS[name](engine, dataset.queries[qid])
    freeze_long_lived()  # the engine's state after warm-up: no full-GC pauses (process_tuning.py)
    if on_start:
        on_start(len(qids) * len(runnable))
    for qid in qids:
        text = dataset.queries[qid]
        for name in runnable:
            if name in COLD:
                cold_start(engine)
            t = time.perf_counter()
            ranking, error = RUNNERS[name](engine, text)
            ms = (time.perf_counter() - t) * 1000
            res = results[name]
            res.rankings[qid] = doc_ranking(ranking)[:TOP_K]
            res.latency_ms[qid] = ms
            if error:
                res.errors[qid] = error
            if on_progress:
                on_progress(1)
    for name in runnable:
        results[name].per_query = evaluate_rankings(
            dataset.qrels, results[name].rankings, ignore_identical_ids
        )
    info = {
        "corpus": (sync.wire() if sync else {"documents": len(dataset.corpus.records)}),
        "judged_queries_without_text": dataset.judged_without_text,
        "settings": {
            "top_k": TOP_K,
            "rrf_k": RRF_K,
            "dense_aspect": DENSE_ASPECT,
            "warmup_queries": min(max(0, warmup), len(qids)),
            "ignore_identical_ids": ignore_identical_ids,
            "embedder": getattr(
                engine.components.embedder, "name", type(engine.components.embedder).__name__
            ),
            "keyword_index": engine.components.keyword.name,
            "collection": engine.components.store.collection(engine.schema),
        },
        "machine": {
            "platform": platform.platform(),
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
        },
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    return EvaluationResult(
        dataset=dataset.name,
        dataset_path=str(dataset.path),
        split=dataset.split,
        query_ids=qids,
        systems=results,
        info=info,
    )


# ----- outputs -----------------------------------------------------------------------------------

RESULTS_FILE = "results.json"
QUALITY_PLOT = "quality_vs_latency.png"
LATENCY_PLOT = "latency.png"


def write_outputs(result: EvaluationResult, out_dir: Path) -> list[Path]:
    """Write ``results.json`` (with per-query metrics) and two PNG plots into ``out_dir``.

    * ``quality_vs_latency.png``: nDCG@10 (y) against p95 latency in ms (x) per available
      system;
    * ``latency.png``: p50/p95/p99 latency bars (ms) per available system.

    Returns the written paths.
    """
    from matplotlib.figure import Figure

    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / RESULTS_FILE, out_dir / QUALITY_PLOT, out_dir / LATENCY_PLOT]
    paths[0].write_text(json.dumps(result.detail(), indent=2, ensure_ascii=False) + "\n")
    shown = [s for s in result.systems.values() if s.available]
    subtitle = f"{result.dataset} ({result.split}, {len(result.query_ids)} queries)"

    fig = Figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.subplots()
    markers = "osD^vP*X"
    for i, s in enumerate(shown):
        x, y = max(s.percentiles["p95"], 1e-3), s.means["ndcg@10"]
        ax.scatter([x], [y], s=70, marker=markers[i % len(markers)], label=s.name)
        ax.annotate(f"{y:.3f}", (x, y), textcoords="offset points", xytext=(6, 4), fontsize=8)
    if shown:
        ax.legend(loc="best")
    ax.set_xlim(left=0)
    ax.set_xlabel("p95 latency per query (ms)")
    ax.set_ylabel("nDCG@10")
    ax.set_title(f"Quality vs latency: {subtitle}")
    ax.grid(True, alpha=0.3)
    fig.savefig(paths[1], dpi=120)

    fig = Figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.subplots()
    width = 0.26
    xs = np.arange(len(shown))
    for i, p in enumerate(("p50", "p95", "p99")):
        ax.bar(xs + (i - 1) * width, [s.percentiles[p] for s in shown], width, label=p)
    ax.set_xticks(xs, [s.name for s in shown])
    ax.set_ylabel("latency per query (ms)")
    ax.set_title(f"Latency per system: {subtitle}")
    ax.legend()
    ax.grid(True, axis="y", alpha=0.3)
    fig.savefig(paths[2], dpi=120)
    return paths
