"""Rules vs LLM_PROVIDER=local on the 55 golden queries, by kind (a benchmark, not a CI test;
it needs `make llm`).

The golden set (``cli/agentic_search_cli/data/tools_golden.jsonl``) has no kind field; the kind
of each query is read from its judge's note and text, fixed below (:data:`KINDS`), in this
order: ``comparison`` (two or more named tools), ``navigational`` (a name, a typo, a name and a
facet), ``alternative`` (a reference tool excluded), ``negation`` (a "not ..." constraint),
``constraint`` (a hard filter: deployment, price, licence, platform) and ``capability`` (a need,
no filter). Every query runs through :func:`compare_local.run_system` (``engine.search(query,
limit=100)``, no result or plan cache), relevance 1 for each listed ``relevant`` record, so
nDCG@10 and Recall@5 are the eval's metrics; ``mustNotTop5`` counts the records the judge ruled
out (``must_not``) that reach a top 5, the golden set's own constraint check.

    python benchmarks/llm/golden_llm.py --home HOME \\
        --model HOME/models/qwen2.5-coder-1.5b-instruct.gguf

Writes ``golden_llm.json`` and ``golden_llm.md`` to ``--out``. ``--record R.jsonl`` appends
every raw LLM reply of the run to R.jsonl; ``--replay R.jsonl`` runs the LLM path on those
recorded replies instead of a model (the same parsing, validation and merge: a merge change
measured on the answers the model gave, see ``replay_merge.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_local import ROOT, run_system

GOLDEN = ROOT / "cli" / "agentic_search_cli" / "data" / "tools_golden.jsonl"

#: The kind of each golden query (see the module docstring).
KINDS = {
    **dict.fromkeys(("g43", "g44", "g45", "g50", "g51", "g52", "g53", "g55"), "comparison"),
    **dict.fromkeys(("g46", "g47", "g48", "g49", "g54"), "navigational"),
    **dict.fromkeys(("g02", "g07", "g11", "g13", "g17", "g37", "g40"), "alternative"),
    **dict.fromkeys(("g18", "g19", "g20", "g39"), "negation"),
    **dict.fromkeys(
        (
            "g01", "g03", "g04", "g05", "g08", "g10", "g12", "g14", "g16", "g21", "g22",
            "g23", "g32", "g33", "g36",
        ),
        "constraint",
    ),
}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Entry point (see module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, action="append", default=[], help="a GGUF (repeat)")
    ap.add_argument("--home", type=Path, default=Path(".agentic-search"))
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "llm")
    ap.add_argument("--name", default="golden_llm")
    ap.add_argument("--per-kind", type=int, default=0, help="only the first N of each kind")
    ap.add_argument("--record", type=Path, help="append each raw LLM reply here")
    ap.add_argument("--replay", type=Path, help="replay these recorded replies (no model)")
    args = ap.parse_args(argv)
    from agentic_search.config import Settings

    golden = [json.loads(line) for line in GOLDEN.read_text().splitlines() if line.strip()]
    queries = [
        {"_id": g["id"], "text": g["query"], "type": KINDS.get(g["id"], "capability"),
         "answerable": True}
        for g in golden
    ]  # fmt: skip
    if args.per_kind:
        kinds = [q["type"] for q in queries]
        queries = [q for i, q in enumerate(queries) if kinds[:i].count(q["type"]) < args.per_kind]
    qrels = {g["id"]: dict.fromkeys(g["relevant"], 1) for g in golden}
    must_not = {g["id"]: set(g.get("must_not", [])) for g in golden}
    load_before = [round(x, 1) for x in os.getloadavg()]
    base = {"agentic_search_home": args.home, "cache_backend": "none"}
    systems = [("rules", Settings(llm="off", **base))]
    systems += [
        (f"local:{m.stem}", Settings(llm="on", llm_provider="local", llm_gguf_path=m, **base))
        for m in args.model
    ]
    results: list[dict] = []
    runs = [(name, settings, {}) for name, settings in systems]
    if args.replay:
        from replay_merge import replay_adapters

        rows = [json.loads(x) for x in args.replay.read_text().splitlines() if x.strip()]
        model = rows[0]["model"] if rows else "none"
        settings = Settings(
            llm="on", llm_provider="openai", llm_model=f"replay:{model}", llm_plan="off", **base
        )
        adapters = replay_adapters(settings, rows, model)
        holder = adapters.pop("_holder")
        runs.append(
            (
                f"replay:{model}",
                settings,
                {"adapters": adapters, "on_engine": lambda e: holder.update(deps=e.deps)},
            )
        )
    for name, settings, extra in runs:
        ref = results[0]["rows"] if results else None
        record = None if extra else args.record  # a replay records nothing
        r = run_system(name, settings, queries, qrels, ref, True, record=record, **extra)
        r["mustNotTop5"] = sum(
            len(must_not[row["id"]] & set(row["top10"][:5])) for row in r["rows"]
        )
        results.append(r)
        write(args, argv, load_before, results)
    return 0


def write(args, argv, load_before, results) -> None:
    """Write ``<name>.json`` and ``<name>.md`` for the systems run so far."""
    summary = {
        "command": "python benchmarks/llm/golden_llm.py " + " ".join(argv or sys.argv[1:]),
        "measuredAt": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "loadAverageBefore": load_before,
        "loadAverageAfter": [round(x, 1) for x in os.getloadavg()],
        "budgets": {
            k: os.environ.get(k, "default")
            for k in ("LLM_TIMEOUT_S", "LLM_BUDGET_S", "ROUND_BUDGET_MS", "SOURCE_TIMEOUT_S")
        },
        "systems": results,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.json").write_text(json.dumps(summary, indent=2) + "\n")
    kinds = sorted({k for r in results for k in r["byKind"]})
    md = [
        "# Rules vs local LLM on the golden set, by kind",
        "",
        f"{summary['measuredAt']}; load average {load_before} before, "
        f"{summary['loadAverageAfter']} after; budgets {summary['budgets']}; "
        f"`{summary['command']}`; {len(results[0]['rows'])} golden queries.",
        "",
        "| system | overall nDCG@10 / R@5 | "
        + " | ".join(f"{k} ({sum(r['kind'] == k for r in results[0]['rows'])})" for k in kinds)
        + " | must_not in top 5 | p50 / p95 ms | fallbacks | rules constraints lost |",
        "|---" * (len(kinds) + 6) + "|",
    ]
    for r in results:
        cells = [
            f"{r['byKind'][k]['ndcg@10']:.3f} / {r['byKind'][k]['recall@5']:.3f}" for k in kinds
        ]
        lost = r["lostConstraints"]
        md.append(
            f"| {r['system']} | {r['overall']['ndcg@10']:.3f} / {r['overall']['recall@5']:.3f} | "
            + " | ".join(cells)
            + f" | {r['mustNotTop5']} | {r['latencyMs']['p50']:.0f} / "
            f"{r['latencyMs']['p95']:.0f} | "
            f"{'-' if r['fallbackShare'] is None else format(r['fallbackShare'], '.0%')} "
            f"{r['fallbacks'] or ''} | {'-' if lost is None else len(lost)} |"
        )
    (args.out / f"{args.name}.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    sys.exit(main())
