"""An evaluation's results as a rich table (one row per system: metrics and latency)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentic_search_cli.evaluation.run import EvaluationResult


def evaluation_table(result: EvaluationResult) -> Table:
    """One row per system: mean nDCG@10, Recall@100, MRR@10 and latency p50/p95/p99 (ms)."""
    table = Table(
        title=(
            f"{result.dataset} ({result.split}): {len(result.query_ids)} queries, "
            "top-100 per system"
        )
    )
    table.add_column("system", no_wrap=True)
    for name in ("nDCG@10", "Recall@100", "MRR@10", "p50 ms", "p95 ms", "p99 ms"):
        table.add_column(name, justify="right", no_wrap=True)
    for name, s in result.systems.items():
        if not s.available:
            table.add_row(name, *[Text("n/a", style="dim")] * 6)
            continue
        m, p = s.means, s.percentiles
        table.add_row(
            name,
            f"{m['ndcg@10']:.4f}",
            f"{m['recall@100']:.4f}",
            f"{m['mrr@10']:.4f}",
            f"{p['p50']:.1f}",
            f"{p['p95']:.1f}",
            f"{p['p99']:.1f}",
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
