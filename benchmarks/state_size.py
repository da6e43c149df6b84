"""How large the search state grows between steps, untrimmed: the bytes Step Functions would
count for every Task's input and output (its 256 KB limit), on the bundled tools catalog.

Usage: python benchmarks/state_size.py [--query TEXT | --longest] [--limit 100] [--rounds 5]
       [--every-round] [--home DIR] [--json]

The local runner walks the search ASL with JSON between the states (``wire=True``, what the
Lambda functions receive and return) and without the state guard
(``agentic_search.wire.budget``), so the figures are what the steps produce. ``--longest``
searches the longest query accepted (``QUERY_MAX_CHARS`` characters of prose);
``--every-round`` keeps the rounds going to ``--rounds`` as if coverage never completed (the
stopping rule's answer kept for the last round only), the largest state a request can make.
Reported: the largest state (bytes and where), and the characters the query's text takes in
it (every string of 200+ characters that is the query or a part of it).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from agentic_search.config import Settings
from agentic_search.pipeline import grade_round, runner
from agentic_search.pipeline.runner import LocalRunner, RunOptions
from agentic_search.service import SearchService
from agentic_search.wire import QUERY_MAX_CHARS, SearchRequest
from agentic_search.wire.budget import STATE_LIMIT_BYTES, wire_size

#: The longest query accepted: prose cut to QUERY_MAX_CHARS (the state machine test's).
LONGEST = (
    "coding assistant like Amazon Q Developer that runs in the IDE and the terminal, with "
    "security scanning, code transformation and agents for enterprise teams on AWS; "
) * 50
LONGEST = LONGEST[:QUERY_MAX_CHARS].rstrip()


def long_strings(value: Any, query: str, path: str = "$") -> list[tuple[str, int]]:
    """(JSON path, characters) of every string of 200+ characters in ``value`` made of the
    query's words (80% of its distinct words are the query's: the query, its normalized
    form, its variants)."""
    out: list[tuple[str, int]] = []
    if isinstance(value, dict):
        for k, v in value.items():
            out += long_strings(v, query, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += long_strings(v, query, f"{path}[{i}]")
    elif isinstance(value, str) and len(value) >= 200:
        words = set(value.lower().split())
        if len(words & set(query.lower().split())) >= 0.8 * len(words):
            out.append((path, len(value)))
    return out


def measure(
    svc: SearchService,
    query: str,
    limit: int,
    rounds: int,
    every_round: bool,
    dump: Path | None = None,
) -> dict[str, Any]:
    """The sizes of one walk (see the module docstring); ``dump``: a folder to write the
    largest output of each step to, as JSON."""
    seen: list[tuple[str, str, int, dict]] = []
    call = runner.call_function

    def measured(function: str, event: dict, deps: Any) -> dict:
        if function != "RetrieveFunction":  # a copy: the walk changes the dicts it passes on
            seen.append((function, "input", wire_size(event), json.loads(json.dumps(event))))
        out = call(function, event, deps)
        if function != "RetrieveFunction":
            seen.append((function, "output", wire_size(out), json.loads(json.dumps(out))))
        return out

    rule = grade_round.should_continue

    def keep_going(state, new_evidence, round_ms, found_any):
        go, reason = rule(state, new_evidence, round_ms, found_any)
        return (True, reason) if state.round_index < state.caps.max_rounds else (go, reason)

    runner.call_function = measured
    if every_round:
        grade_round.should_continue = keep_going
    try:
        walk = LocalRunner(lambda _: svc.deps, 4, wire=True)
        request = SearchRequest(query=query, limit=limit, rounds=rounds)
        result = walk.run(request, RunOptions(cache=False))
    finally:
        runner.call_function = call
        grade_round.should_continue = rule
    function, side, size, state = max(seen, key=lambda s: s[2])
    per_step: dict[str, int] = {}
    for fn, sd, n, _ in seen:
        key = f"{fn.removesuffix('Function')} {sd}"
        per_step[key] = max(per_step.get(key, 0), n)
    top = {}
    for fn, sd, n, st in seen:
        key = f"{fn.removesuffix('Function')} {sd}"
        if per_step[key] == n and sd == "output":
            top[key] = _top_keys(st)
            if dump is not None:
                (dump / f"{key.replace(' ', '-')}.json").write_text(json.dumps(st, indent=1))
    texts = long_strings(state, query)
    response = result.state.response or {}
    return {
        "query_chars": len(query),
        "limit": limit,
        "rounds": len((response.get("retrievalReport") or {}).get("rounds") or []),
        "largest_state_bytes": size,
        "largest_state": f"{function} {side}",
        "limit_bytes": STATE_LIMIT_BYTES,
        "query_copies_in_largest": len(texts),
        "query_chars_in_largest": sum(n for _, n in texts),
        "copies_by_path": _by_path(texts),
        "largest_by_step": per_step,
        "largest_state_parts": top,
        "candidates": [c["id"] for c in response.get("candidates") or []],
    }


def _top_keys(state: dict[str, Any]) -> dict[str, int]:
    """Bytes of each top-level key and of each part of ``executor``, ``round`` and
    ``response`` (largest first)."""
    parts: dict[str, int] = {}
    for k, v in state.items():
        if isinstance(v, dict) and k in ("executor", "round", "response"):
            for kk, vv in v.items():
                parts[f"{k}.{kk}"] = wire_size(vv)
        else:
            parts[k] = wire_size(v)
    return dict(sorted(parts.items(), key=lambda kv: -kv[1])[:12])


def _by_path(texts: list[tuple[str, int]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for path, _ in texts:
        key = ".".join(p.split("[")[0] + ("[]" if "[" in p else "") for p in path.split("."))
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--query", default="AI coding assistant for AWS developers")
    parser.add_argument("--longest", action="store_true", help="the longest query accepted")
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--every-round", action="store_true")
    parser.add_argument("--home", type=Path, default=None, help="index folder (default: temp)")
    parser.add_argument("--dump", type=Path, default=None, help="write the largest states here")
    parser.add_argument("--json", action="store_true", help="print the whole report as JSON")
    args = parser.parse_args()
    query = LONGEST if args.longest else args.query
    with tempfile.TemporaryDirectory() as tmp:
        home = args.home or Path(tmp)
        svc = SearchService.create(
            Settings(agentic_search_home=home, cache_backend="none", round_budget_ms=6e5),
            "tools",
        )
        try:
            svc.ensure_bundled_catalog()
            report = measure(svc, query, args.limit, args.rounds, args.every_round, args.dump)
        finally:
            svc.close()
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(
        f"query {report['query_chars']:,} chars, limit {report['limit']}, "
        f"{report['rounds']} round(s): largest state {report['largest_state_bytes']:,} bytes "
        f"({report['largest_state']}; limit {report['limit_bytes']:,}), "
        f"{report['query_copies_in_largest']} copies of the query text in it "
        f"({report['query_chars_in_largest']:,} chars)"
    )
    for path, n in report["copies_by_path"].items():
        print(f"  {n:4d}  {path}")
    print("largest state of each step (bytes):")
    for step, n in report["largest_by_step"].items():
        print(f"  {n:10,d}  {step}")
    for where, parts in report["largest_state_parts"].items():
        print(f"parts of the largest state ({where}):")
        for k, n in parts.items():
            print(f"  {n:10,d}  {k}")


if __name__ == "__main__":
    main()
