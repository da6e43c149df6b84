"""The bench's outputs: ``bench.json`` and a Markdown report of the same figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_search_cli.bench.config import (
    INGEST_RATIO_TARGET,
    JSON_FILE,
    MD_FILE,
    STAGE_HELP,
    STAGES_PLOT,
)

if TYPE_CHECKING:
    pass


def _gib(n: int | None) -> str:
    return "n/a" if n is None else f"{n / 1024**3:.2f} GiB"


def _f(v: Any, digits: int = 2) -> str:
    return "n/a" if v is None else f"{v:,.{digits}f}"


def to_markdown(result: dict[str, Any]) -> str:
    """The markdown report: machine, search stages, raw model and ingest, imports, targets."""
    m = result["machine"]
    lines = [
        "# agentic-search bench",
        "",
        f"Measured {result['measured_at']} in {result.get('seconds', 0):g} s.",
        "",
        "## Machine",
        "",
        "| | |",
        "|---|---|",
        f"| CPU | {m['cpu_model']} |",
        f"| logical CPUs (usable) | {m['logical_cpus']} ({m['usable_cpus']}) |",
        f"| RAM | {_gib(m['ram_bytes'])} |",
        f"| OS | {m['platform']} |",
        f"| Python | {m['python']} |",
        f"| runtimes | {', '.join(f'{k} {v}' for k, v in m['versions'].items())} |",
        f"| load average at start / end | {m['loadavg_at_start']} / {m.get('loadavg_at_end')} |",
        "",
    ]
    s = result["settings"]
    lines += [
        f"Embedder {s['embedder']}, max length {s['max_length']} tokens, batch "
        f"{s['embedder_batch_size']}, threads {s['embedding_threads'] or 'default'}; "
        f"MAX_ROUNDS {s['max_rounds']}; warm-up {s['warmup']} queries per mode, "
        f"{s['repeat']} pass(es); {s['caches']}.",
        "",
    ]
    search = result.get("search", {})
    for key, title in (("golden", "golden queries, bundled tools catalog"), ("dataset", None)):
        block = search.get(key)
        if block is None:
            continue
        if title is None:
            d = result["dataset"]
            title = f"{d['name']} ({d['split']}) queries, collection {block['collection']}"
        lines += [f"## Search latency per stage (ms): {title}", ""]
        if block.get("available") is False:
            lines += [f"Not measured: {block['reason']}.", ""]
            continue
        lines += [
            f"{block['queries']} queries x {block['repeat']} pass(es), limit {block['limit']}, "
            f"after {block['warmup_queries']} warm-up queries per mode.",
            "",
        ]
        for mode, mb in block["modes"].items():
            rounds = ", ".join(f"{k} round(s): {v}" for k, v in mb["rounds_run"].items())
            lines += [
                f"### {mode} ({rounds})",
                "",
                "| stage | p50 | p95 | p99 | mean | n |",
                "|---|---|---|---|---|---|",
            ]
            for stage, r in mb["stages"].items():
                lines.append(
                    f"| {stage} | {r['p50']:.2f} | {r['p95']:.2f} | {r['p99']:.2f} | "
                    f"{r['mean']:.2f} | {r['n']} |"
                )
            lines.append("")
    lines += [
        "Stages: "
        + "; ".join(f"**{k}** {v}" for k, v in STAGE_HELP.items())
        + ". Percentiles are over the searches where the stage ran (n).",
        "",
    ]
    model = result.get("model", {})
    ing = result.get("ingest", {})
    lines += ["## Embedding throughput", ""]
    if model.get("available"):
        r0 = model["runs"][0]
        so = r0["session_options"]
        lines += [
            f"Raw model: one onnxruntime session on `{r0['model_file']}` "
            f"({', '.join(r0['providers'])}; graph optimization {so['graph_optimization_level']}, "
            f"intra-op threads {so['intra_op_num_threads']}, inter-op threads "
            f"{so['inter_op_num_threads']}, {so['execution_mode']}; {so['threads_note']}), "
            f"{r0['texts']} pre-tokenized texts truncated at {r0['max_length']} tokens, sorted by "
            f"length, fixed batches of {r0['batch_size']} padded to their longest; only "
            "`session.run` timed; measured before and after the ingest.",
            "",
        ]
    else:
        lines += [f"Raw model not measured: {model.get('reason')}.", ""]
    lines += ["| figure | value |", "|---|---|"]
    for i, run in enumerate(model.get("runs", [])):
        when = "before" if i == 0 else "after"
        lines.append(
            f"| raw model tokens/s ({when} ingest) | {_f(run['tokens_per_s'], 1)} "
            f"({run['tokens']:,} tokens, padding {run['padding_share']:.1%}) |"
        )
    if model.get("available"):
        lines.append(f"| raw model tokens/s (mean) | {_f(model['tokens_per_s'], 1)} |")
    if ing:
        lines += [
            f"| ingest source | {ing['source']}: {ing['documents']:,} documents -> "
            f"{ing['points']:,} points, {ing['embedded_texts']:,} embedded texts |",
            f"| ingest seconds (embedding / other) | {_f(ing['seconds'], 1)} "
            f"({_f(ing['embed_seconds'], 1)} / {_f(ing['other_seconds'], 1)}) |",
            f"| ingest docs/s | {_f(ing['docs_per_s'], 2)} |",
            f"| ingest tokens/s | {_f(ing['tokens_per_s'], 1)} "
            f"({ing['tokens']:,} tokens, padding {ing['padding_share']:.1%}) |",
            f"| ingest tokens/s inside the embedder | {_f(ing['embed_tokens_per_s'], 1)} |",
            f"| **ratio ingest ÷ raw tokens/s** (target ≥ {INGEST_RATIO_TARGET}) | "
            f"**{_f(ing.get('ratio'), 3)}** |",
            f"| ratio, embedder time only | {_f(ing.get('embed_only_ratio'), 3)} |",
            f"| ratio, per CPU-second | {_f(ing.get('cpu_time_ratio'), 3)} |",
            f"| peak RSS during ingest | {_gib(ing['peak_rss_bytes'])} "
            f"(before: {_gib(ing['rss_before_bytes'])}; {ing['peak_rss_method']}) |",
            f"| process peak RSS (ru_maxrss) | {_gib(ing['process_ru_maxrss_bytes'])} |",
        ]
    lines.append("")
    imp = result["imports"]
    lines += [
        f"## Import time (fresh interpreter, median of {imp['runs']})",
        "",
        f"Bare interpreter start (`python -c pass`): {imp['interpreter_start_ms']:.1f} ms; "
        f"PYTHONDONTWRITEBYTECODE {'set' if imp['pythondontwritebytecode'] else 'unset'}.",
        "",
        "| import | wall ms (median) | min | max | in-process import ms |",
        "|---|---|---|---|---|",
    ]
    for label, row in imp["targets"].items():
        if "error" in row:
            lines.append(f"| {label} | failed: {row['error']} | | | |")
        else:
            lines.append(
                f"| {label} | {row['wall_ms_median']:.1f} | {row['wall_ms_min']:.1f} | "
                f"{row['wall_ms_max']:.1f} | {_f(row.get('import_ms_median'), 1)} |"
            )
    if imp.get("note"):
        lines += ["", imp["note"] + "."]
    lines += ["", "## Targets (issue 7)", "", "| target | value | met |", "|---|---|---|"]
    for name, tgt in result.get("targets", {}).items():
        value = tgt.get("value")
        if value is None and "value_bytes" in tgt:
            value = _gib(tgt["value_bytes"]) + f" over {tgt['over']}"
        lines.append(f"| {name} {tgt['target']} | {value} | {'yes' if tgt['met'] else 'no'} |")
    return "\n".join(lines) + "\n"


def stage_grid(result: dict[str, Any]) -> dict[str, dict[str, tuple[float, float, float]]]:
    """What ``latency_stages.png`` draws: ``{"<block> <mode>": {stage: (p50, p95, p99)}}`` (ms)
    for every search block (``golden``, ``dataset``) and executor mode that has stage rows, the
    stages in the report's order; ``total`` left out (it would flatten the others)."""
    grid: dict[str, dict[str, tuple[float, float, float]]] = {}
    for block, data in (result.get("search") or {}).items():
        for mode, mb in (data.get("modes") or {}).items():
            rows = {
                stage: (row["p50"], row["p95"], row["p99"])
                for stage, row in mb.get("stages", {}).items()
                if stage != "total"
            }
            if rows:
                grid[f"{block} {mode}"] = rows
    return grid


