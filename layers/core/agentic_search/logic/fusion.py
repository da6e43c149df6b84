"""Rank fusion: RRF, weighted sum of min-max normalized scores, and DBSF.

Pure functions over ranked lists; no I/O. Definitions (ARCHITECTURE.md, "Contracts"):

* **RRF** (Cormack, Clarke, Buettcher, "Reciprocal Rank Fusion outperforms Condorcet and
  individual rank learning methods", SIGIR 2009): ``score(d) = sum_l w_l / (k + rank_l(d))``,
  rank from 1, k = 60 by default, ``w_l = 1`` in the classic form.
* **Weighted sum**: ``score(d) = sum_l w_l * minmax_l(d)`` where ``minmax`` maps a list's
  scores to [0, 1]; a list whose scores are all equal maps every item to 1.0 (no division by
  zero).
* **DBSF** (distribution-based score fusion, exactly as Qdrant defines it: ``distr_norm`` in
  ``lib/segment/src/common/score_fusion.rs``): each list is normalized with
  ``(s - (mu - 3 sigma)) / (6 sigma)`` where sigma is the *sample* standard deviation
  (n - 1 in the denominator), **not clipped** (a score beyond 3 sigma falls outside [0, 1]),
  then the weighted values are summed; a list of one score maps it to 0.5, and a list whose
  scores are all equal maps every item to 0.5.

Documents missing from a list contribute nothing from it. Ties are broken by the best rank the
document reached in any list, then by id, so the output order is deterministic (fused values
are compared rounded to 12 decimals, so float summation order cannot break a true tie).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import count

from agentic_search.wire import Fused, RankedList

DEFAULT_RRF_K = 60


def minmax(scores: Sequence[float], bounds: tuple[float, float] | None = None) -> list[float]:
    """Min-max normalize to [0, 1]; all-equal (or a single score) gives 1.0 for each.
    ``bounds`` (lowest, highest) normalizes against a wider list the scores were taken from
    (a source's list before it was pruned) instead of the scores' own extremes."""
    if not scores:
        return []
    lo, hi = bounds if bounds is not None else (min(scores), max(scores))
    if hi - lo <= 1e-12:
        return [1.0] * len(scores)
    return [(s - lo) / (hi - lo) for s in scores]


def dbsf_normalize(scores: Sequence[float]) -> list[float]:
    """Qdrant's ``distr_norm``: ``(s - (mu - 3 sigma)) / (6 sigma)`` with the sample standard
    deviation, unclipped; one score, or all-equal scores, give 0.5 each; no scores, none."""
    n = len(scores)
    if n < 2:
        return [0.5] * n
    mu = sum(scores) / n
    sigma = math.sqrt(sum((s - mu) ** 2 for s in scores) / (n - 1))
    if sigma <= 1e-12:
        return [0.5] * n
    lo = mu - 3 * sigma
    return [(s - lo) / (6 * sigma) for s in scores]


def _finish(acc: dict[str, list], scale: float) -> list[Fused]:
    """The fused entries of ``acc`` (``_accumulate``'s), best first.

    Fused values are rounded to 12 decimals (stored and compared alike) so that mathematically
    equal sums that differ in the last float bit (summation order) fall to the tie-break. The
    rows are sorted as tuples ``(-fused, best_rank, id)`` before any entry is built: ids are
    unique, so no two rows tie.
    """
    rows = [
        (-round(total, 12), best, doc, total, parts) for doc, (total, parts, best) in acc.items()
    ]
    rows.sort()
    if scale <= 0:
        return [Fused(doc, -neg, 0.0, best, parts) for neg, best, doc, _, parts in rows]
    out: list[Fused] = []
    for neg, best, doc, total, parts in rows:
        s = total / scale  # clamped to [0, 1] as min(1.0, max(0.0, s)) would, without calls
        out.append(Fused(doc, -neg, 1.0 if s > 1.0 else (s if s > 0.0 else 0.0), best, parts))
    return out


#: Decimals a kept entry's contributions are rounded to (:func:`kept_entries`).
CONTRIBUTION_DECIMALS = 6


def kept_entries(fused: Sequence[Fused], n: int) -> list[Fused]:
    """The first ``n`` of ``fused`` to keep across steps, each with its contributions rounded
    to :data:`CONTRIBUTION_DECIMALS` decimals. Contributions only explain and order an entry's
    provenance; its ``fused`` and ``score``, which rank it, are kept exact. The kept list
    crosses every later step in the state (Step Functions' 256 KB limit), where a float's
    17 digits would be most of an entry."""
    return [
        Fused(
            f.id,
            f.fused,
            f.score,
            f.best_rank,
            {k: round(v, CONTRIBUTION_DECIMALS) for k, v in f.contributions.items()},
        )
        for f in fused[:n]
    ]


def _accumulate(lists: Sequence[RankedList], per_item) -> dict[str, list]:
    """doc -> ``[total, contributions, best rank]`` over ``lists``: one dict lookup per item
    (the fused lists of a round are hundreds of ids each); each total is summed in list order.

    Raises:
        ValueError: when ``per_item`` gives a list more or fewer values than it has ids.
    """
    acc: dict[str, list] = {}
    for lst in lists:
        values = per_item(lst)
        if len(values) != len(lst.ids):
            raise ValueError(f"list {lst.name!r}: {len(lst.ids)} ids but {len(values)} values")
        name = lst.name
        for rank, doc, value in zip(count(1), lst.ids, values):
            entry = acc.get(doc)
            if entry is None:
                acc[doc] = [0.0 + value, {name: value}, rank]
            else:
                entry[0] += value
                entry[1][name] = value
                if rank < entry[2]:
                    entry[2] = rank
    return acc


def rrf(lists: Sequence[RankedList], k: int = DEFAULT_RRF_K) -> list[Fused]:
    """Reciprocal Rank Fusion; ``score`` is the fused value over its maximum ``sum w / (k+1)``.

    Raises:
        ValueError: if ``k`` < 1.
    """
    if k < 1:
        raise ValueError("RRF k must be >= 1")
    acc = _accumulate(lists, lambda lst: [lst.weight / (k + r) for r in range(1, len(lst.ids) + 1)])
    scale = sum(lst.weight for lst in lists if lst.ids) / (k + 1)
    return _finish(acc, scale)


def weighted_sum(lists: Sequence[RankedList]) -> list[Fused]:
    """Weighted sum of min-max normalized scores; ``score`` = fused / sum of weights.

    Raises:
        ValueError: if a non-empty list carries no scores.
    """
    for lst in lists:
        if lst.ids and not lst.scores:
            raise ValueError(f"weighted_sum needs scores; list {lst.name!r} has none")
    acc = _accumulate(lists, lambda lst: [lst.weight * s for s in minmax(lst.scores)])
    scale = sum(lst.weight for lst in lists if lst.ids)
    return _finish(acc, scale)


def dbsf(lists: Sequence[RankedList]) -> list[Fused]:
    """Distribution-based score fusion; ``score`` = fused / sum of weights.

    Raises:
        ValueError: if a non-empty list carries no scores.
    """
    for lst in lists:
        if lst.ids and not lst.scores:
            raise ValueError(f"dbsf needs scores; list {lst.name!r} has none")
    acc = _accumulate(lists, lambda lst: [lst.weight * s for s in dbsf_normalize(lst.scores)])
    scale = sum(lst.weight for lst in lists if lst.ids)
    return _finish(acc, scale)


def no_fusion(lists: Sequence[RankedList]) -> list[Fused]:
    """Pass one list through (``score`` = its min-max normalized score, or rank-based).

    Raises:
        ValueError: if more than one non-empty list is given.
    """
    non_empty = [lst for lst in lists if lst.ids]
    if len(non_empty) > 1:
        raise ValueError("fusion 'none' takes a single list")
    if not non_empty:
        return []
    lst = non_empty[0]
    values = minmax(lst.scores) if lst.scores else [1.0 / r for r in range(1, len(lst.ids) + 1)]
    return [
        Fused(id=d, fused=v, score=v, best_rank=r, contributions={lst.name: v})
        for r, (d, v) in enumerate(zip(lst.ids, values, strict=True), start=1)
    ]


def fuse(lists: Sequence[RankedList], method: str, k: int = DEFAULT_RRF_K) -> list[Fused]:
    """Dispatch to ``rrf``, ``weighted_sum``, ``dbsf`` or ``none``.

    Raises:
        ValueError: for an unknown method.
    """
    if method == "rrf":
        return rrf(lists, k)
    if method == "weighted_sum":
        return weighted_sum(lists)
    if method == "dbsf":
        return dbsf(lists)
    if method == "none":
        return no_fusion(lists)
    raise ValueError(f"unknown fusion method {method!r}")
