"""One evaluation run: every system over the same queries, metrics and latencies.

Latency is wall-clock time per query per system in milliseconds (``time.perf_counter``),
in-process, measured after a warm-up of a few queries through every system, reported as
p50/p95/p99 (numpy's linear-interpolation percentiles) over the evaluated queries.
"""

from __future__ import annotations

import contextlib
import os
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from agentic_search.logic.chunking import doc_ranking
from agentic_search.process_tuning import freeze_long_lived
from agentic_search_cli.evaluation.corpus import CorpusSync
from agentic_search_cli.evaluation.datasets import BeirDataset
from agentic_search_cli.evaluation.metrics import (
    METRICS,
    Abstention,
    abstention,
    evaluate_rankings,
    latency_percentiles,
    mean_metrics,
    means_by_label,
    means_by_type,
    multi_relevant,
)
from agentic_search_cli.evaluation.systems import (
    COLD,
    RRF_K,
    RUNNERS,
    SYSTEMS,
    TOP_K,
    Answer,
    cold_start,
    dense_aspect,
    unavailable_reason,
)

if TYPE_CHECKING:
    from agentic_search.service import SearchService


DEFAULT_WARMUP = 3


@dataclass
class SystemResult:
    """One system's outcome: rankings, per-query metrics and latencies (ms), or why it is absent.

    ``rankings``: {query id: doc ids, best first, at most 100}; ``per_query``: {query id:
    {metric: value in [0, 1]}} for the judged (answerable) queries; ``latency_ms``: {query id:
    wall-clock ms}; ``errors``: {query id: message} for queries where the system failed or
    reported failing sources; ``verdicts``: {query id: the executor's answer-level verdict}
    (empty for systems without one).
    """

    name: str
    available: bool = True
    reason: str | None = None
    rankings: dict[str, list[str]] = field(default_factory=dict)
    per_query: dict[str, dict[str, float]] = field(default_factory=dict)
    latency_ms: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    verdicts: dict[str, str] = field(default_factory=dict)

    def abstention(self, query_ids: Sequence[str], unanswerable: frozenset[str]) -> Abstention:
        """:func:`~agentic_search_cli.evaluation.metrics.abstention` over ``query_ids``."""
        return abstention(query_ids, unanswerable, self.rankings, self.errors, self.verdicts)

    @property
    def means(self) -> dict[str, float]:
        """Mean of each metric over the evaluated queries."""
        return mean_metrics(self.per_query)

    @property
    def percentiles(self) -> dict[str, float]:
        """Latency p50/p95/p99/mean in ms."""
        return latency_percentiles(list(self.latency_ms.values()))

    def summary(
        self,
        metrics: Sequence[str] = METRICS,
        types: dict[str, str] | None = None,
        groups: QueryGroups | None = None,
    ) -> dict[str, Any]:
        """``{metric: mean for each of metrics, "errors": queries that errored, "latency_ms":
        {"p50", "p95", "p99"}}`` plus ``"by_type": {type: {metric: mean}}`` when ``types`` is
        given, or ``{"available": false, "reason"}``; with ``groups`` (see :class:`QueryGroups`)
        also ``"by_lang"``, ``"by_split"`` (each split's means, ``by_type`` and ``abstention``)
        and ``"abstention"`` when some query is unanswerable. An errored query scores 0 in the
        means (it has no ranking), so ``errors`` says how many of them there are."""
        if not self.available:
            return {"available": False, "reason": self.reason}
        pct = self.percentiles
        means = self.means
        out: dict[str, Any] = {m: round(means[m], 4) for m in metrics}
        out["errors"] = len(self.errors)
        out["latency_ms"] = {p: round(pct[p], 2) for p in ("p50", "p95", "p99")}
        if types:
            out["by_type"] = {
                typ: {m: round(row[m], 4) for m in metrics}
                for typ, row in means_by_type(self.per_query, types).items()
            }
        if groups is None:
            return out
        if groups.langs:
            out["by_lang"] = {
                lang: {m: round(row[m], 4) for m in metrics}
                for lang, row in means_by_label(self.per_query, groups.langs).items()
            }
        if groups.splits:
            by_split: dict[str, Any] = {}
            for name, row in means_by_label(self.per_query, groups.splits, types).items():
                ids = [q for q in groups.query_ids if groups.splits.get(q) == name]
                by_split[name] = {
                    **{m: round(row[m], 4) for m in metrics},
                    "by_type": {
                        typ: {m: round(r[m], 4) for m in metrics}
                        for typ, r in row.get("by_type", {}).items()
                    },
                    "abstention": self.abstention(ids, groups.unanswerable).wire(),
                }
            out["by_split"] = by_split
        if groups.unanswerable:
            out["abstention"] = self.abstention(groups.query_ids, groups.unanswerable).wire()
        return out

    def detail(
        self,
        metrics: Sequence[str] = METRICS,
        types: dict[str, str] | None = None,
        groups: QueryGroups | None = None,
    ) -> dict[str, Any]:
        """The summary plus mean latency, error count and per-query metrics and latency."""
        if not self.available:
            return self.summary()
        out = self.summary(metrics, types, groups)
        out["latency_ms"]["mean"] = round(self.percentiles["mean"], 2)
        out["per_query"] = {
            q: {
                **{m: round(v, 4) for m, v in self.per_query.get(q, {}).items()},
                "returned": len(self.rankings.get(q, ())),
                "latency_ms": round(self.latency_ms.get(q, 0.0), 2),
                **({"verdict": self.verdicts[q]} if q in self.verdicts else {}),
                **({"error": self.errors[q]} if q in self.errors else {}),
            }
            for q in (self.rankings or self.per_query)
        }
        return out