def stage_plot(result: dict[str, Any]):
    """A matplotlib ``Figure`` of :func:`stage_grid`: per panel (block and mode), p50 / p95 /
    p99 bars per stage in ms; None when no search block has stages."""
    grid = stage_grid(result)
    if not grid:
        return None
    import numpy as np
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 3.2 * len(grid)), layout="constrained")
    axes = fig.subplots(len(grid), 1, squeeze=False)[:, 0]
    width = 0.27
    for ax, (label, rows) in zip(axes, grid.items(), strict=True):
        xs = np.arange(len(rows))
        for i, name in enumerate(("p50", "p95", "p99")):
            ax.bar(xs + (i - 1) * width, [v[i] for v in rows.values()], width, label=name)
        ax.set_xticks(xs, list(rows), rotation=30, ha="right")
        ax.set_ylabel("ms")
        ax.set_title(f"Search latency per stage: {label}")
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend()
    return fig


def write_outputs(result: dict[str, Any], out_dir: Path) -> list[Path]:
    """Write ``bench.json``, ``bench.md`` and, when the search was measured and matplotlib is
    installed (the ``eval`` extra), ``latency_stages.png`` into ``out_dir``; returns their
    paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / JSON_FILE, out_dir / MD_FILE]
    paths[0].write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    paths[1].write_text(to_markdown(result))
    try:
        fig = stage_plot(result)
    except ImportError:  # matplotlib is in the eval extra only
        fig = None
    if fig is not None:
        fig.savefig(out_dir / STAGES_PLOT, dpi=110)
        paths.append(out_dir / STAGES_PLOT)
    return paths
