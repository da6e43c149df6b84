"""Rendering what entity-aware search adds: the comparison table, the entity links and the
graph's bridges (rich)."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from agentic_search.wire import Comparison, IntentState, QueryPlan, RetrievalReport


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value) or "-"
    return str(value)


def comparison_table(comparison: Comparison) -> Table:
    """The compared records side by side: one column per record (in the order named), one row
    per compared field; a set field's row shows what only that record has, and a last row per
    set field what they all have in common."""
    table = Table(title="comparison", expand=True)
    table.add_column("", no_wrap=True, style="bold")
    for rec in comparison.records:
        table.add_column(rec.name, ratio=1)
    for f in comparison.fields:
        if f in comparison.distinct:
            table.add_row(
                f"{f} (only)",
                *(_cell(comparison.distinct[f].get(r.id, [])) for r in comparison.records),
            )
            common = comparison.common.get(f, [])
            if common:
                table.add_row(f"{f} (all)", *([_cell(common)] * len(comparison.records)))
        else:
            table.add_row(f, *(_cell(r.values.get(f)) for r in comparison.records))
    return table


def link_lines(intent: IntentState) -> list[str]:
    """The entity links and vocabulary corrections, and the query's complexity."""
    lines = [f"complexity: {intent.complexity}" + ("   bridge question" if intent.bridge else "")]
    links = [
        f"{lk.name} ({lk.method} {lk.score:.2f}) <- {lk.surface!r}"
        for lk in intent.entities
        if lk.kind == "entity"
    ]
    if links:
        lines.append("linked: " + "; ".join(links))
    fixes = [
        f"{lk.surface!r} -> {lk.name!r} ({lk.score:.2f})"
        for lk in intent.entities
        if lk.kind != "entity"
    ]
    if fixes:
        lines.append("read as: " + "; ".join(fixes))
    return lines


def plan_lines(plan: QueryPlan) -> list[str]:
    """The plan's entity fetch and graph walk, if any."""
    lines = []
    if plan.entity_source is not None:
        es = plan.entity_source
        how = "pinned first, in order" if es.pin else "fused"
        lines.append(f"  entity_state {', '.join(es.names or es.ids)} ({how})")
    if plan.graph_source is not None:
        gs = plan.graph_source
        lines.append(f"  graph walk from {', '.join(gs.seeds)}, {gs.hops} hop(s)")
    return lines


def round_lines(report: RetrievalReport, round_index: int) -> list[str]:
    """What a round pinned and bridged (a bridge names the evidence that named it)."""
    rnd = report.rounds[round_index]
    lines = []
    if rnd.pinned:
        lines.append("  pinned: " + ", ".join(rnd.pinned))
    for b in rnd.bridges:
        kind, src = b.via.split(":", 1) if ":" in b.via else (b.via, "")
        lines.append(f"  bridge: {b.id} placed after {b.after} ({src} names it: {kind} edge)")
    return lines


__all__ = ["comparison_table", "link_lines", "plan_lines", "round_lines"]
