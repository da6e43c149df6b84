"""Can a local LLM say "nothing fits"? A feasibility measure of LLM answer grading (issue 29
item 3), on the tools queries of one split, before anything is built on it.

Abstention by the embedder's cosine cannot separate the catalog's unanswerable queries from
its hard answerable ones (`git log -p benchmarks/README.md`, issue 27 item 4), and no cross-encoder
weights install here. So: for each query, the rule-based executor's top five (name, the first
220 characters of the description, pricing, deployment, platform, licence) go to the model
with the request, in one JSON-schema-constrained call (temperature 0): "the numbers of the
entries that fit, best first; an empty list when none fits". Reported:

* the abstention policy "empty list -> answer nothing": unanswerable queries answered clean,
  answerable ones left empty, and mean nDCG@10 over the answerable queries (the executor's
  ranking otherwise unchanged);
* as a relevance signal: the share of the entries it picked that are judged relevant,
  against the share among the entries it did not pick; how many answers pick all five;
* the rerank policy "the picked entries first, in the executor's order, then the rest":
  mean nDCG@10 over the answerable queries.

Needs ``make llm`` (or a GGUF path); no model runs in CI. The prompt was written once, before
the run, on nothing but this docstring's idea: do not tune it on ``heldout``.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/llm/grade_fit.py \\
        --model MODELS/qwen2.5-coder-1.5b-instruct.gguf --split tuning --out benchmarks/llm/r8
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "benchmarks" / "tools_queries"
sys.path.insert(0, str(ROOT / "cli"))

SYSTEM = (
    "You check search results from a catalog of software tools and AI services. "
    "The user gives a request and up to five numbered catalog entries. An entry fits when it "
    "is the kind of tool the request asks for and meets every hard requirement the request "
    "states (price, licence, platform, deployment, language). The request may be in any "
    "language. Answer with the numbers of the entries that fit, best first; an empty list "
    "when none fits."
)
SCHEMA = {
    "type": "object",
    "properties": {
        "fits": {
            "type": "array",
            "items": {"type": "integer", "minimum": 1, "maximum": 5},
            "maxItems": 5,
        }
    },
    "required": ["fits"],
    "additionalProperties": False,
}
TOP = 5


def ndcg10(ranked: list[str], rel: dict[str, int]) -> float:
    """nDCG@10 of one ranking as the eval computes it (trec_eval's ``ndcg_cut_10`` through
    :func:`~agentic_search_cli.evaluation.metrics.evaluate_rankings`)."""
    from agentic_search_cli.evaluation.metrics import evaluate_rankings

    return evaluate_rankings({"q": rel}, {"q": ranked})["q"]["ndcg@10"] if rel else 0.0


def entries(candidates: list[Any]) -> list[str]:
    """The numbered lines the model reads, one per candidate of the top ``TOP``."""
    lines = []
    for i, c in enumerate(candidates[:TOP]):
        m = c.metadata
        facts = ", ".join(
            f"{k}: {m[k]}"
            for k in ("pricing_model", "deployment", "platform", "license")
            if m.get(k)
        )
        lines.append(
            f"{i + 1}. {m.get('name', c.id)} — {(m.get('description') or '')[:220]} ({facts})"
        )
    return lines


def ask(base_url: str, request: str, lines: list[str]) -> tuple[list[int] | None, float]:
    """The entry numbers the model says fit (None: an answer outside the schema) and the
    call's seconds."""
    import httpx

    user = f"Request: {request}\n\nEntries:\n" + "\n".join(lines)
    body = {
        "model": "local",
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "fits", "schema": SCHEMA, "strict": True},
        },
        "temperature": 0.0,
        "max_tokens": 40,
    }
    t = time.perf_counter()
    reply = httpx.post(f"{base_url}/chat/completions", json=body, timeout=300).json()
    seconds = time.perf_counter() - t
    try:
        fits = json.loads(reply["choices"][0]["message"]["content"])["fits"]
    except (KeyError, IndexError, TypeError, ValueError):
        return None, seconds
    return [k for k in fits if 1 <= k <= len(lines)], seconds


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The abstention and signal figures of the module docstring."""
    ans = [r for r in rows if r["answerable"]]
    una = [r for r in rows if not r["answerable"]]

    def empty(r: dict[str, Any], llm: bool) -> bool:
        return r["results"] == 0 or (llm and r["fits"] == [])

    picked, unpicked = [], []
    for r in ans:
        for i, gain in enumerate(r["top5_gain"]):
            if r["fits"]:
                (picked if i + 1 in r["fits"] else unpicked).append(gain > 0)
    share = lambda xs: round(sum(xs) / len(xs), 3) if xs else None  # noqa: E731
    return {
        "answerable": len(ans),
        "unanswerable": len(una),
        "rules": {
            "answerable_left_empty": sum(empty(r, False) for r in ans),
            "unanswerable_clean": sum(empty(r, False) for r in una),
            "ndcg10": round(statistics.mean(r["ndcg10"] for r in ans), 4),
        },
        "llm_abstains": {
            "answerable_left_empty": sum(empty(r, True) for r in ans),
            "unanswerable_clean": sum(empty(r, True) for r in una),
            "ndcg10": round(
                statistics.mean(0.0 if r["fits"] == [] else r["ndcg10"] for r in ans), 4
            ),
        },
        "picked_first": {
            "ndcg10": round(statistics.mean(r["ndcg10_picked_first"] for r in ans), 4),
        },
        "answers_empty_list": sum(r["fits"] == [] and r["results"] > 0 for r in rows),
        "answers_all_five": sum(r["fits"] == list(range(1, TOP + 1)) for r in rows),
        "invalid": sum(r["fits"] is None for r in rows),
        "picked_relevant_share": share(picked),
        "unpicked_relevant_share": share(unpicked),
        "median_call_s": round(statistics.median(r["seconds"] for r in rows if r["results"]), 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, required=True, help="the GGUF file")
    ap.add_argument("--split", default="tuning", choices=["tuning", "heldout"])
    ap.add_argument("--home", type=Path, default=Path(".agentic-search"))
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "llm" / "r8")
    args = ap.parse_args(argv)

    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    from agentic_search.adapters.local_llm import local_server
    from agentic_search.config import Settings
    from agentic_search.service import SearchService

    queries = [json.loads(line) for line in (DATA / "queries.jsonl").open()]
    queries = [q for q in queries if q["split"] == args.split]
    qrels: dict[str, dict[str, int]] = {}
    for line in (DATA / "qrels" / f"{args.split}.tsv").open():
        qid, doc, gain = line.rstrip("\n").split("\t")
        if qid != "query-id":
            qrels.setdefault(qid, {})[doc] = int(gain)

    engine = SearchService.create(
        Settings(agentic_search_home=args.home, cache_backend="none"), "tools"
    )
    engine.ensure_bundled_catalog()
    server = local_server(args.model, 300)
    load = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    rows = []
    for q in queries:
        candidates = engine.search(q["text"], limit=10).output.candidates
        lines = entries(candidates)
        fits, seconds = ask(server.base_url, q["text"], lines) if lines else ([], 0.0)
        ids = [c.id for c in candidates]
        rel = qrels.get(q["_id"], {})
        picked = [ids[k - 1] for k in sorted(fits or [])]
        reranked = picked + [i for i in ids if i not in picked]
        rows.append(
            {
                "id": q["_id"],
                "kind": q["type"],
                "answerable": q["answerable"],
                "results": len(ids),
                "fits": fits,
                "top10": ids[:10],
                "top5_gain": [rel.get(i, 0) for i in ids[:TOP]],
                "ndcg10": round(ndcg10(ids, rel), 4),
                "ndcg10_picked_first": round(ndcg10(reranked, rel), 4),
                "seconds": round(seconds, 1),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    result = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "started": started,
        "load_before_after": [round(x, 1) for x in (*load[:1], os.getloadavg()[0])],
        "model": args.model.name,
        "split": args.split,
        "summary": summary(rows),
        "rows": rows,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"grade_fit_{args.split}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result["summary"], indent=1))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
