"""Relevance metrics from ``pytrec_eval`` and latency percentiles.

Metrics come from ``pytrec_eval`` (trec_eval's C code; Van Gysel and de Rijke, SIGIR 2018),
as BEIR computes them, per query and as the mean over the evaluated queries:

* ``ndcg@10`` (trec_eval ``ndcg_cut_10``): DCG@10 / IDCG@10 with
  ``DCG@k = sum_{i=1..k} rel_i / log2(i + 1)`` (linear gains, as trec_eval and BEIR; Järvelin
  and Kekäläinen, "Cumulated gain-based evaluation of IR techniques", ACM TOIS 20(4), 2002);
* ``recall@5``: relevant documents in the top 5 / min(relevant documents, 5), so a query with
  eight relevant documents can reach 1 (the project's golden-set Recall@5, as
  ``benchmarks/golden.py`` computes it; computed here, not by trec_eval);
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

from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

METRICS: tuple[str, ...] = (
    "ndcg@10",
    "recall@5",
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
        if relevant:
            row["recall@5"] = len(relevant & set(ranked[:5])) / min(len(relevant), 5)
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


def means_by_label(
    per_query: Mapping[str, Mapping[str, float]],
    labels: Mapping[str, str],
    types: Mapping[str, str] | None = None,
) -> dict[str, dict[str, Any]]:
    """{label: {metric: mean}} over the queries carrying each label (first-seen order); with
    ``types``, each label's entry also holds ``"by_type": {type: {metric: mean}}`` (a split's
    figures per query kind)."""
    groups: dict[str, dict[str, Mapping[str, float]]] = {}
    for q, row in per_query.items():
        if q in labels:
            groups.setdefault(labels[q], {})[q] = row
    out: dict[str, dict[str, Any]] = {}
    for label, rows in groups.items():
        entry: dict[str, Any] = dict(mean_metrics(rows))
        if types:
            entry["by_type"] = means_by_type(rows, types)
        out[label] = entry
    return out


@dataclass(frozen=True)
class Abstention:
    """How a system behaves on queries the corpus cannot answer and on those it can.

    * ``unanswerable``: queries with no relevant document in the corpus (judged so);
    * ``clean``: of those, answered with nothing at all: an empty ranking, no error and, for a
      system that gives a verdict, "no good match" (``none``);
    * ``padded``: of those, answered with one result or more (whatever the verdict; an empty
      answer with a verdict other than "no good match" is neither clean nor padded);
    * ``padded_top5``: results in the top 5 of the unanswerable queries, summed;
    * ``answerable``: queries with a relevant document;
    * ``left_empty``: of those, answered with an empty ranking and no error (a false
      abstention);
    * ``no_match_verdicts``: of those, answered "no good match" (whatever was returned);
    * ``errors``: queries of either kind where the system failed with nothing returned (e.g.
      a query over the length bound): neither clean nor padded nor left empty.
    """

    unanswerable: int = 0
    clean: int = 0
    padded: int = 0
    padded_top5: int = 0
    answerable: int = 0
    left_empty: int = 0
    no_match_verdicts: int = 0
    errors: int = 0

    def wire(self) -> dict[str, Any]:
        """JSON-able form with the rates: ``clean_rate`` and ``padding_rate`` (shares of the
        unanswerable queries, None when there are none) and ``padded_top5_mean``."""
        n = self.unanswerable
        return {
            **asdict(self),
            "clean_rate": round(self.clean / n, 4) if n else None,
            "padding_rate": round(self.padded / n, 4) if n else None,
            "padded_top5_mean": round(self.padded_top5 / n, 4) if n else None,
        }


def abstention(
    query_ids: Sequence[str],
    unanswerable: Collection[str],
    rankings: Mapping[str, Sequence[str]],
    errors: Mapping[str, str],
    verdicts: Mapping[str, str | None],
) -> Abstention:
    """Count :class:`Abstention` over ``query_ids``: ``unanswerable`` are the ids judged to
    have no answer (every other id is answerable); ``rankings`` what the system returned,
    ``errors`` its failures ({query id: message}), ``verdicts`` its answer-level verdict
    (``good``/``weak``/``none``; None or absent for a system that gives none)."""
    c = dict.fromkeys(
        (
            "unanswerable",
            "clean",
            "padded",
            "padded_top5",
            "answerable",
            "left_empty",
            "no_match_verdicts",
            "errors",
        ),
        0,
    )
    for q in query_ids:
        ranked = list(rankings.get(q, ()))
        failed = q in errors and not ranked
        verdict = verdicts.get(q)
        if q in unanswerable:
            c["unanswerable"] += 1
            c["padded_top5"] += len(ranked[:5])
            if failed:
                c["errors"] += 1
            elif ranked:
                c["padded"] += 1
            elif verdict in (None, "none"):
                c["clean"] += 1
        else:
            c["answerable"] += 1
            if failed:
                c["errors"] += 1
            elif not ranked:
                c["left_empty"] += 1
            if verdict == "none":
                c["no_match_verdicts"] += 1
    return Abstention(**c)


def latency_percentiles(latencies_ms: Sequence[float]) -> dict[str, float]:
    """p50, p95, p99 (and mean) in milliseconds, numpy linear interpolation; zeros if empty."""
    if not latencies_ms:
        return {"p50": 0.0, "p95": 0.0, "p99": 0.0, "mean": 0.0}
    arr = np.asarray(latencies_ms, dtype=np.float64)
    p50, p95, p99 = np.percentile(arr, [50, 95, 99])
    return {"p50": float(p50), "p95": float(p95), "p99": float(p99), "mean": float(arr.mean())}
