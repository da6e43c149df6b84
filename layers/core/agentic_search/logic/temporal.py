"""Temporal ranges in a query ("since 2023", "released in 2024", "in the last 6 months",
"before 2020") as range filters on the schema's date field, pushed down like any other hard
filter (the seed design note's ``temporal_range`` sub-query, done as a filter).

The date field holds a year (the bundled tools' ``released``, the documents' ``year``), so
ranges are in whole years: a range that starts inside a year includes that year ("in the last
6 months" on 2026-11-24 is ``>= 2026``; "in the last 18 months" is ``>= 2025``).

Recognised (case-insensitive; "released", "published", "launched", the schema's own time label
("uploaded"), each optionally followed by "in", and "from" optional):

* ``since 2023``, ``from 2023 on``, ``2023 or later``, ``2023 onwards``, ``released in 2023 or
  later``, ``after 2022`` -> ``>= 2023``;
* ``in 2024``, ``released in 2024`` -> ``>= 2024`` and ``< 2025``;
* ``before 2020``, ``until 2019`` -> ``< 2020`` (``until`` includes 2019: ``< 2020``);
* ``between 2020 and 2022``, ``2020-2022``, ``from 2020 to 2022`` -> ``>= 2020``, ``< 2023``;
* ``in the last 6 months``, ``in the past 2 years``, ``last year``, ``this year``, ``recent``
  is not a range (soft);
* a phrase followed by a possessive dates something else (``last month's meetings``,
  ``this year's conference``): not a range.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

_YEAR = r"(19[5-9]\d|20\d\d)"
#: The verbs a date phrase may open with; a schema's time label ("uploaded") is added.
_VERBS = ("released", "published", "launched", "created", "founded", r"came\s+out", "out")


def _patterns(verbs: tuple[str, ...]) -> list[tuple[re.Pattern[str], str]]:
    """The range patterns, the more specific first, with ``verbs`` as the optional opening
    ("released", "released in")."""
    alt = "|".join(verbs)
    verb = rf"(?:(?:{alt})\s+(?:in\s+)?)?"
    table = [
        (rf"\b{verb}between\s+{_YEAR}\s+and\s+{_YEAR}\b", "between"),
        (rf"\b{verb}from\s+{_YEAR}\s+(?:to|until|through)\s+{_YEAR}\b", "between"),
        (rf"\b{verb}{_YEAR}\s*[-–]\s*{_YEAR}\b", "between"),
        (rf"\b{verb}(?:since|from)\s+{_YEAR}(?:\s+on(?:wards?)?)?\b", "since"),
        (rf"\b{verb}{_YEAR}\s+or\s+(?:later|newer|after)\b", "since"),
        (rf"\b{verb}{_YEAR}\s+(?:on(?:wards?)|and\s+(?:later|newer|after))\b", "since"),
        (rf"\b{verb}after\s+{_YEAR}\b", "after"),
        (rf"\b{verb}(?:before|prior\s+to)\s+{_YEAR}\b", "before"),
        (rf"\b{verb}(?:until|till|up\s+to)\s+{_YEAR}\b", "until"),
        (
            rf"\b{verb}(?:in|from|over|within|during)\s+(?:the\s+)?(?:last|past)\s+"
            rf"(\d{{1,3}})\s+(month|year)s?\b",
            "last",
        ),
        (
            rf"\b{verb}(?:(?:in|from|over|within|during)\s+)?(?:the\s+)?(?:last|past)\s+"
            rf"(month|year)\b",
            "last1",
        ),
        (rf"\b{verb}this\s+year\b", "this"),
        (rf"\b(?:{alt})\s+in\s+{_YEAR}\b", "in"),
        (rf"\bin\s+{_YEAR}\b", "in"),
    ]
    return [(re.compile(p), kind) for p, kind in table]


@lru_cache(maxsize=16)
def _compiled(labels: tuple[str, ...]) -> list[tuple[re.Pattern[str], str]]:
    extra = tuple(re.escape(w).replace(r"\ ", r"\s+") for w in labels if w not in _VERBS)
    return _patterns(_VERBS + extra)


#: A possessive right after a temporal phrase ("last month's meetings", "this year's
#: conference") dates the noun that follows, not the record: no range is read.
_POSSESSIVE = re.compile(r"['’]s\b")


@dataclass(frozen=True)
class YearRange:
    """A half-open range of years ``[start, end)`` (either side may be open) and the phrase
    and character span it was read from."""

    start: int | None
    end: int | None
    phrase: str
    span: tuple[int, int]


def _months_back(today: date, months: int) -> int:
    """The year of the date ``months`` before ``today``."""
    total = today.year * 12 + (today.month - 1) - months
    return total // 12


def year_ranges(query: str, today: date, labels: Sequence[str] = ()) -> list[YearRange]:
    """Every temporal range of ``query`` (normalized, lowercase), non-overlapping, in the
    order of the patterns above (the more specific first); ``labels`` are words that may open
    a phrase beside "released" (the schema's time label: "uploaded in 2024")."""
    q = query.lower()
    taken = [False] * len(q)
    out: list[YearRange] = []
    words = tuple(dict.fromkeys(w.strip().lower() for w in labels if w.strip()))
    for pattern, kind in _compiled(words):
        for m in pattern.finditer(q):
            if any(taken[m.start() : m.end()]) or _POSSESSIVE.match(q, m.end()):
                continue  # "last month's meetings": the time of the meetings, not a release
            g = m.groups()
            start: int | None
            end: int | None
            if kind == "between":
                a, b = sorted((int(g[0]), int(g[1])))
                start, end = a, b + 1
            elif kind == "since":
                start, end = int(g[0]), None
            elif kind == "after":
                start, end = int(g[0]) + 1, None
            elif kind == "before":
                start, end = None, int(g[0])
            elif kind == "until":
                start, end = None, int(g[0]) + 1
            elif kind == "last":
                n, unit = int(g[0]), g[1]
                start, end = _months_back(today, n * (12 if unit == "year" else 1)), None
            elif kind == "last1":
                start, end = _months_back(today, 12 if g[0] == "year" else 1), None
            elif kind == "this":
                start, end = today.year, None
            else:  # "in"
                start, end = int(g[0]), int(g[0]) + 1
            for i in range(m.start(), m.end()):
                taken[i] = True
            out.append(YearRange(start, end, m.group(0).strip(), m.span()))
    return out


__all__ = ["YearRange", "year_ranges"]
