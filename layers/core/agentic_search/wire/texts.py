"""Each long text once in the search state's wire form.

A long query (up to ``QUERY_MAX_CHARS``) is repeated all over the state: the request, the
intent (and the executor's copy of it), every plan's dense and keyword texts, every retrieved
list, every round report's queries, every evidence's ``queries`` and provenance. At 4,000
characters, limit 100 and 5 rounds those copies add up to more than Step Functions' 256 KB
state limit, and the state guard (:mod:`agentic_search.wire.budget`) had to drop source hits.

On the wire, :func:`intern_texts` keeps each text of :data:`MIN_CHARS`+ characters that occurs
more than once in one list, ``texts``, at the top of the state, and writes ``"$texts[i]"`` (a
JSONPath into the state) where it occurred; :func:`expand_texts` puts the texts back before
the state is parsed, so every step sees the strings it always saw (ranking cannot change). A
string that already looks like a reference is always put in the table, so expansion is
exact. Left as it is: ``response`` (the execution's output, which the API returns). The Map
hands each Retrieve its sub-query and the state's ``texts`` (the ASL's ``ItemSelector``), and
``RetrieveEvent`` expands them the same way.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

#: Texts shorter than this stay where they are (a short query reads as it always did).
MIN_CHARS = 120
#: The state's key that holds the table.
TEXTS_KEY = "texts"
#: Keys (dot paths from the state's top) left as they are.
KEEP = frozenset({"response"})
_REF = re.compile(r"^\$texts\[(\d+)\]$")


def intern_texts(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` (a SearchState's wire dict) with each long text that occurs twice or more
    (outside :data:`KEEP`) replaced by ``"$texts[i]"``, the texts listed once under
    ``texts`` (an empty list when there is none: the Map's ``ItemSelector`` reads it). Not
    changed in place."""
    counts = Counter(s for s in _strings(state, "") if len(s) >= MIN_CHARS or _REF.match(s))
    table = [s for s, n in counts.items() if n >= 2 or _REF.match(s)]
    if not table:
        return {**state, TEXTS_KEY: []}
    index = {s: i for i, s in enumerate(table)}
    out = _replace(state, "", lambda s: f"$texts[{index[s]}]" if s in index else s)
    out[TEXTS_KEY] = table
    return out


def expand_texts(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` with every ``"$texts[i]"`` replaced by ``texts[i]`` and ``texts`` removed
    (the inverse of :func:`intern_texts`); ``state`` itself when it has no ``texts``; a Map
    item (``RetrieveEvent``) is expanded with the texts the ItemSelector gave it.

    Raises:
        ValueError: for a reference past the end of ``texts``.
    """
    table = state.get(TEXTS_KEY)
    if not isinstance(table, list):
        return state
    if not table:
        return {k: v for k, v in state.items() if k != TEXTS_KEY}

    def back(s: str) -> str:
        m = _REF.match(s)
        if m is None:
            return s
        i = int(m.group(1))
        if i >= len(table):
            raise ValueError(f"state text reference {s} past the {len(table)} texts")
        return table[i]

    out = _replace({k: v for k, v in state.items() if k != TEXTS_KEY}, "", back)
    return out


def _strings(value: Any, path: str) -> Iterator[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            p = f"{path}.{k}" if path else k
            if p not in KEEP:
                yield from _strings(v, p)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, path)
    elif isinstance(value, str):
        yield value


def _replace(value: Any, path: str, fn: Any) -> Any:
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            p = f"{path}.{k}" if path else k
            out[k] = v if p in KEEP else _replace(v, p, fn)
        return out
    if isinstance(value, list):
        return [_replace(v, path, fn) for v in value]
    if isinstance(value, str):
        return fn(value)
    return value


__all__ = ["MIN_CHARS", "TEXTS_KEY", "expand_texts", "intern_texts"]
