"""``agentic-search calibrate``: propose a domain's ``quality:`` thresholds (abstention) from
its tuning queries (:mod:`agentic_search_cli.evaluation.calibrate`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from agentic_search_cli.common import add_embedder_flag, console, positive_int, progress_bar


def add_parser(sub: Any) -> None:
    """Register ``calibrate``."""
    c = sub.add_parser(
        "calibrate",
        help="propose a domain's quality: thresholds (when to answer 'no good match') from "
        "tuning queries",
        description=(
            "Search the judged queries of a tuning split with abstention off, then replay\n"
            "candidate_relevance x candidate_floor over them and propose the pair that keeps\n"
            "nDCG@10 at or above hybrid-rrf's on the same queries with the fewest queries\n"
            "wrong: answerable ones left empty plus unanswerable ones padded (queries.jsonl\n"
            'lines with "answerable": false and "split": SPLIT, judged nowhere). Prints the\n'
            "quality: block to paste into the domain's YAML. Without it a domain never\n"
            "answers 'no good match'. Choose on tuning queries, then report held-out ones\n"
            "with `agentic-search eval --split heldout`: never the same queries.\n\n"
            "exit codes: 0 proposed; 1 nothing to calibrate (no candidate measured, or no\n"
            "thresholds better than no abstention on the split); 2 a usage error."
        ),
        epilog=(
            "examples:\n"
            "  agentic-search calibrate --domain npm.yaml --dataset my-queries --split tuning\n"
            "  agentic-search calibrate --domain npm --catalog npm.jsonl --dataset my-queries "
            "--json\n"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    c.add_argument(
        "--dataset",
        type=Path,
        required=True,
        metavar="DIR",
        help="folder of queries.jsonl and qrels/SPLIT.tsv (BEIR layout)",
    )
    from agentic_search_cli.cmd_eval import add_domain_args

    add_domain_args(c)
    c.add_argument("--split", default="tuning", help="the tuning split (default tuning)")
    c.add_argument("--json", action="store_true", help="print the proposal and every pair")
    c.add_argument("--collection-prefix", default=None, metavar="PREFIX", help=argparse.SUPPRESS)
    c.add_argument(
        "--max-queries", type=positive_int, default=None, metavar="N", help="the first N only"
    )
    add_embedder_flag(c)


def run(args: argparse.Namespace) -> int:
    """Run ``calibrate``; returns the exit code."""
    from agentic_search_cli.cmd_eval import needs, open_evaluation, sync_corpus
    from agentic_search_cli.evaluation import calibrate as cal
    from agentic_search_cli.evaluation.metrics import evaluate_rankings, mean_metrics
    from agentic_search_cli.evaluation.systems import RUNNERS

    if not needs("pytrec_eval"):
        return 1
    service, dataset, live = open_evaluation(args)
    err = console(stderr=True)
    try:
        with progress_bar(err) as progress:
            sync_corpus(service, dataset, live, progress)
            judged = [q for q in dataset.queries if q in dataset.qrels]
            task = progress.add_task("hybrid-rrf baseline", total=len(judged))
            rankings = {}
            for qid in judged:
                rankings[qid] = RUNNERS["hybrid-rrf"](service, dataset.queries[qid]).ranking
                progress.advance(task, 1)
            baseline = mean_metrics(evaluate_rankings(dataset.qrels, rankings))["ndcg@10"]
            task = progress.add_task("executor, abstention off", total=len(dataset.queries))
            observed = cal.observe(service, dataset, lambda n: progress.advance(task, n))
    finally:
        service.close()
    try:
        result = cal.choose(observed, dataset.qrels, baseline)
    except cal.NothingGained as exc:
        sys.stderr.write(f"agentic-search: nothing to propose: {exc}\n")
        return 1
    except ValueError as exc:
        sys.stderr.write(f"agentic-search: error: {exc}\n")
        return 1
    if args.json:
        sys.stdout.write(json.dumps(result.wire(), indent=2) + "\n")
        return 0
    out = console()
    top, before = result.rows[0], result.before
    out.print(
        f"{dataset.split}: {result.answerable} answerable, {result.unanswerable} unanswerable "
        f"queries; hybrid-rrf nDCG@10 {result.baseline:.3f}",
        markup=False,
    )
    if before is not None:
        out.print(
            f"without abstention: nDCG@10 {before.ndcg:.3f}, {before.padded} of "
            f"{result.unanswerable} unanswerable padded",
            markup=False,
        )
    out.print(
        f"proposed: nDCG@10 {top.ndcg:.3f}, {top.left_empty} of {result.answerable} answerable "
        f"left empty, {top.padded} of {result.unanswerable} unanswerable padded"
        + ("" if top.ndcg >= result.baseline else " (no pair keeps the baseline)"),
        markup=False,
    )
    out.print("\n# paste into the domain's YAML (chosen on this split only):", markup=False)
    out.print(result.yaml(), markup=False, end="")
    return 0
