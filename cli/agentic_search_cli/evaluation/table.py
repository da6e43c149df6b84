"""An evaluation's results as a rich table (one row per system: metrics and latency)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentic_search_cli.evaluation.metrics import means_by_label, means_by_type
from agentic_search_cli.evaluation.run import EvaluationResult

_LABELS = {
    "ndcg@10": "nDCG@10",
    "recall@5": "R@5",
    "recall@10": "R@10",
    "recall@100": "R@100",
    "mrr@10": "MRR@10",
    "both@2": "both@2",
    "both@5": "both@5",
    "both@10": "both@10",
}


def evaluation_table(result: EvaluationResult) -> Table:
    """One row per system: the reported metrics' means (nDCG@10, Recall@5, Recall@10,
    Recall@100, MRR@10, and both@2/5/10 where queries have 2+ relevant documents), the number
    of queries that errored (``err``: each scored 0 in the means) and latency p50/p95/p99 (ms);
    with query types, languages or several splits, one more row per system and type, split and
    language (metrics only, over the answerable queries)."""
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
    split_counts = result.label_counts(result.splits, judged_only=True)
    lang_counts = result.label_counts(result.langs, judged_only=True)
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
        groups = [
            ("", means_by_type(s.per_query, result.types), counts),
            ("split ", means_by_label(s.per_query, result.splits), split_counts),
            ("lang ", means_by_label(s.per_query, result.langs), lang_counts),
        ]
        for prefix, rows, n in groups:
            for label, row in rows.items():
                table.add_row(
                    Text(f"  {prefix}{label} ({n.get(label, 0)})", style="dim"),
                    *(f"{row[k]:.4f}" for k in metrics),
                    "",
                    "",
                    "",
                    "",
                )
    return table


def abstention_table(result: EvaluationResult) -> Table | None:
    """Per system (and per split when there are several): of the unanswerable queries, the
    share answered with nothing ("no good match", nothing padded), the share padded and the
    mean results in their top 5; of the answerable ones, how many were left empty and how many
    got a "no good match" verdict; queries that errored. None when no query is unanswerable."""
    if not result.unanswerable:
        return None
    table = Table(
        title=(
            f"abstention: {len(result.unanswerable)} unanswerable, "
            f"{len(result.query_ids) - len(result.unanswerable)} answerable queries"
        )
    )
    for col in (
        "system",
        "clean",
        "padded",
        "top-5 padded (mean)",
        "answerable left empty",
        "answerable 'no good match'",
        "errors",
    ):
        table.add_column(col, justify="left" if col == "system" else "right", no_wrap=True)
    splits = list(dict.fromkeys(result.splits[q] for q in result.query_ids if q in result.splits))
    for name, s in result.systems.items():
        if not s.available:
            continue
        rows = [(name, list(result.query_ids))]
        rows += [
            (f"  split {sp}", [q for q in result.query_ids if result.splits.get(q) == sp])
            for sp in splits
        ]
        for label, ids in rows:
            a = s.abstention(ids, result.unanswerable)
            n = a.unanswerable or 1
            table.add_row(
                Text(label, style="dim") if label.startswith(" ") else label,
                f"{a.clean}/{a.unanswerable} ({a.clean / n:.0%})",
                f"{a.padded}/{a.unanswerable} ({a.padded / n:.0%})",
                f"{a.padded_top5 / n:.1f}",
                f"{a.left_empty}/{a.answerable}",
                f"{a.no_match_verdicts}/{a.answerable}",
                str(a.errors),
            )
    return table


def print_evaluation(console: Console, result: EvaluationResult) -> None:
    """Print the evaluation table, why a system is unavailable, and per-system error counts.

    On a terminal the tables fit its width; written to a file or a pipe (no width to fit)
    they are printed up to 160 columns wide (``console``'s width is raised to that), so no
    figure is cut to an ellipsis."""
    if not console.is_terminal:
        console.width = max(console.width, 160)
    console.print(evaluation_table(result))
    abstained = abstention_table(result)
    if abstained is not None:
        console.print(abstained)
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
