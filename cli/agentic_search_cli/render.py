"""Human-readable rendering of search responses and ingest reports (rich).

An evaluation's table lives with the evaluation (:mod:`agentic_search_cli.evaluation.table`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from agentic_search.logic.planner import excluded_label
from agentic_search.wire import Candidate, SearchResponse
from agentic_search_cli.render_entities import (
    comparison_table,
    link_lines,
    plan_lines,
    round_lines,
)

if TYPE_CHECKING:  # the write path: a search's rendering never loads it
    from agentic_search.sync.ingest import IngestReport
    from agentic_search.wire import ExecutionStats


def _plain(field: str) -> str:
    return field.replace("_", " ")


def why(
    candidate: Candidate, query: str, like: str | None = None, names: dict[str, str] | None = None
) -> str:
    """Why a candidate fits, in plain words: the record it was reached from or that the query
    named, the asked values it holds ("Code Completion (functionality)"), the query's own
    words it holds (as written: no stopword, no question word) and, when it was found as
    like the query's reference record, ``like`` (that record's name). ``query`` is the
    search's text; ``names``: record id -> display name, for the records the query linked.
    "-" when nothing is said."""
    names = names or {}
    prov = candidate.provenance
    parts: list[str] = []
    named = [h.source.split(":", 1)[1] for h in prov.hits if h.source.startswith("entity:")]
    if named:
        parts.append(f"named in the query ({named[0]})")
    via = [
        (h.source.split(":", 2), h.query_vector_source)
        for h in prov.hits
        if h.source.startswith("graph:")
    ]
    if via and len(via[0][0]) == 3:
        (_, kind, origin), placement = via[0]
        origin = names.get(origin, origin)
        if placement == "bridge":  # placed after the record it was reached from, at its score
            parts.append(f"placed after {origin} ({_plain(kind)} link from it)")
        else:
            parts.append(f"linked from {origin} ({_plain(kind)})")
    matched = [
        f"{value} ({_plain(field)})"
        for field, values in prov.matched_values.items()
        for value in values
    ]
    if prov.matched_keywords:
        matched.append("your words " + ", ".join(prov.matched_keywords[:5]))
    if matched:
        parts.append("matched " + ", ".join(matched))
    if like and any(h.query_vector_source == "reference_tool" for h in prov.hits):
        parts.append(f"like {like}")
    return "; ".join(parts) or "-"


def details(candidate: Candidate) -> str:
    """The developer's view of a candidate (``--explain``): the aspects that found it (``~ref``:
    by the reference record's vector), the sources, the fused score and the rerank score."""
    prov = candidate.provenance
    aspects: list[str] = []
    for h in prov.hits:
        if h.aspect:
            label = h.aspect + ("~ref" if h.query_vector_source == "reference_tool" else "")
            if label not in aspects:
                aspects.append(label)
    parts = [f"aspects {', '.join(aspects)}"] if aspects else []
    kinds = sorted({h.source.split(":", 1)[0] for h in prov.hits})
    if kinds:
        parts.append("sources " + "+".join(kinds))
    parts.append(f"fused {candidate.fused_score:.4f}")
    if candidate.rerank_score is not None:
        parts.append(f"rerank {candidate.rerank_score:.3f}")
    if prov.relaxed_filters:
        parts.append("relaxed " + "; ".join(prov.relaxed_filters))
    return " · ".join(parts)


def relevance_text(candidate: Candidate) -> str:
    """The score a person reads: the candidate's cosine to the query as the answer's quality
    judged it (:func:`~agentic_search.logic.quality.best_cosine`: its main aspect's or a dense
    source's, on the embedder's own scale, the one the domain's thresholds are calibrated
    on), "-" when not measured. Never the rank score, a min-max of this list."""
    from agentic_search.logic.quality import best_cosine

    cosine = best_cosine(candidate.relevance, candidate.provenance.hits)
    return "-" if cosine is None else f"{cosine:.2f}"


