"""Relevance metrics from ``pytrec_eval`` and latency percentiles.

Metrics come from ``pytrec_eval`` (trec_eval's C code; Van Gysel and de Rijke, SIGIR 2018),
as BEIR computes them, per query and as the mean over the evaluated queries:

* ``ndcg@10`` (trec_eval ``ndcg_cut_10``): DCG@10 / IDCG@10 with
  ``DCG@k = sum_{i=1..k} rel_i / log2(i + 1)`` (linear gains, as trec_eval and BEIR; Järvelin
  and Kekäläinen, "Cumulated gain-based evaluation of IR techniques", ACM TOIS 20(4), 2002);
* ``recall@10`` and ``recall@100`` (``recall_10``, ``recall_100``): relevant documents in the
  top k / relevant documents;
* ``mrr@10``: ``recip_rank`` (1 / rank of the first relevant document, 0 if none) computed on
  each ranking truncated to its top 10;
* ``both@2``, ``both@5``, ``both@10``: 1 when *every* relevant document is in the top k, else 0
  (the multi-hop measure of HotpotQA: both supporting paragraphs retrieved; for a query with
  one relevant document it is that document's hit@k). Computed here, not by trec_eval.

Rankings are handed to trec_eval with scores ``n, n-1, ..., 1`` so that its sort (by score,
ties by document id) keeps each system's own order exactly. As BEIR does by default, a ranked
document whose id equals the query id is dropped before scoring (``ignore_identical_ids``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

METRICS: tuple[str, ...] = (
    "ndcg@10",
    "recall@10",
    "recall@100",
    "mrr@10",
    "both@2",
    "both@5",
    "both@10",
)
#: The cut-offs of both@k.
BOTH_K: tuple[int, ...] = (2, 5, 10)
_TREC_FULL = {"ndcg_cut_10": "ndcg@10", "recall_10": "recall@10", "recall_100": "recall@100"}
_TREC_TOP10 = {"recip_rank": "mrr@10"}


def _trec_run(ranking: Sequence[str], exclude: str | None = None) -> dict[str, float]:
    ids = [d for d in dict.fromkeys(ranking) if d != exclude]
    n = len(ids)
    return {d: float(n - i) for i, d in enumerate(ids)}


def evaluate_rankings(
    qrels: Mapping[str, Mapping[str, int]],
    rankings: Mapping[str, Sequence[str]],
    ignore_identical_ids: bool = True,
) -> dict[str, dict[str, float]]:
    """Per-query metrics of :data:`METRICS` (each in [0, 1]; trec_eval's via pytrec_eval).

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
        relevant = {d for d, r in qrels_d[q].items() if r > 0}
        ranked = [
            d
            for d in dict.fromkeys(rankings.get(q, ()))
            if d != (q if ignore_identical_ids else None)
        ]
        for k in BOTH_K:
            row[f"both@{k}"] = float(bool(relevant) and relevant <= set(ranked[:k]))
        out[q] = row
    return out


def mean_metrics(per_query: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Arithmetic mean of each metric over the queries (0.0 for no queries)."""
    n = len(per_query)
    return {m: (sum(row[m] for row in per_query.values()) / n if n else 0.0) for m in METRICS}


def multi_relevant(qrels: Mapping[str, Mapping[str, int]]) -> bool:
    """Whether some query has two or more relevant documents (both@k is then reported)."""
    return any(sum(1 for r in rels.values() if r > 0) >= 2 for rels in qrels.values())


def means_by_type(
    per_query: Mapping[str, Mapping[str, float]], types: Mapping[str, str]
) -> dict[str, dict[str, float]]:
    """{query type: mean of each metric over that type's queries}, types in first-seen order
    (empty when no query carries a type)."""
    groups: dict[str, dict[str, Mapping[str, float]]] = {}
    for q, row in per_query.items():
        if q in types:
            groups.setdefault(types[q], {})[q] = row
    return {typ: mean_metrics(rows) for typ, rows in groups.items()}


def latency_percentiles(latencies_ms: Sequence[float]) -> dict[str, float]:
    """p50, p95, p99 (and mean) in milliseconds, numpy linear interpolation; zeros if empty."""
    if not latencies_ms:
        return {"p50": 0.0, "p95": 0.0, "p99": 0.0, "mean": 0.0}
    arr = np.asarray(latencies_ms, dtype=np.float64)
    p50, p95, p99 = np.percentile(arr, [50, 95, 99])
    return {"p50": float(p50), "p95": float(p95), "p99": float(p99), "mean": float(arr.mean())}
