"""Follow-up conversations over the bundled catalog: the last turn's nDCG@10 read with the
conversation's history against the last turn's text alone, and how many stand-alone last
turns were misread as follow-ups.

Usage:
  python benchmarks/follow_ups/eval.py [--split tuning|heldout|all] [--json] [--out FILE]
  python benchmarks/follow_ups/eval.py --record   # fill each earlier turn's shown ids

``conversations.jsonl`` (see README.md) holds each conversation's turns, its kind, its split,
the ids shown for each earlier turn (``shown``: recorded once with ``--record``, then frozen,
so the judged last turn is read against a fixed conversation) and the judgments of the last
turn (``relevant``: {id: grade}). Rules only, no result cache; the bundled catalog is indexed
under ``$AGENTIC_SEARCH_HOME`` on first use.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CONVERSATIONS = HERE / "conversations.jsonl"
#: The results shown for an earlier turn (what a client sends back in ``history``).
SHOWN = 10


def load(path: Path = CONVERSATIONS) -> list[dict[str, Any]]:
    """The conversations, in file order."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def service() -> Any:
    """The tools search service: rules, no result cache, the bundled catalog indexed."""
    from agentic_search.config import Settings
    from agentic_search.service import SearchService

    svc = SearchService.create(Settings(cache_backend="none", llm="off"), "tools")
    svc.ensure_bundled_catalog()
    return svc


def record(path: Path = CONVERSATIONS) -> None:
    """Fill ``shown`` of every conversation that has none: each earlier turn searched with
    the history before it, its first :data:`SHOWN` ids kept."""
    rows = load(path)
    svc = service()
    try:
        for row in rows:
            if row.get("shown"):
                continue
            history: list[dict[str, Any]] = []
            for text in row["turns"][:-1]:
                resp = svc.search(text, limit=SHOWN, history=history or None)
                history.append({"query": text, "ids": [c.id for c in resp.output.candidates]})
            row["shown"] = [t["ids"] for t in history]
    finally:
        svc.close()
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def evaluate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per conversation: nDCG@10 of the last turn with history and alone, how it was read;
    and the means per split and kind."""
    from agentic_search_cli.evaluation.metrics import evaluate_rankings

    svc = service()
    per: list[dict[str, Any]] = []
    try:
        for row in rows:
            history = [
                {"query": q, "ids": ids}
                for q, ids in zip(row["turns"][:-1], row["shown"], strict=True)
            ]
            last = row["turns"][-1]
            with_history = svc.search(last, limit=10, history=history)
            alone = svc.search(last, limit=10)
            up = with_history.intent.follow_up
            ranked = {
                "history": [c.id for c in with_history.output.candidates],
                "alone": [c.id for c in alone.output.candidates],
            }
            qrels = {k: row["relevant"] for k in ranked}
            scores = evaluate_rankings(qrels, ranked, ignore_identical_ids=False)
            per.append(
                {
                    "id": row["id"],
                    "kind": row["kind"],
                    "split": row["split"],
                    "turns": row["turns"],
                    "read_as": up.kind if up else None,
                    "text": up.read_as if up else None,
                    "ndcg_history": round(scores["history"]["ndcg@10"], 4),
                    "ndcg_alone": round(scores["alone"]["ndcg@10"], 4),
                    "top": ranked["history"][:5],
                }
            )
    finally:
        svc.close()
    return {"conversations": per, "summary": summary(per)}


def summary(per: list[dict[str, Any]]) -> dict[str, Any]:
    """Means per split (and per split and kind): nDCG@10 with history and alone, their
    difference, and the share of stand-alone last turns read as follow-ups."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in per:
        groups[row["split"]].append(row)
        groups[f"{row['split']}/{row['kind']}"].append(row)
        groups["all"].append(row)
    out: dict[str, Any] = {}
    for name, rows in sorted(groups.items()):
        standalone = [r for r in rows if r["kind"] == "standalone"]
        misread = [r for r in standalone if r["read_as"] != "standalone"]
        follow = [r for r in rows if r["kind"] != "standalone"]
        unread = [r for r in follow if r["read_as"] == "standalone"]
        hist = statistics.fmean(r["ndcg_history"] for r in rows)
        alone = statistics.fmean(r["ndcg_alone"] for r in rows)
        out[name] = {
            "n": len(rows),
            "ndcg@10_history": round(hist, 4),
            "ndcg@10_alone": round(alone, 4),
            "gain": round(hist - alone, 4),
            "standalone": len(standalone),
            "standalone_misread": len(misread),
            "standalone_misread_share": round(len(misread) / len(standalone), 4)
            if standalone
            else None,
            "follow_ups_read_alone": len(unread),
        }
    return out


def table(result: dict[str, Any]) -> str:
    """The summary as a Markdown table, then each conversation misread or scored below alone."""
    lines = [
        "| group | n | nDCG@10 with history | last turn alone | gain | stand-alone misread |",
        "|---|---|---|---|---|---|",
    ]
    for name, s in result["summary"].items():
        mis = f"{s['standalone_misread']}/{s['standalone']}" if s["standalone"] else "-"
        lines.append(
            f"| {name} | {s['n']} | {s['ndcg@10_history']:.3f} | {s['ndcg@10_alone']:.3f} "
            f"| {s['gain']:+.3f} | {mis} |"
        )
    worse = [
        r
        for r in result["conversations"]
        if r["ndcg_history"] < r["ndcg_alone"]
        or (r["kind"] == "standalone") != (r["read_as"] == "standalone")
    ]
    if worse:
        lines.append("")
        lines.append("Misread or worse with history:")
        for r in worse:
            lines.append(
                f"- {r['id']} ({r['kind']}, read {r['read_as']}): {' / '.join(r['turns'])}: "
                f"{r['ndcg_history']:.3f} vs {r['ndcg_alone']:.3f} alone"
            )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--split", choices=["tuning", "heldout", "all"], default="all")
    ap.add_argument("--json", action="store_true", help="print the whole result as JSON")
    ap.add_argument("--out", type=Path, help="also write the whole result as JSON here")
    ap.add_argument("--record", action="store_true", help="fill the earlier turns' shown ids")
    args = ap.parse_args()
    if args.record:
        record()
        return 0
    rows = [r for r in load() if args.split in ("all", r["split"])]
    missing = [r["id"] for r in rows if "relevant" not in r or "shown" not in r]
    if missing:
        print(f"not judged or not recorded: {', '.join(missing)}", file=sys.stderr)
        return 2
    result = evaluate(rows)
    if args.out:
        args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps(result, indent=2) if args.json else table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