def split_supported(resp: SearchResponse) -> tuple[list[Candidate], list[Candidate]]:
    """The candidates their own evidence supports (``answerQuality.supported``: all of them
    when the answer judged none on its own) and the weaker rest, each in rank order."""
    cands = resp.output.candidates
    quality = resp.output.answer_quality
    if quality is None or quality.supported is None:
        return list(cands), []
    backed = set(quality.supported)
    return [c for c in cands if c.id in backed], [c for c in cands if c.id not in backed]


def _names(resp: SearchResponse) -> tuple[str | None, dict[str, str]]:
    """The reference record's display name (None without one) and record id -> display name
    of the records the query linked."""
    it = resp.intent
    names = {e.id: e.name for e in it.entities if e.kind == "entity"}
    ref = it.reference_tool
    like = names.get(ref, it.reference_tool_name or ref) if ref else None
    return like, names


def _table(
    title: str,
    rows: list[tuple[int, Candidate]],
    resp: SearchResponse,
    explain: bool,
    style: str | None = None,
) -> Table:
    table = Table(title=title, expand=True, style=style)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("name", no_wrap=True, max_width=28)
    table.add_column("relevance", justify="right", no_wrap=True)
    table.add_column("why", ratio=1)
    if explain:
        table.add_column("details", ratio=1)
    like, names = _names(resp)
    for i, c in rows:
        name = str(c.metadata.get("name") or c.id)
        cells = [str(i), name, relevance_text(c), why(c, resp.query, like, names)]
        if explain:
            cells.append(details(c))
        table.add_row(*cells, style=style)
    return table


def results_table(resp: SearchResponse, explain: bool = False) -> Table:
    """Rank, name, relevance and why for each supported candidate (``explain``: and the
    developer's details)."""
    good, _ = split_supported(resp)
    rank = {c.id: i for i, c in enumerate(resp.output.candidates, start=1)}
    n = len(good)
    title = f"{n} result{'' if n == 1 else 's'} for {resp.query!r}"
    return _table(title, [(rank[c.id], c) for c in good], resp, explain)


def weaker_table(resp: SearchResponse, explain: bool = False) -> Table | None:
    """The candidates returned but not supported by their own evidence, under "N weaker
    results" (None when there are none)."""
    _, weak = split_supported(resp)
    if not weak:
        return None
    rank = {c.id: i for i, c in enumerate(resp.output.candidates, start=1)}
    n = len(weak)
    title = f"{n} weaker result{'' if n == 1 else 's'} (their own evidence does not show they fit)"
    return _table(title, [(rank[c.id], c) for c in weak], resp, explain, style="dim")


def cache_line(resp: SearchResponse) -> str | None:
    """On a result cache hit, when the answer was computed and how long the lookup took."""
    info = resp.paths.get("cache") or {}
    if not info.get("hit"):
        return None
    when = info.get("computedAt")
    took = info.get("lookupMs")
    said = (
        f"computed {when.replace('T', ' ').replace('+00:00', ' UTC')}"
        if when
        else "computed earlier"
    )
    return f"from the result cache: {said}" + (
        f", looked up in {took:.1f} ms" if took is not None else ""
    )


def path_lines(paths: dict) -> list[str]:
    """How the intent and the plan were made (LLM, rules or plan cache, and why) and the
    caches' hits, from :attr:`SearchResponse.paths`."""
    lines = []
    for label, key in (("intent", "extractor"), ("plan", "planner")):
        info = paths.get(key)
        if info:
            took = f" [{info['llmMs']:.0f} ms LLM]" if info.get("llmMs") else ""
            lines.append(f"{label} path: {info['path']}{took} - {info['reason']}")
            if info.get("fields"):
                lines.append(
                    "  fields: " + ", ".join(f"{k}={v}" for k, v in info["fields"].items())
                )
            if info.get("overruled"):
                lines.append(
                    "  LLM constraints overruled by the rules: " + ", ".join(info["overruled"])
                )
    caches = []
    for label, key in (("result cache", "cache"), ("plan cache", "planCache")):
        info = paths.get(key)
        if info and info.get("backend", "none") != "none":
            state = "hit" if info.get("hit") else "miss"
            error = f" ({info['error']})" if info.get("error") else ""
            caches.append(f"{label} {state} ({info['backend']}){error}")
    if caches:
        lines.append("   ".join(caches))
    return lines


