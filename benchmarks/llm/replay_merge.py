"""Rules vs the LLM path REPLAYING recorded intent answers, on the tuning split (a benchmark for
tuning the merge without a model process; no held-out query is ever replayed).

A local model costs 10-20 s a query on this machine; the merge of its answer with the rules
(:mod:`agentic_search.logic.intent_merge`) and the plan built from it cost milliseconds. So
the answers are recorded once from the real runtime (``record_replies.py --tuning KINDS``) and
replayed here through the same :class:`~agentic_search.adapters.llm_planner.LLMIntentPlanner`
(the same parsing, validation and merge as ``LLM_PROVIDER=local``) with a client that returns
the recorded reply of the query it is asked about. A query without a recording, or whose
recording answered another prompt, is a fallback to the rules (``invalid``), as a stale reply
must not pass for today's prompt.

    python benchmarks/llm/replay_merge.py --replies benchmarks/llm/r5/tuning_replies.jsonl \\
        [--kinds task] [--name replay_tuning] [--out benchmarks/llm/r5]

Writes ``<name>.json`` (per query: nDCG@10 rules and replay, the merged fields' origins) and
``<name>.md``.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_local import DATA, ROOT, run_system, write


class ReplayClient:
    """A :class:`~agentic_search.ports.ChatJSONClient` answering from recorded replies, keyed
    by the quoted query and the sha256 of the system prompt they answered."""

    def __init__(self, rows: list[dict[str, Any]], model: str) -> None:
        from agentic_search.logic.llm_prompts import quote_query

        self.model = model
        self._replies = {
            (r.get("user") or quote_query(r["query"]), r["prompt_sha256"]): r["reply"] for r in rows
        }

    def complete_json(self, system: str, user: str, **_: Any) -> str:
        """The recorded reply to ``user`` under ``system``.

        Raises:
            LLMFallback: ``invalid`` when nothing was recorded for it.
        """
        from agentic_search.logic.llm_budget import LLMFallback

        key = (user, hashlib.sha256(system.encode()).hexdigest())
        if key not in self._replies:
            raise LLMFallback("invalid", "no recorded reply for this query and prompt")
        return self._replies[key]


def replay_adapters(settings, rows: list[dict[str, Any]], model: str) -> dict[str, Any]:
    """``{"llm": planner}``: the real LLM intent planner over a :class:`ReplayClient`, its
    catalog lookup read from ``holder["deps"]`` (returned as ``_holder``: set it to the
    engine's dependencies once the engine exists)."""
    from agentic_search.adapters.llm_planner import LLMIntentPlanner
    from agentic_search.logic.schema import load_schema
    from agentic_search.pipeline.catalog import catalog_lookup

    holder: dict[str, Any] = {}
    planner = LLMIntentPlanner(
        load_schema("tools"),
        settings,
        ReplayClient(rows, model),
        lambda: catalog_lookup(holder["deps"]),
    )
    return {"llm": planner, "_holder": holder}


def main(argv: list[str] | None = None) -> int:
    """Entry point (see module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replies", type=Path, required=True)
    ap.add_argument("--kinds", default="", help="only these kinds (comma-separated)")
    ap.add_argument("--name", default="replay_tuning")
    ap.add_argument("--home", type=Path, default=Path(".agentic-search"))
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "llm" / "r5")
    args = ap.parse_args(argv)
    args.split = "tuning"
    from agentic_search.config import Settings

    rows = [json.loads(x) for x in args.replies.read_text().splitlines() if x.strip()]
    queries = [json.loads(x) for x in (DATA / "queries.jsonl").read_text().splitlines()]
    queries = [q for q in queries if q["split"] == "tuning"]
    if args.kinds:
        queries = [q for q in queries if q["type"] in args.kinds.split(",")]
    qrels: dict[str, dict[str, int]] = collections.defaultdict(dict)
    for line in (DATA / "qrels" / "tuning.tsv").read_text().splitlines()[1:]:
        qid, doc, score = line.split("\t")
        qrels[qid][doc] = int(score)
    load_before = [round(x, 1) for x in os.getloadavg()]
    base = {"agentic_search_home": args.home, "cache_backend": "none"}
    rules = run_system("rules", Settings(llm="off", **base), queries, qrels, keep_ranking=True)
    model = rows[0]["model"] if rows else "none"
    settings = Settings(
        llm="on", llm_provider="openai", llm_model=f"replay:{model}", llm_plan="off", **base
    )
    adapters = replay_adapters(settings, rows, model)
    holder = adapters.pop("_holder")
    replay = run_system(
        f"replay:{model}",
        settings,
        queries,
        qrels,
        rules["rows"],
        True,
        adapters,
        on_engine=lambda engine: holder.update(deps=engine.deps),
    )
    write(args, argv, queries, load_before, [rules, replay])
    print("\nper query nDCG@10 (rules -> replay), fields the LLM set:")
    for r, p in zip(rules["rows"], replay["rows"], strict=True):
        if "ndcg@10" in r:
            print(
                f"{r['id']:<16} {r['ndcg@10']:.3f} -> {p['ndcg@10']:.3f}  "
                f"{p['path']} {p['fields']}  {p['reason'] or ''}"[:200]
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
