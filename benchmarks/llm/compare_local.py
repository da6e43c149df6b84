"""Rules vs LLM_PROVIDER=local on the held-out tools queries, in one run (a benchmark, not a
CI test; it needs `make llm`).

For each system (rules, then each GGUF given) it runs every selected held-out query of
benchmarks/tools_queries through the engine (``engine.search(query, limit=100)``, no result or
plan cache), and reports per kind nDCG@10 and Recall@5 (the eval's metrics), p50/p95 latency
of the whole search, the LLM's generation speed (tokens/s, from llama.cpp's timings on a probe
of three queries), the share of fallbacks to the rules and the share of answers where the rules
overruled an LLM constraint. Prompts were tuned only on the tuning split.

    python benchmarks/llm/compare_local.py --model MODELS/qwen2.5-coder-1.5b-instruct.gguf \\
        [--model ...0.5b...gguf] [--split heldout|tuning] [--kinds task,non-english] \\
        [--per-kind N] [--name compare_local] [--out benchmarks/llm]

Besides the metrics it counts, per system, the answerable queries left empty and the
unanswerable ones answered with nothing (clean), the fallbacks by cause (``timeout`` apart
from ``invalid``), and the hard constraints the rules found that the system's final intent
no longer holds (``lostConstraints``; the rules' own run is the reference). Budgets come from
the environment (``LLM_TIMEOUT_S``, ``LLM_BUDGET_S``, ``ROUND_BUDGET_MS``, ...), so a quality
run can lift them and a latency run keep the defaults.

Writes ``<name>.json`` and ``<name>.md`` to ``--out`` (rewritten after each system).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "benchmarks" / "tools_queries"
sys.path.insert(0, str(ROOT / "cli"))


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1) if ordered else 0.0


def _probe_tokens_per_s(base_url: str, model: str, queries: list[str]) -> float | None:
    """Generation speed of the served model on the real intent prompt (llama.cpp timings)."""
    import httpx

    from agentic_search.adapters.openai_chat import response_format
    from agentic_search.logic.llm_prompts import (
        intent_output_model,
        intent_prompt,
        quote_query,
        strict_json_schema,
    )
    from agentic_search.logic.schema import load_schema

    schema = load_schema("tools")
    speeds = []
    for q in queries:
        body = {
            "model": model,
            "messages": [
                {"role": "system", "content": intent_prompt(schema)},
                {"role": "user", "content": quote_query(q)},
            ],
            "response_format": response_format(
                "json_schema", "intent", strict_json_schema(intent_output_model(schema))
            ),
            "temperature": 0.0,
            "max_tokens": 600,
        }
        r = httpx.post(f"{base_url}/chat/completions", json=body, timeout=300).json()
        if t := r.get("timings"):
            speeds.append(t["predicted_per_second"])
    return round(statistics.median(speeds), 1) if speeds else None


class RecordingClient:
    """A :class:`~agentic_search.ports.ChatJSONClient` passing each call to ``inner`` and
    appending the raw reply to ``path`` in ``record_replies.py``'s format (model file sha256,
    system prompt and response schema sha256, query, reply, seconds)."""

    def __init__(self, inner, path: Path, settings) -> None:
        sys.path.insert(0, str(ROOT / "scripts"))
        from assemble_llm import sha256_of

        self.inner = inner
        self.model = inner.model
        self.path = path
        gguf = settings.resolved_gguf_path if settings.llm_provider == "local" else None
        self.model_sha = sha256_of(gguf) if gguf else None

    def complete_json(self, system: str, user: str, **kw):
        """The inner client's reply, recorded (failures are not)."""
        import hashlib
        import html

        t = time.perf_counter()
        reply = self.inner.complete_json(system, user, **kw)
        sha = lambda text: hashlib.sha256(text.encode()).hexdigest()  # noqa: E731
        row = {
            "model": self.model,
            "model_sha256": self.model_sha,
            "prompt_sha256": sha(system),
            "schema_sha256": sha(json.dumps(kw.get("json_schema"), sort_keys=True)),
            "query": html.unescape(user.removeprefix("<query>").removesuffix("</query>")),
            "user": user,
            "reply": reply,
            "seconds": round(time.perf_counter() - t, 2),
            "recorded": time.strftime("%Y-%m-%d", time.gmtime()),
        }
        with self.path.open("a") as out:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
        return reply