def timing_line(stats: ExecutionStats) -> str:
    """The search's timings, each labelled: the whole search (the graph from the cache check
    to the answer), the executor's part of it (``latencyMs``: from the validated plan through
    the rounds to the hydrated ranking) and each stage (ms)."""
    stages = ", ".join(
        f"{k} {v:.1f}" for k, v in stats.stage_ms.items() if k not in ("total", "pipeline_total")
    )
    return (
        f"search {stats.stage_ms.get('pipeline_total', 0):.0f} ms in all (cache check, intent, "
        f"plan, rounds, answer), of which the executor {stats.latency_ms} ms (rounds and "
        f"hydration, from the plan on); stages in ms: {stages}"
    )


def follow_up_lines(it: Any) -> list[str]:
    """How a query with history was read (``intent.followUp``): the kind and the turn it was
    read against, the text searched, and what was kept, added and dropped; none without
    history."""
    up = it.follow_up
    if up is None:
        return []
    if up.kind == "standalone":
        head = "follow-up: none, the query stands alone (the conversation's context is dropped)"
    else:
        cue = f" ({up.cue!r})" if up.cue else ""
        head = f"follow-up: {up.kind} of turn {up.turn}{cue}, searched as {up.read_as!r}"
    lines = [head]
    for label, parts in (("kept", up.kept), ("added", up.added), ("dropped", up.dropped)):
        if parts:
            lines.append(f"  {label}: " + "; ".join(parts))
    if up.within:
        lines.append(f"  searched within the previous results first: {', '.join(up.within)}")
    return lines


def explain_panel(resp: SearchResponse, embedder: str | None = None) -> Panel:
    """The intent and the plan, compactly (``embedder``: a line on the embedder)."""
    it, plan = resp.intent, resp.plan
    lines = [
        f"goal: {it.primary_goal}   confidence: {it.confidence:.2f}   extractor: {it.extractor}",
    ]
    if embedder:
        lines.append(f"embedder: {embedder}")
    lines += follow_up_lines(it)
    lines += link_lines(it)
    lines += path_lines(resp.paths)
    if it.reference_tool:
        lines.append(f"reference tool: {it.reference_tool_name} ({it.reference_tool})")
    if it.matches:
        lines.append("matched: " + "; ".join(f"{k}={', '.join(v)}" for k, v in it.matches.items()))
    if it.by_meaning:
        lines.append(
            "by meaning: "
            + "; ".join(f"{m.vocabulary}={m.value} (cosine {m.score:.2f})" for m in it.by_meaning)
        )
    if it.constraints:
        lines.append("hard constraints: " + ", ".join(f.label() for f in it.constraints))
    if it.must_preserve_terms:
        lines.append("must preserve: " + ", ".join(it.must_preserve_terms))
    if it.semantic_variants:
        lines.append(f"semantic variant: {it.semantic_variants[0]!r}")
    if it.translation:
        lines.append(f"translation (searched beside the query): {it.translation!r}")
    lines.append("")
    lines.append(
        f"strategy: {plan.strategy}   fusion: {plan.fusion} (k={plan.rrf_k})   "
        f"planner: {plan.planner}"
    )
    for vs in plan.vector_sources:
        src = vs.query_vector_source + (
            f" {vs.text!r}" if vs.query_vector_source != "query_text" else ""
        )
        lines.append(f"  dense  {vs.aspect:<14} top-{vs.top_k:<4} {src}")
    if plan.sparse_source:
        lines.append(
            f"  sparse bm25           top-{plan.sparse_source.top_k:<4} {plan.sparse_source.text!r}"
        )
    for st in plan.structured_sources:
        prefs = ", ".join(p.label() for p in st.preferences)
        lines.append(f"  structured            top-{st.top_k:<4} prefer {prefs}")
    lines += plan_lines(plan)
    if plan.exclude_ids:
        lines.append(f"  excluded: {excluded_label(plan.exclude_ids, resp.intent)}")
        if addons := resp.intent.reference_addons:
            more = f", ... ({len(addons) - 5} more)" if len(addons) > 5 else ""
            lines.append(f"    add-ons: {', '.join(addons[:5])}{more}")
    lines += [f"  why: {r}" for r in plan.rationale]
    stats = resp.output.execution_stats
    lines.append("")
    lines.append(timing_line(stats))
    lines.append(
        f"candidates: {stats.candidates_before_fusion} hits from "
        f"{stats.vector_queries_executed} dense, {stats.sparse_queries_executed} sparse, "
        f"{stats.structured_queries_executed} structured -> {stats.candidates_after_fusion} fused"
    )
    return Panel(Text("\n".join(lines)), title="intent and plan", expand=True)


