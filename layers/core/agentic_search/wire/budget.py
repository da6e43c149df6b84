"""Step Functions' 256 KB state limit: measure a state as the service counts it and, above a
safety budget, trim it in a defined order instead of letting the execution fail with
``States.DataLimitExceeded`` (which no ``States.ALL`` Catch catches).

Works on the wire form of :class:`~agentic_search.wire.SearchState` (the camelCase JSON dict a
step returns). The order, each step applied only while the state is still over the budget:

1. **query texts** - the query strings repeated as debug detail (each source hit's ``query`` in
   a provenance, a retrieved list's ``query``, an evidence's ``queries``, a round report's
   query ``text``) are cut to :data:`QUERY_CHARS` characters;
2. **evidence snippets** - each evidence ``text`` (pool and evidence pack) is cut to
   :data:`SNIPPET_CHARS_TRIMMED` characters;
3. **lowest-ranked hits** - the retrieved lists keep only hits of rank <= R, for R in
   :data:`HIT_RANKS` until the state fits;
4. **lowest-ranked candidates** - the response's candidates are dropped from the end (at least
   one is kept).

What was trimmed is reported: one line per step in ``retrievalReport.trimmed`` (the executor's
report while rounds run, the response's after Finalize). Nothing here is Lambda-specific; the
Lambda glue calls :func:`fit_state` on each step's output.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

#: Step Functions' limit on a state's input or output: 256 KB of UTF-8 JSON.
STATE_LIMIT_BYTES = 256 * 1024
#: Trim above this: the Lambda Task's result wrapper and the Map's bookkeeping need the rest.
STATE_BUDGET_BYTES = 240 * 1024
#: What the query texts kept as debug detail are cut to (characters).
QUERY_CHARS = 80
#: What evidence snippets are cut to (characters).
SNIPPET_CHARS_TRIMMED = 200
#: Rank cut-offs tried for the retrieved lists' hits, loosest first.
HIT_RANKS = (100, 50, 30, 20, 10, 5, 1)
#: What one Retrieve result (one Map item's output) takes, estimated: a fixed part plus this
#: much per requested hit (``topK``); measured ~60 bytes a hit on the bundled catalog.
RETRIEVE_FIXED_BYTES, RETRIEVE_HIT_BYTES = 1024, 80
#: Room kept for one trim note in one report (a note is one line of about 120 characters):
#: the notes are written into the state after the steps, so the steps trim to the budget
#: less this per note and report.
NOTE_BYTES = 200


def wire_size(value: Any) -> int:
    """Bytes of ``value`` as JSON, an upper bound of what Step Functions counts: ASCII with
    ``\\u`` escapes (never fewer bytes than UTF-8) and ``", "`` / ``": "`` separators."""
    return len(json.dumps(value))


def map_reserve(state: dict[str, Any]) -> int:
    """Bytes the Map's results will add to ``state`` (its ``round.subQueries``, one Retrieve
    each): :data:`RETRIEVE_FIXED_BYTES` plus the sub-query's own size plus
    :data:`RETRIEVE_HIT_BYTES` per hit of its largest ``topK``; 0 without a round."""
    round_ = state.get("round") or {}
    total = 0
    for sub in round_.get("subQueries") or []:
        top_k = max(_top_ks(sub), default=0)
        total += RETRIEVE_FIXED_BYTES + wire_size(sub) + RETRIEVE_HIT_BYTES * top_k
    return total


def fit_state(state: dict[str, Any], budget: int = STATE_BUDGET_BYTES) -> list[str]:
    """Trim ``state`` (a SearchState's wire dict, changed in place) until :func:`wire_size` is
    at most ``budget``, in the module's order; return one line per step applied (empty when
    it already fitted), also appended to the state's ``retrievalReport.trimmed``.

    The state may still be over ``budget`` when every step is spent (the caller decides what
    to do: the step's output then fails as it would have).
    """
    size = wire_size(state)
    if size <= budget:
        return []
    notes: list[str] = []
    # the steps leave room for the notes they write (every step's note in every report)
    target = budget - NOTE_BYTES * len(_STEPS) * max(1, sum(1 for _ in _reports(state)))
    for name, step in _STEPS:
        before = size
        what = step(state, target)
        if what is None:
            continue
        size = wire_size(state)
        notes.append(f"{name}: {what} ({before:,} -> {size:,} bytes, budget {budget:,})")
        if size <= target:
            break
    for report in _reports(state):
        report.setdefault("trimmed", []).extend(notes)
    return notes


# ----- the steps ---------------------------------------------------------------------------

Step = Callable[[dict[str, Any], int], str | None]


def _query_texts(state: dict[str, Any], _budget: int) -> str | None:
    cut = 0
    for holder, key in _query_holders(state):
        value = holder.get(key)
        if isinstance(value, str) and len(value) > QUERY_CHARS:
            holder[key] = _shorten(value, QUERY_CHARS)
            cut += 1
        elif isinstance(value, list):
            for i, text in enumerate(value):
                if isinstance(text, str) and len(text) > QUERY_CHARS:
                    value[i] = _shorten(text, QUERY_CHARS)
                    cut += 1
    return f"{cut} debug query text(s) cut to {QUERY_CHARS} characters" if cut else None


def _snippets(state: dict[str, Any], _budget: int) -> str | None:
    cut = 0
    for ev in _evidence(state):
        text = ev.get("text")
        if isinstance(text, str) and len(text) > SNIPPET_CHARS_TRIMMED:
            ev["text"] = _shorten(text, SNIPPET_CHARS_TRIMMED)
            cut += 1
    return f"{cut} evidence snippet(s) cut to {SNIPPET_CHARS_TRIMMED} characters" if cut else None


def _hits(state: dict[str, Any], budget: int) -> str | None:
    lists = [r for r in _retrieved(state) if r.get("hits")]
    if not lists:
        return None
    applied = None
    for rank in HIT_RANKS:
        dropped = 0
        for r in lists:
            kept = [h for h in r["hits"] if h.get("rank", 0) <= rank]
            dropped += len(r["hits"]) - len(kept)
            r["hits"] = kept
        if dropped:
            applied = rank
        if wire_size(state) <= budget:
            break
    return None if applied is None else f"source hits of rank > {applied} dropped"


def _candidates(state: dict[str, Any], budget: int) -> str | None:
    response = state.get("response")
    cands = response.get("candidates") if isinstance(response, dict) else None
    if not cands or len(cands) < 2:
        return None
    over = wire_size(state) - budget
    before = len(cands)
    while over > 0 and len(cands) > 1:
        over -= wire_size(cands.pop()) + 2  # the item and its ", "
    return (
        f"the {before - len(cands)} lowest-ranked candidate(s) dropped ({before} -> {len(cands)})"
    )


_STEPS: tuple[tuple[str, Step], ...] = (
    ("query texts", _query_texts),
    ("evidence snippets", _snippets),
    ("lowest-ranked hits", _hits),
    ("lowest-ranked candidates", _candidates),
)


# ----- where things are in the wire form --------------------------------------------------


def _each(value: Any, path: str) -> Iterator[dict[str, Any]]:
    """The dicts at ``path`` (dot-separated keys; ``*`` = every item of a list)."""
    if not path:
        if isinstance(value, dict):
            yield value
        return
    head, _, rest = path.partition(".")
    if head == "*":
        for item in value if isinstance(value, list) else []:
            yield from _each(item, rest)
    elif isinstance(value, dict) and head in value:
        yield from _each(value[head], rest)


_EVIDENCE = ("executor.pool.*", "response.evidencePack.evidence.*")
_RETRIEVED = ("executor.retrieved.*", "round.results.*")
_ROUNDS = (
    "executor.report.rounds.*",
    "round.report",
    "response.retrievalReport.rounds.*",
)
_REPORTS = ("executor.report", "response.retrievalReport")


def _evidence(state: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for path in _EVIDENCE:
        yield from _each(state, path)


def _retrieved(state: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for path in _RETRIEVED:
        yield from _each(state, path)


def _reports(state: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for path in _REPORTS:
        yield from _each(state, path)


def _query_holders(state: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str]]:
    """(dict, key) of every query text kept only as debug detail (never a query a later step
    asks: the plans and sub-queries are left alone)."""
    for ev in _evidence(state):
        yield ev, "queries"
        for hit in _each(ev, "provenance.hits.*"):
            yield hit, "query"
    for cand in _each(state, "response.candidates.*"):
        for hit in _each(cand, "provenance.hits.*"):
            yield hit, "query"
    for r in _retrieved(state):
        yield r, "query"
    for path in _ROUNDS:
        for rnd in _each(state, path):
            for q in _each(rnd, "queries.*"):
                yield q, "text"


def _shorten(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _top_ks(value: Any) -> Iterator[int]:
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "topK" and isinstance(v, int):
                yield v
            else:
                yield from _top_ks(v)
    elif isinstance(value, list):
        for item in value:
            yield from _top_ks(item)


__all__ = [
    "STATE_BUDGET_BYTES",
    "STATE_LIMIT_BYTES",
    "fit_state",
    "map_reserve",
    "wire_size",
]
