"""Evaluation outputs: ``results.json``, one TREC run file per system and the plots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from agentic_search_cli.evaluation.metrics import means_by_type
from agentic_search_cli.evaluation.run import EvaluationResult

RESULTS_FILE = "results.json"
QUALITY_PLOT = "quality_vs_latency.png"
LATENCY_PLOT = "latency.png"
METRICS_PLOT = "metrics.png"
RUNS_DIR = "runs"


def trec_run_lines(result: EvaluationResult, system: str) -> list[str]:
    """One system's rankings in TREC run format, one line per ranked document:
    ``query-id Q0 doc-id rank score run-name`` (rank from 1; score ``n - rank + 1`` so that
    trec_eval's sort by score keeps the system's order)."""
    lines: list[str] = []
    rankings = result.systems[system].rankings
    for q in result.query_ids:
        ranking = list(dict.fromkeys(rankings.get(q, ())))
        n = len(ranking)
        lines += [f"{q} Q0 {d} {i} {n - i + 1} {system}" for i, d in enumerate(ranking, 1)]
    return lines


def write_outputs(result: EvaluationResult, out_dir: Path) -> list[Path]:
    """Write into ``out_dir``: ``results.json`` (with per-query metrics), ``runs/<system>.run``
    (TREC run files, see :func:`trec_run_lines`) and three PNG plots:

    * ``quality_vs_latency.png``: nDCG@10 (y) against p95 latency in ms (x) per available
      system;
    * ``latency.png``: p50/p95/p99 latency bars (ms) per available system;
    * ``metrics.png``: every reported metric (x) as bars per available system, and, when the
      queries carry a type, nDCG@10 per query type per system beside it (:func:`metric_grid`).

    Returns the written paths.
    """
    from matplotlib.figure import Figure

    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [
        out_dir / RESULTS_FILE,
        out_dir / QUALITY_PLOT,
        out_dir / LATENCY_PLOT,
        out_dir / METRICS_PLOT,
    ]
    paths[0].write_text(json.dumps(result.detail(), indent=2, ensure_ascii=False) + "\n")
    (out_dir / RUNS_DIR).mkdir(exist_ok=True)
    for name, system in result.systems.items():
        if system.available:
            run = out_dir / RUNS_DIR / f"{name}.run"
            run.write_text("\n".join(trec_run_lines(result, name)) + "\n")
            paths.append(run)
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
    fig.savefig(out_dir / QUALITY_PLOT, dpi=120)

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
    fig.savefig(out_dir / LATENCY_PLOT, dpi=120)
    _metrics_plot(result, subtitle).savefig(out_dir / METRICS_PLOT, dpi=120)
    return paths


def record_last(result: EvaluationResult, home: Path) -> list[Path]:
    """Keep ``result`` as the last evaluation of the working folder ``home`` (what ``serve``'s
    page shows, :mod:`agentic_search_cli.last_eval`): ``metrics.png`` (the figure of
    ``write_outputs``; left out when matplotlib is not installed) then ``summary.json``.
    Returns the written paths."""
    from agentic_search_cli import last_eval

    folder = last_eval.last_dir(home)
    folder.mkdir(parents=True, exist_ok=True)
    figure = folder / last_eval.FIGURE_FILE
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        figure.unlink(missing_ok=True)
        written = []
    else:
        subtitle = f"{result.dataset} ({result.split}, {len(result.query_ids)} queries)"
        _metrics_plot(result, subtitle).savefig(figure, dpi=120)
        written = [figure]
    summary = last_eval.summary_of(result, figure=bool(written))
    return [*written, last_eval.write_summary(home, summary)]


def metric_grid(result: EvaluationResult) -> dict[str, dict[str, float]]:
    """What ``metrics.png`` draws: {system: {metric: mean}} for each available system and
    each reported metric, plus ``"<type> ndcg@10"`` per query type when queries carry one."""
    grid: dict[str, dict[str, float]] = {}
    for name, system in result.systems.items():
        if not system.available:
            continue
        means = system.means
        row = {m: means.get(m, 0.0) for m in result.metrics}
        for typ, typed in means_by_type(system.per_query, result.types).items():
            row[f"{typ} ndcg@10"] = typed.get("ndcg@10", 0.0)
        grid[name] = row
    return grid


def _metrics_plot(result: EvaluationResult, subtitle: str) -> Any:
    from matplotlib.figure import Figure

    grid = metric_grid(result)
    typed = bool(result.type_counts)
    fig = Figure(figsize=(11 if typed else 8, 4.5), layout="constrained")
    axes = fig.subplots(1, 2, width_ratios=[2, 1]) if typed else [fig.subplots()]
    panels = [("mean per metric", list(result.metrics))]
    if typed:
        panels.append(("nDCG@10 per query type", [f"{t} ndcg@10" for t in result.type_counts]))
    for ax, (title, columns) in zip(axes, panels, strict=True):
        xs = np.arange(len(columns))
        width = 0.8 / max(len(grid), 1)
        for i, (name, row) in enumerate(grid.items()):
            offset = (i - (len(grid) - 1) / 2) * width
            ax.bar(xs + offset, [row[c] for c in columns], width, label=name)
        ax.set_xticks(xs, [c.removesuffix(" ndcg@10") for c in columns], rotation=30, ha="right")
        ax.set_ylim(0, 1)
        ax.set_title(title)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].set_ylabel("mean over queries")
    if grid:
        axes[-1].legend(fontsize=8, loc="best")
    fig.suptitle(f"Systems x metrics: {subtitle}")
    return fig