def rounds_panel(resp: SearchResponse) -> Panel | None:
    """The executor's rounds: queries asked, what each round added, coverage, why it stopped."""
    pack = resp.evidence
    if pack is None:
        return None
    rep = pack.report
    lines = [f"reranker: {rep.reranker}   HyDE: {rep.hyde}"]
    if rep.relaxed:
        lines.append("relaxed (too few results): " + ", ".join(rep.relaxed))
    for i, r in enumerate(rep.rounds):
        lines.append("")
        lines.append(
            f"round {r.round}: {r.candidates_before_fusion} hits -> "
            f"{r.candidates_after_fusion} fused"
            + (f", {r.reranked} reranked" if r.reranked is not None else "")
            + f", {len(r.new_evidence)} new evidence, confidence {r.confidence:.2f}, "
            f"{r.stage_ms.get('round_total', 0):.0f} ms"
        )
        for q in r.queries:
            target = f"  (for {q.target})" if q.target else ""
            lines.append(f"  {q.purpose:<8} {'+'.join(q.modes):<28} {q.text[:70]!r}{target}")
        lines += round_lines(rep, i)
        if r.new_evidence:
            lines.append("  added: " + ", ".join(r.new_evidence))
        if r.newly_covered:
            lines.append("  newly covered: " + ", ".join(r.newly_covered))
        if r.missing:
            lines.append("  still missing: " + ", ".join(r.missing))
        lines.append(f"  -> {r.decision}")
    cov = pack.coverage
    lines.append("")
    if rep.covering:
        lines.append(
            "placed in the results for what the evidence covers: "
            + ", ".join(f"{rid} ({label})" for rid, label in rep.covering.items())
        )
    lines.append(
        f"evidence pack: {len(pack.evidence)} items, {pack.tokens} tokens, "
        f"coverage confidence {cov.confidence:.2f} (quality {cov.quality:.2f})"
    )
    for c in cov.contradictions:
        vals = "; ".join(f"{v}: {', '.join(ids)}" for v, ids in c.values.items())
        lines.append(f"  contradiction on {c.field} for {c.doc_id}: {vals}")
    lines.append(f"stopped: {rep.stop_reason}")
    return Panel(Text("\n".join(lines)), title="executor rounds", expand=True)


def errors_panel(resp: SearchResponse) -> Panel | None:
    """Failed sources, if any."""
    if not resp.output.errors:
        return None
    body = "\n".join(f"{e.source}: {e.error}: {e.message}" for e in resp.output.errors)
    return Panel(Text(body, style="yellow"), title="sources that failed (partial results)")