def run_system(
    name: str,
    settings,
    queries,
    qrels,
    rules_rows=None,
    keep_ranking=False,
    adapters=None,
    on_engine=None,
    record=None,
) -> dict:
    """Search every query with ``settings``; metrics by kind, abstention and the LLM's paths.
    ``rules_rows`` (the rules system's rows) is the reference of the lost constraints;
    ``keep_ranking`` keeps each row's top 10 ids (``top10``); ``adapters`` (port name ->
    adapter, e.g. a replaying ``llm``) are given to the engine as they are, and
    ``on_engine(engine)`` is called once it exists; with ``record`` (a path) every raw LLM
    reply is appended there as ``record_replies.py`` writes it (``replay_merge.py`` replays
    them)."""
    from agentic_search.service import SearchService
    from agentic_search_cli.evaluation.metrics import evaluate_rankings, mean_metrics

    engine = SearchService.create(settings, "tools", **(adapters or {}))
    if on_engine is not None:
        on_engine(engine)
    engine.ensure_bundled_catalog()
    t0 = time.perf_counter()
    llm = engine.deps.llm  # starts the local server (load time, not counted per query)
    load_s = round(time.perf_counter() - t0, 1)
    if record is not None and hasattr(llm, "client"):
        llm.client = RecordingClient(llm.client, record, settings)
    rankings, latency, rows = {}, [], []
    for q in queries:
        t = time.perf_counter()
        resp = engine.search(q["text"], limit=100)
        ms = (time.perf_counter() - t) * 1000.0
        latency.append(ms)
        rankings[q["_id"]] = [c.id for c in resp.output.candidates]
        ex = resp.paths.get("extractor") or {}
        quality = resp.output.answer_quality
        rows.append(
            {
                "id": q["_id"],
                "kind": q["type"],
                "answerable": q["answerable"],
                "results": len(resp.output.candidates),
                "verdict": quality.verdict if quality else None,
                "constraints": sorted(f.label() for f in resp.intent.constraints),
                "translation": resp.intent.translation,
                "path": ex.get("path"),
                "fallback": ex.get("fallback"),
                "reason": ex.get("reason"),
                "overruled": ex.get("overruled") or [],
                "fields": ex.get("fields") or {},
                "ms": round(ms, 1),
                "llmMs": ex.get("llmMs"),
            }
        )
        if keep_ranking:
            rows[-1]["top10"] = rankings[q["_id"]][:10]
        print(
            f"{name}: {q['_id']:<8} {ex.get('path')!s:<6} {ms:8.0f} ms {ex.get('reason')}",
            file=sys.stderr,
        )
    answerable = {q["_id"]: qrels[q["_id"]] for q in queries if q["_id"] in qrels}
    per_query = evaluate_rankings(answerable, rankings)
    for row in rows:
        if row["id"] in per_query:
            row["ndcg@10"] = round(per_query[row["id"]]["ndcg@10"], 4)
    by_kind = collections.defaultdict(dict)
    for q in queries:
        if q["_id"] in per_query:
            by_kind[q["type"]][q["_id"]] = per_query[q["_id"]]
    tokens = None
    if llm is not None and settings.llm_provider == "local":
        from agentic_search.adapters.local_llm import local_server

        server = local_server(settings.resolved_gguf_path, settings.llm_load_timeout_s)
        tokens = _probe_tokens_per_s(
            server.base_url, settings.chat_model, [q["text"] for q in queries[:3]]
        )
        server.stop()
    engine.close()
    n = len(rows)
    llm_rows = [r for r in rows if r["path"] == "llm"]
    lost = []
    if rules_rows is not None:
        for r, ref in zip(rows, rules_rows, strict=True):
            if missing := sorted(set(ref["constraints"]) - set(r["constraints"])):
                lost.append({"id": r["id"], "lost": missing})
    unanswerable = [r for r in rows if not r["answerable"]]
    pick = ("ndcg@10", "recall@5")
    return {
        "system": name,
        "loadS": load_s if llm is not None else None,
        "queries": n,
        "overall": {k: round(v, 4) for k, v in mean_metrics(per_query).items() if k in pick},
        "byKind": {
            kind: {k: round(v, 4) for k, v in mean_metrics(m).items() if k in pick}
            for kind, m in sorted(by_kind.items())
        },
        "latencyMs": {"p50": _pct(latency, 0.5), "p95": _pct(latency, 0.95)},
        "tokensPerS": tokens,
        "fallbackShare": round(sum(bool(r["fallback"]) for r in rows) / n, 3) if llm else None,
        "fallbacks": dict(collections.Counter(r["fallback"] for r in rows if r["fallback"])),
        "overruledShare": round(sum(bool(r["overruled"]) for r in llm_rows) / n, 3)
        if llm
        else None,
        "lostConstraints": lost if rules_rows is not None else None,
        "answerableLeftEmpty": sum(r["answerable"] and not r["results"] for r in rows),
        "unanswerable": len(unanswerable),
        "unanswerableClean": sum(
            not r["results"] and r["verdict"] in (None, "none") for r in unanswerable
        ),
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    """Entry point (see module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, action="append", default=[], help="a GGUF (repeat)")
    ap.add_argument("--split", default="heldout", choices=("heldout", "tuning"))
    ap.add_argument("--kinds", default="", help="only these kinds (comma-separated)")
    ap.add_argument("--name", default="compare_local", help="output file stem")
    ap.add_argument("--no-rules", action="store_true", help="skip the rules system")
    ap.add_argument("--limit", type=int, default=0, help="only the first N selected queries")
    ap.add_argument("--per-kind", type=int, default=0, help="only the first N of each kind")
    ap.add_argument("--home", type=Path, default=Path(".agentic-search"))
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "llm")
    ap.add_argument("--record", type=Path, help="append each raw LLM reply here")
    args = ap.parse_args(argv)
    from agentic_search.config import Settings

    queries = [json.loads(line) for line in (DATA / "queries.jsonl").read_text().splitlines()]
    queries = [q for q in queries if q["split"] == args.split]
    if args.kinds:
        queries = [q for q in queries if q["type"] in args.kinds.split(",")]
    if args.per_kind:
        seen: collections.Counter[str] = collections.Counter()
        kept = []
        for q in queries:
            seen[q["type"]] += 1
            if seen[q["type"]] <= args.per_kind:
                kept.append(q)
        queries = kept
    if args.limit:
        queries = queries[: args.limit]
    qrels: dict[str, dict[str, int]] = collections.defaultdict(dict)
    for line in (DATA / "qrels" / f"{args.split}.tsv").read_text().splitlines()[1:]:
        qid, doc, score = line.split("\t")
        qrels[qid][doc] = int(score)
    load_before = [round(x, 1) for x in os.getloadavg()]
    base = {"agentic_search_home": args.home, "cache_backend": "none"}
    results = []
    if not args.no_rules:
        results.append(run_system("rules", Settings(llm="off", **base), queries, qrels))
        write(args, argv, queries, load_before, results)
    ref = results[0]["rows"] if results else None
    for model in args.model:
        settings = Settings(llm="on", llm_provider="local", llm_gguf_path=model, **base)
        results.append(
            run_system(f"local:{model.stem}", settings, queries, qrels, ref, record=args.record)
        )
        write(args, argv, queries, load_before, results)
    return 0


def write(args, argv, queries, load_before, results) -> None:
    """Write ``<name>.json`` and ``<name>.md`` for the systems run so far."""
    from agentic_search.config import Settings

    s = Settings(agentic_search_home=args.home)
    summary = {
        "command": f"python benchmarks/llm/{Path(sys.argv[0]).name} "
        + " ".join(argv or sys.argv[1:]),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "measuredAt": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "loadAverageBefore": load_before,
        "loadAverageAfter": [round(x, 1) for x in os.getloadavg()],
        "budgets": {
            "llmTimeoutS": os.environ.get("LLM_TIMEOUT_S", "default"),
            "llmBudgetS": os.environ.get("LLM_BUDGET_S", "default"),
            "roundBudgetMs": s.round_budget_ms,
            "sourceTimeoutS": s.source_timeout_s,
        },
        "split": args.split,
        "kinds": args.kinds or "all",
        "systems": results,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.json").write_text(json.dumps(summary, indent=2) + "\n")
    kinds = sorted({k for r in results for k in r["byKind"]})
    md = [
        f"# Rules vs local LLM on the {args.split} tools queries",
        "",
        f"{summary['machine']}; {summary['measuredAt']}; load average "
        f"{load_before} before, {summary['loadAverageAfter']} after; budgets "
        f"{summary['budgets']}; `{summary['command']}`; {len(queries)} {args.split} queries "
        f"({summary['kinds']}).",
        "",
        "| system | overall nDCG@10 / R@5 | "
        + " | ".join(f"{k} nDCG@10 / R@5" for k in kinds)
        + " | answerable left empty | unanswerable clean | p50 / p95 ms | tokens/s "
        "| fallbacks | rules overruled an LLM constraint | rules constraints lost |",
        "|---" * (len(kinds) + 9) + "|",
    ]
    for r in results:
        cells = [
            f"{r['byKind'][k]['ndcg@10']:.3f} / {r['byKind'][k]['recall@5']:.3f}"
            if k in r["byKind"]
            else "-"
            for k in kinds
        ]
        lost = r["lostConstraints"]
        md.append(
            f"| {r['system']} | {r['overall']['ndcg@10']:.3f} / {r['overall']['recall@5']:.3f} | "
            + " | ".join(cells)
            + f" | {r['answerableLeftEmpty']} | {r['unanswerableClean']}/{r['unanswerable']} | "
            f"{r['latencyMs']['p50']:.0f} / {r['latencyMs']['p95']:.0f} | "
            f"{r['tokensPerS'] or '-'} | "
            f"{'-' if r['fallbackShare'] is None else format(r['fallbackShare'], '.0%')} "
            f"{r['fallbacks'] or ''} | "
            f"{'-' if r['overruledShare'] is None else format(r['overruledShare'], '.0%')} | "
            f"{'-' if lost is None else len(lost)} |"
        )
    (args.out / f"{args.name}.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    sys.exit(main())
