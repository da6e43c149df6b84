"""LLM path over the golden queries: fallback rate, LLM time, and plan-cache hit vs miss latency.

Usage:
    OPENAI_BASE_URL=http://127.0.0.1:8000/v1 LLM_MODEL=gemma3-270m \\
        python benchmarks/llm_paths.py [--out benchmarks/llm] [--timeout 2] [--budget 4]

For every golden query (cli/agentic_search_cli/data/tools_golden.jsonl) it runs the
ExtractIntent and PlanQuery steps twice against the configured OpenAI-compatible endpoint with a
fresh SQLite
plan cache: the first run asks the LLM (a plan-cache miss), the second must be a plan-cache hit.
It reports which path produced each intent and plan (llm, or rules after which kind of
fallback), the LLM time, and the median / p95 latency of the two steps on a miss and on a hit.
Writes ``llm_paths.json`` and ``llm_paths.md`` to ``--out``. Needs the bundled catalog indexed
(ingested into a temporary folder here, about 15 s).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from agentic_search.config import Settings
from agentic_search.pipeline.steps import state_step
from agentic_search.service import SearchService
from agentic_search.wire import SearchRequest, SearchState

GOLDEN = (
    Path(__file__).resolve().parents[1]
    / "cli"
    / "agentic_search_cli"
    / "data"
    / "tools_golden.jsonl"
)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, default=Path("benchmarks/llm"), help="output folder")
    ap.add_argument("--timeout", type=float, default=None, help="LLM_TIMEOUT_S for this run")
    ap.add_argument("--budget", type=float, default=None, help="LLM_BUDGET_S for this run")
    ap.add_argument("--queries", type=int, default=None, help="only the first N golden queries")
    args = ap.parse_args()
    if not (os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_KEY")):
        sys.stderr.write("llm_paths: set OPENAI_BASE_URL (and LLM_MODEL) to an endpoint\n")
        return 2
    golden = [json.loads(line) for line in GOLDEN.read_text().splitlines() if line.strip()]
    golden = golden[: args.queries] if args.queries else golden
    overrides = {}
    if args.timeout:
        overrides["llm_timeout_s"] = args.timeout
    if args.budget:
        overrides["llm_budget_s"] = args.budget
    rows = []
    with tempfile.TemporaryDirectory() as home:
        settings = Settings(
            agentic_search_home=Path(home), cache_backend="sqlite", llm="on", **overrides
        )
        engine = SearchService.create(settings, "tools")
        engine.ensure_bundled_catalog()
        c = engine.deps  # its plan cache: SQLite in the temporary home
        for g in golden:
            runs = []
            for _ in range(2):
                t0 = time.perf_counter()
                state = SearchState(request=SearchRequest(query=g["query"]))
                state = state_step("ExtractIntent")(state, c)
                state = state_step("PlanQuery")(state, c)
                runs.append((state, (time.perf_counter() - t0) * 1000.0))
            (miss, miss_ms), (hit, hit_ms) = runs
            rows.append(
                {
                    "id": g["id"],
                    "query": g["query"],
                    "intent": miss.extractor.path,
                    "intentFallback": miss.extractor.fallback,
                    "plan": miss.planner.path,
                    "planFallback": miss.planner.fallback,
                    "reason": miss.extractor.reason if miss.extractor.fallback else "",
                    "llmMs": miss.llm_ms or 0.0,
                    "missMs": round(miss_ms, 1),
                    "secondRunHit": bool(hit.plan_cache and hit.plan_cache.hit),
                    "hitMs": round(hit_ms, 1),
                }
            )
            print(
                f"{g['id']}: intent {rows[-1]['intent']:<5} plan {rows[-1]['plan']:<5} "
                f"llm {rows[-1]['llmMs']:7.0f} ms  miss {miss_ms:7.0f} ms  hit {hit_ms:5.1f} ms",
                file=sys.stderr,
            )
        engine.close()
    n = len(rows)
    intent_fb = collections.Counter(r["intentFallback"] for r in rows if r["intentFallback"])
    plan_fb = collections.Counter(r["planFallback"] for r in rows if r["planFallback"])
    hits = [r["hitMs"] for r in rows if r["secondRunHit"]]
    misses = [r["missMs"] for r in rows]
    summary = {
        "endpoint": os.environ.get("OPENAI_BASE_URL", "api.openai.com"),
        "model": settings.chat_model,
        "llmTimeoutS": settings.llm_timeout_s,
        "llmBudgetS": settings.llm_budget_s,
        "queries": n,
        "intentByLlm": sum(r["intent"] == "llm" for r in rows),
        "planByLlm": sum(r["plan"] == "llm" for r in rows),
        "intentFallbackRate": round(sum(intent_fb.values()) / n, 3),
        "planFallbackRate": round(sum(plan_fb.values()) / n, 3),
        "searchFallbackRate": round(
            sum(bool(r["intentFallback"] or r["planFallback"]) for r in rows) / n, 3
        ),
        "intentFallbacks": dict(intent_fb),
        "planFallbacks": dict(plan_fb),
        "secondRunHits": len(hits),
        "missMs": {"p50": _pct(misses, 0.5), "p95": _pct(misses, 0.95)},
        "hitMs": {"p50": _pct(hits, 0.5), "p95": _pct(hits, 0.95)} if hits else None,
        "llmMsMedian": round(statistics.median(r["llmMs"] for r in rows), 1),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "loadAverage": [round(x, 2) for x in os.getloadavg()],
        "rows": rows,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "llm_paths.json").write_text(json.dumps(summary, indent=2) + "\n")
    md = [
        "# LLM path over the golden queries",
        "",
        f"Endpoint {summary['endpoint']}, model `{summary['model']}`, timeout "
        f"{summary['llmTimeoutS']} s per call, budget {summary['llmBudgetS']} s per request; "
        f"{summary['machine']}, load average {summary['loadAverage']}.",
        "",
        "| queries | intent by LLM | plan by LLM | searches with a fallback | intent fallbacks | "
        "plan fallbacks | plan-cache miss p50 / p95 | hit p50 / p95 |",
        "|---|---|---|---|---|---|---|---|",
        f"| {n} | {summary['intentByLlm']} | {summary['planByLlm']} | "
        f"{summary['searchFallbackRate']:.0%} | {dict(intent_fb) or '-'} | "
        f"{dict(plan_fb) or '-'} | "
        f"{summary['missMs']['p50']} / {summary['missMs']['p95']} ms | "
        + (
            f"{summary['hitMs']['p50']} / {summary['hitMs']['p95']} ms |"
            if summary["hitMs"]
            else "- |"
        ),
        "",
        "Latency is the ExtractIntent + PlanQuery steps in-process (a hit skips both LLM calls).",
        "",
    ]
    (args.out / "llm_paths.md").write_text("\n".join(md))
    print(json.dumps({k: v for k, v in summary.items() if k != "rows"}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