@dataclass(frozen=True)
class QueryGroups:
    """How a run's queries group beyond their type: ``query_ids`` (all, in order), ``langs``
    and ``splits`` ({query id: label}; empty when queries carry none) and ``unanswerable``
    (ids judged to have no answer in the corpus)."""

    query_ids: tuple[str, ...] = ()
    langs: dict[str, str] = field(default_factory=dict)
    splits: dict[str, str] = field(default_factory=dict)
    unanswerable: frozenset[str] = frozenset()


@dataclass
class EvaluationResult:
    """All systems of one run on one dataset split."""

    dataset: str
    dataset_path: str
    split: str
    query_ids: list[str]
    systems: dict[str, SystemResult]
    info: dict[str, Any] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    multi_relevant: bool = False
    langs: dict[str, str] = field(default_factory=dict)
    splits: dict[str, str] = field(default_factory=dict)
    unanswerable: frozenset[str] = frozenset()

    @property
    def groups(self) -> QueryGroups:
        """The run's :class:`QueryGroups` (languages, splits, unanswerable queries)."""
        return QueryGroups(tuple(self.query_ids), self.langs, self.splits, self.unanswerable)

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics reported: both@k only where some query has 2+ relevant documents."""
        return tuple(m for m in METRICS if self.multi_relevant or not m.startswith("both@"))

    @property
    def type_counts(self) -> dict[str, int]:
        """Queries per type, in first-seen order (empty when queries carry no type)."""
        return self.label_counts(self.types, judged_only=True)

    def label_counts(self, labels: dict[str, str], judged_only: bool = False) -> dict[str, int]:
        """Queries per label ({query id: label}), in first-seen order; ``judged_only`` counts
        only the answerable queries (those the metrics are means over)."""
        counts: dict[str, int] = {}
        for q in self.query_ids:
            if q in labels and not (judged_only and q in self.unanswerable):
                counts[labels[q]] = counts.get(labels[q], 0) + 1
        return counts

    def summary(self) -> dict[str, Any]:
        """The ``--json`` object: ``{"dataset", "split", "queries", ["answerable",
        "unanswerable"], ["types"], ["langs"], ["splits"], "systems": {NAME: ...}}`` (the
        metrics are means over the answerable queries; see :meth:`SystemResult.summary`)."""
        out: dict[str, Any] = {
            "dataset": self.dataset,
            "split": self.split,
            "queries": len(self.query_ids),
        }
        if self.unanswerable:
            out["answerable"] = len(self.query_ids) - len(self.unanswerable)
            out["unanswerable"] = len(self.unanswerable)
        if self.types:
            out["types"] = self.type_counts
        if self.langs:
            out["langs"] = self.label_counts(self.langs, judged_only=True)
        if self.splits:
            out["splits"] = self.label_counts(self.splits)
        groups = self.groups
        out["systems"] = {
            name: s.summary(self.metrics, self.types, groups) for name, s in self.systems.items()
        }
        return out

    def detail(self) -> dict[str, Any]:
        """``results.json``: the summary with per-query metrics, settings, corpus and machine."""
        out = self.summary()
        out["dataset_path"] = self.dataset_path
        groups = self.groups
        out["systems"] = {
            name: s.detail(self.metrics, self.types, groups) for name, s in self.systems.items()
        }
        out.update(self.info)
        return out


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
    timed system-queries, ``on_progress(1)`` is called after each. A query a system fails
    (it raises, or reports failing sources) gets no ranking (scored 0) and is counted in that
    system's ``errors``, which the JSON, the table and the exit status report.
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
            with contextlib.suppress(Exception):  # the timed pass counts the failure
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
            try:
                answer = RUNNERS[name](engine, text)
            except Exception as exc:  # counted and reported (exit 1), never hidden
                answer = Answer([], f"{type(exc).__name__}: {exc}")
            ms = (time.perf_counter() - t) * 1000
            res = results[name]
            res.rankings[qid] = doc_ranking(answer.ranking)[:TOP_K]
            res.latency_ms[qid] = ms
            if answer.error:
                res.errors[qid] = answer.error
            if answer.verdict:
                res.verdicts[qid] = answer.verdict
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
            "dense_aspect": dense_aspect(engine),
            "warmup_queries": min(max(0, warmup), len(qids)),
            "ignore_identical_ids": ignore_identical_ids,
            "embedder": getattr(engine.deps.embedder, "name", type(engine.deps.embedder).__name__),
            "keyword_index": engine.deps.keyword.name,
            "collection": engine.deps.store.collection(engine.schema),
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
        types=dict(dataset.types),
        multi_relevant=multi_relevant(dataset.qrels),
        langs=dict(dataset.langs),
        splits=dict(dataset.splits),
        unanswerable=dataset.unanswerable,
    )
