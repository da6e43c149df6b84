"""An evaluation's results as a rich table (one row per system: metrics and latency)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentic_search_cli.evaluation.metrics import means_by_type
from agentic_search_cli.evaluation.run import EvaluationResult

_LABELS = {
    "ndcg@10": "nDCG@10",
    "recall@10": "R@10",
    "recall@100": "R@100",
    "mrr@10": "MRR@10",
    "both@2": "both@2",
    "both@5": "both@5",
    "both@10": "both@10",
}


def evaluation_table(result: EvaluationResult) -> Table:
    """One row per system: the reported metrics' means (nDCG@10, Recall@10, Recall@100,
    MRR@10, and both@2/5/10 where queries have 2+ relevant documents), the number of
    queries that errored (``err``: each scored 0 in the means) and latency p50/p95/p99 (ms);
    with query types, one more row per system and type (metrics only)."""
    metrics = result.metrics
    table = Table(
        title=(
            f"{result.dataset} ({result.split}): {len(result.query_ids)} queries, "
            "top-100 per system"
        )
    )
    table.add_column("system", no_wrap=True)
    for name in [*(_LABELS[m] for m in metrics), "err", "p50 ms", "p95 ms", "p99 ms"]:
        table.add_column(name, justify="right", no_wrap=True)
    counts = result.type_counts
    for name, s in result.systems.items():
        if not s.available:
            table.add_row(name, *[Text("n/a", style="dim")] * (len(metrics) + 4))
            continue
        m, p = s.means, s.percentiles
        table.add_row(
            name,
            *(f"{m[k]:.4f}" for k in metrics),
            Text(str(len(s.errors)), style="bold red" if s.errors else ""),
            f"{p['p50']:.1f}",
            f"{p['p95']:.1f}",
            f"{p['p99']:.1f}",
        )
        for typ, row in means_by_type(s.per_query, result.types).items():
            table.add_row(
                Text(f"  {typ} ({counts.get(typ, 0)})", style="dim"),
                *(f"{row[k]:.4f}" for k in metrics),
                "",
                "",
                "",
                "",
            )
    return table


def print_evaluation(console: Console, result: EvaluationResult) -> None:
    """Print the evaluation table, why a system is unavailable, and per-system error counts."""
    console.print(evaluation_table(result))
    for name, s in result.systems.items():
        if not s.available:
            console.print(Text(f"{name}: unavailable: {s.reason}", style="dim"))
        if s.errors:
            first = next(iter(s.errors.items()))
            console.print(
                Text(
                    f"{name}: {len(s.errors)} query(ies) with errors, e.g. {first[0]}: {first[1]}",
                    style="yellow",
                )
            )