def print_search(
    console: Console, resp: SearchResponse, explain: bool, embedder: str | None = None
) -> None:
    """Print a response as a table (and the explanation; ``embedder``: what it says of the
    embedder that searched)."""
    items: list[Any] = []
    if explain:
        items.append(explain_panel(resp, embedder))
        rounds = rounds_panel(resp)
        if rounds is not None:
            items.append(rounds)
    if resp.comparison is not None:
        items.append(comparison_table(resp.comparison))
    quality = resp.output.answer_quality
    if quality is not None and quality.verdict == "none":
        held = f"; {quality.withheld} weak result(s) withheld" if quality.withheld else ""
        items.append(
            Text(f"No good match for {resp.query!r}: {quality.reason}{held}", style="yellow")
        )
    elif quality is not None and quality.verdict == "weak":
        good, weak = split_supported(resp)
        fit = (
            f"{len(good)} of {len(resp.output.candidates)} results show they fit"
            if weak
            else "the results only partly fit"
        )
        items.append(Text(f"weak match: {fit} ({quality.reason})", style="yellow"))
    for reason in resp.output.not_permitted or []:  # a restricted class this caller lacks
        items.append(Text(reason, style="yellow"))
    if resp.output.candidates or quality is None or quality.verdict != "none":
        items.append(results_table(resp, explain))
        weaker = weaker_table(resp, explain)
        if weaker is not None:
            items.append(weaker)
    cached = cache_line(resp)
    if cached is not None:
        items.append(Text(cached, style="dim"))
    err = errors_panel(resp)
    if err is not None:
        items.append(err)
    for item in items:  # the terminal's width; piped, the content's (see common.console)
        if hasattr(item, "expand"):
            item.expand = console.is_terminal
    console.print(Group(*items))


def print_ingest(console: Console, report: IngestReport) -> None:
    """Summarize an ingest, listing rejected lines."""
    s = report.stats
    unit = "items" if report.path.endswith(".json") else "lines"
    skipped = f" ({len(report.errors)} rejected, {report.blank} blank)" if report.blank else ""
    console.print(
        f"ingested {report.valid} of {report.lines} {unit}{skipped} from {report.path}: "
        f"{s.inserted} new, {s.updated_vectors} re-embedded, {s.updated_payload} payload-only, "
        f"{s.unchanged} unchanged; {s.embedded_texts} texts embedded in {report.seconds:.1f} s "
        f"({report.docs_per_s:.1f} docs/s)"
    )
    if report.errors:
        console.print(f"[yellow]{len(report.errors)} line(s) rejected:[/yellow]")
        for e in report.errors[:50]:
            console.print(Text(f"  {e}", style="yellow"))
        if len(report.errors) > 50:
            console.print(f"  ... and {len(report.errors) - 50} more")
    e = s.enrichment
    if e is not None and (e.mode != "off" or e.enriched or e.failed):
        console.print(
            f"enrichment ({e.mode}): {e.enriched} of {e.records} records enriched "
            f"({e.asked} asked, {e.from_cache} cached, {e.from_shipped} shipped, "
            f"{e.from_index} already in the index); {e.kept} of {e.generated} needs kept"
        )
        if e.failed:
            console.print(
                f"[yellow]{len(e.failed)} record(s) indexed without enrichment[/yellow] "
                "(asked again by the next ingest):"
            )
            for rid, reason in sorted(e.failed.items())[:20]:
                console.print(Text(f"  {rid}: {reason}", style="yellow"))
            if len(e.failed) > 20:
                console.print(f"  ... and {len(e.failed) - 20} more")
    if report.kept:  # in the file: their indexed version stays, even with --prune
        kept = ", ".join(report.kept[:10]) + (" ..." if len(report.kept) > 10 else "")
        console.print(Text(f"kept {len(report.kept)} record(s) whose line was rejected: {kept}"))
    if report.pruned:
        console.print(
            f"pruned {report.pruned} point(s) of {len(report.stale)} record(s) not in the file"
        )
    elif report.stale:
        shown = ", ".join(report.stale[:10]) + (" ..." if len(report.stale) > 10 else "")
        console.print(
            f"[yellow]{len(report.stale)} record(s) in the index are not in the file[/yellow] "
            f"({shown}): still searchable; --prune deletes them"
        )
