"""Rank fusion (RRF, weighted sum of min-max scores, DBSF) against hand-computed examples.

Every expected value below is worked out by hand in the comments (ARCHITECTURE.md,
"Contracts"):

* RRF: ``fused(d) = sum_l w_l / (k + rank_l(d))``, rank from 1, ``score = fused / (sum w / (k+1))``
  over the non-empty lists.
* Weighted sum: ``fused(d) = sum_l w_l * minmax_l(d)``, ``score = fused / sum w``.
* DBSF: ``(s - (mu - 3 sigma)) / (6 sigma)`` clipped to [0, 1] (population sigma), i.e.
  ``0.5 + z / 6``; ``score = fused / sum w``.

Ties: best rank reached in any list, then id.
"""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentic_search.logic.fusion import (
    DEFAULT_RRF_K,
    dbsf,
    dbsf_normalize,
    fuse,
    minmax,
    no_fusion,
    rrf,
    weighted_sum,
)
from agentic_search.wire import Fused, RankedList


def _ids(out: list[Fused]) -> list[str]:
    return [f.id for f in out]


def _by_id(out: list[Fused]) -> dict[str, Fused]:
    return {f.id: f for f in out}


# ----- RankedList validation -------------------------------------------------------------------


def test_ranked_list_rejects_duplicate_ids() -> None:
    """GIVEN ids with a repeat WHEN a RankedList is built THEN ValueError names the list."""
    with pytest.raises(ValueError, match=r"'dense' has duplicate ids"):
        RankedList("dense", ["a", "b", "a"])


def test_ranked_list_rejects_mismatched_scores() -> None:
    """GIVEN 3 ids and 2 scores WHEN a RankedList is built THEN ValueError gives both counts."""
    with pytest.raises(ValueError, match=r"3 ids but 2 scores"):
        RankedList("dense", ["a", "b", "c"], [0.9, 0.8])


@pytest.mark.parametrize("weight", [0.0, -1.0])
def test_ranked_list_rejects_non_positive_weight(weight: float) -> None:
    """GIVEN a weight <= 0 WHEN a RankedList is built THEN ValueError."""
    with pytest.raises(ValueError, match="weight must be > 0"):
        RankedList("dense", ["a"], weight=weight)


def test_ranked_list_accepts_rank_only_and_empty_lists() -> None:
    """GIVEN no scores, or no ids at all WHEN built THEN both are valid (rank-only / empty)."""
    assert RankedList("kw", ["a", "b"]).scores == ()
    assert list(RankedList("empty", []).ids) == []


# ----- RRF -------------------------------------------------------------------------------------


def test_rrf_default_k_is_60() -> None:
    """GIVEN the module constant THEN it is the k of Cormack et al. (60)."""
    assert DEFAULT_RRF_K == 60


def test_rrf_two_overlapping_lists() -> None:
    """GIVEN A=[a,b,c], B=[b,d,a], k=60 WHEN fused with RRF THEN the hand-computed sums.

    a = 1/61 + 1/63 = 0.0322664...
    b = 1/62 + 1/61 = 0.0325224...   (largest: rank 2 and rank 1)
    c = 1/63        = 0.0158730...
    d = 1/62        = 0.0161290...
    order: b > a > d > c. scale = 2 / 61, so score(b) = (1/62 + 1/61) * 61 / 2 = 0.991935...
    """
    out = rrf([RankedList("A", ["a", "b", "c"]), RankedList("B", ["b", "d", "a"])])
    assert _ids(out) == ["b", "a", "d", "c"]
    got = _by_id(out)
    assert got["a"].fused == pytest.approx(1 / 61 + 1 / 63)
    assert got["b"].fused == pytest.approx(1 / 62 + 1 / 61)
    assert got["c"].fused == pytest.approx(1 / 63)
    assert got["d"].fused == pytest.approx(1 / 62)
    assert got["b"].score == pytest.approx((1 / 62 + 1 / 61) * 61 / 2)
    assert got["b"].score == pytest.approx(0.9919354838709677)
    assert got["c"].score == pytest.approx((1 / 63) * 61 / 2)
    # contributions: per-list terms; best_rank: min rank over lists.
    assert got["a"].contributions == pytest.approx({"A": 1 / 61, "B": 1 / 63})
    assert got["d"].contributions == pytest.approx({"B": 1 / 62})
    assert (got["a"].best_rank, got["b"].best_rank, got["c"].best_rank) == (1, 1, 3)
    assert got["d"].best_rank == 2


def test_rrf_three_lists() -> None:
    """GIVEN A=[a,b,c], B=[c,a], C=[a], k=60 WHEN fused THEN a > c > b.

    a = 1/61 + 1/62 + 1/61 = 0.0489156...
    b = 1/62               = 0.0161290...
    c = 1/63 + 1/61        = 0.0322664...
    scale = 3 / 61, score(a) = (2/61 + 1/62) * 61 / 3 = (2 + 61/62) / 3 = 0.994623...
    """
    out = rrf(
        [RankedList("A", ["a", "b", "c"]), RankedList("B", ["c", "a"]), RankedList("C", ["a"])]
    )
    assert _ids(out) == ["a", "c", "b"]
    got = _by_id(out)
    assert got["a"].fused == pytest.approx(2 / 61 + 1 / 62)
    assert got["c"].fused == pytest.approx(1 / 63 + 1 / 61)
    assert got["b"].fused == pytest.approx(1 / 62)
    assert got["a"].score == pytest.approx((2 + 61 / 62) / 3)
    assert set(got["a"].contributions) == {"A", "B", "C"}


def test_rrf_exact_tie_is_broken_by_id() -> None:
    """GIVEN A=[a,b], B=[b,c], C=[c,a] (a cyclic design) WHEN fused THEN every doc scores
    1/61 + 1/62 and has best rank 1, so the id decides: a, b, c."""
    out = rrf(
        [RankedList("A", ["a", "b"]), RankedList("B", ["b", "c"]), RankedList("C", ["c", "a"])]
    )
    assert [f.fused for f in out] == pytest.approx([1 / 61 + 1 / 62] * 3)
    assert [f.best_rank for f in out] == [1, 1, 1]
    assert _ids(out) == ["a", "b", "c"]
    # Feeding the lists in another order does not change the result.
    again = rrf(
        [RankedList("C", ["c", "a"]), RankedList("B", ["b", "c"]), RankedList("A", ["a", "b"])]
    )
    assert _ids(again) == ["a", "b", "c"]


def test_rrf_tie_is_broken_by_best_rank_before_id() -> None:
    """GIVEN k=1, A=[x, f1, a], B=[y, g1, a], C=[z] WHEN fused THEN z and a tie on 1/2.

    k = 1: z = 1/(1+1) = 1/2, a = 1/(1+3) + 1/(1+3) = 1/4 + 1/4 = 1/2 (exact in binary).
    z's best rank is 1, a's is 3, so z precedes a although "a" < "z".
    """
    out = rrf(
        [
            RankedList("A", ["x", "f1", "a"]),
            RankedList("B", ["y", "g1", "a"]),
            RankedList("C", ["z"]),
        ],
        k=1,
    )
    got = _by_id(out)
    assert got["a"].fused == got["z"].fused == 0.5
    assert (got["z"].best_rank, got["a"].best_rank) == (1, 3)
    order = _ids(out)
    assert order.index("z") < order.index("a")
    # x, y and z all score 1/2 at best rank 1: the id decides among them, then a.
    assert order[:4] == ["x", "y", "z", "a"]


def test_rrf_tie_with_k60_best_rank_decides() -> None:
    """GIVEN p at ranks 3 and 24, q at ranks 12 and 12 (k=60) WHEN fused THEN they tie:

    1/63 + 1/84 = (4 + 3) / 252 = 1/36 and 1/72 + 1/72 = 1/36.
    p's best rank is 3 < 12, so p ("zp") precedes q ("aq") despite the ids.
    """
    a_ids = [f"a{i}" for i in range(1, 3)] + ["zp"] + [f"a{i}" for i in range(4, 12)] + ["aq"]
    b_ids = [f"b{i}" for i in range(1, 12)] + ["aq"] + [f"b{i}" for i in range(13, 24)] + ["zp"]
    assert a_ids.index("zp") + 1 == 3 and a_ids.index("aq") + 1 == 12
    assert b_ids.index("aq") + 1 == 12 and b_ids.index("zp") + 1 == 24
    got = _by_id(rrf([RankedList("A", a_ids), RankedList("B", b_ids)]))
    assert got["zp"].fused == pytest.approx(1 / 36)
    assert got["aq"].fused == pytest.approx(1 / 36)
    order = _ids(rrf([RankedList("A", a_ids), RankedList("B", b_ids)]))
    assert order.index("zp") < order.index("aq")


def test_rrf_mathematical_tie_with_three_lists_uses_documented_tie_break() -> None:
    """GIVEN doc "b" at ranks (1, 2, 7) and doc "a" at ranks (7, 1, 2) in lists A, B, C
    WHEN fused with RRF (k=60)
    THEN both score exactly 1/61 + 1/62 + 1/67 and have best rank 1, so the documented
    tie-break (best rank, then id) puts "a" before "b".
    """
    lst_a = RankedList("A", ["b", "a1", "a2", "a3", "a4", "a5", "a"])  # b: 1, a: 7
    lst_b = RankedList("B", ["a", "b"])  # a: 1, b: 2
    lst_c = RankedList("C", ["c1", "a", "c3", "c4", "c5", "c6", "b"])  # a: 2, b: 7
    out = rrf([lst_a, lst_b, lst_c])
    got = _by_id(out)
    assert got["a"].best_rank == got["b"].best_rank == 1
    order = _ids(out)
    assert order.index("a") < order.index("b")


def test_rrf_single_list_keeps_order_and_scales_top_to_one() -> None:
    """GIVEN one list [a, b, c] WHEN fused THEN fused = 1/61, 1/62, 1/63 and score = 61/(60+r)."""
    out = rrf([RankedList("only", ["a", "b", "c"])])
    assert _ids(out) == ["a", "b", "c"]
    assert [f.fused for f in out] == pytest.approx([1 / 61, 1 / 62, 1 / 63])
    assert [f.score for f in out] == pytest.approx([1.0, 61 / 62, 61 / 63])
    assert [f.best_rank for f in out] == [1, 2, 3]


def test_rrf_empty_inputs() -> None:
    """GIVEN no lists, or only empty lists WHEN fused THEN nothing, and no division by zero."""
    assert rrf([]) == []
    assert rrf([RankedList("A", []), RankedList("B", [], weight=3.0)]) == []


def test_rrf_empty_list_does_not_dilute_the_scale() -> None:
    """GIVEN an empty list of weight 5 and B=[a] WHEN fused THEN scale = 1/61 (B only), so
    a, ranked first in every non-empty list, scores exactly 1.0."""
    out = rrf([RankedList("A", [], weight=5.0), RankedList("B", ["a"])])
    assert _ids(out) == ["a"]
    assert out[0].score == pytest.approx(1.0)


def test_rrf_weights() -> None:
    """GIVEN A=[a,b] with weight 2 and B=[b,a] with weight 1 (k=60) WHEN fused THEN

    a = 2/61 + 1/62 = 0.0489156..., b = 2/62 + 1/61 = 0.0486511...; a - b = 1/61 - 1/62 > 0.
    scale = (2 + 1) / 61, score(a) = (2/61 + 1/62) * 61 / 3 = (2 + 61/62) / 3.
    Without weights the two tie (both 1/61 + 1/62) and the id would decide the same way, so
    also check the reverse weighting flips the order.
    """
    out = rrf([RankedList("A", ["a", "b"], weight=2.0), RankedList("B", ["b", "a"])])
    assert _ids(out) == ["a", "b"]
    got = _by_id(out)
    assert got["a"].fused == pytest.approx(2 / 61 + 1 / 62)
    assert got["b"].fused == pytest.approx(2 / 62 + 1 / 61)
    assert got["a"].score == pytest.approx((2 + 61 / 62) / 3)
    assert got["a"].contributions == pytest.approx({"A": 2 / 61, "B": 1 / 62})
    flipped = rrf([RankedList("A", ["a", "b"]), RankedList("B", ["b", "a"], weight=2.0)])
    assert _ids(flipped) == ["b", "a"]


def test_rrf_with_small_k() -> None:
    """GIVEN k=1, A=[a,b,c], B=[c,b] WHEN fused THEN

    a = 1/2 = 0.5, b = 1/3 + 1/3 = 0.6667, c = 1/4 + 1/2 = 0.75: order c, b, a.
    scale = 2 / (1 + 1) = 1, so score == fused.
    With k=60 the order is the same but the values differ: a = 1/61 = 0.016393,
    b = 2/62 = 0.032258, c = 1/63 + 1/61 = 0.032266 (c only just ahead of b).
    """
    lists = [RankedList("A", ["a", "b", "c"]), RankedList("B", ["c", "b"])]
    out = rrf(lists, k=1)
    assert _ids(out) == ["c", "b", "a"]
    assert [f.fused for f in out] == pytest.approx([0.75, 2 / 3, 0.5])
    assert [f.score for f in out] == pytest.approx([0.75, 2 / 3, 0.5])
    assert [f.fused for f in rrf(lists)] == pytest.approx([1 / 63 + 1 / 61, 2 / 62, 1 / 61])


def test_rrf_large_k_flattens_rank_differences() -> None:
    """GIVEN k=1000, A=[a, b] WHEN fused THEN score(b) = 1001/1002, close to 1."""
    out = rrf([RankedList("A", ["a", "b"])], k=1000)
    assert [f.score for f in out] == pytest.approx([1.0, 1001 / 1002])


@pytest.mark.parametrize("k", [0, -5])
def test_rrf_rejects_k_below_one(k: int) -> None:
    """GIVEN k < 1 WHEN fused THEN ValueError."""
    with pytest.raises(ValueError, match="k must be >= 1"):
        rrf([RankedList("A", ["a"])], k=k)


def test_rrf_ignores_scores() -> None:
    """GIVEN a list with scores [0.1, 99] (not sorted) WHEN fused THEN only ranks count."""
    out = rrf([RankedList("A", ["a", "b"], [0.1, 99.0])])
    assert _ids(out) == ["a", "b"]
    assert out[0].fused == pytest.approx(1 / 61)


# ----- min-max and weighted sum ----------------------------------------------------------------


def test_minmax_hand_computed() -> None:
    """GIVEN [10, 6, 2] THEN (s - 2) / 8 = [1, 0.5, 0]; negative scores work the same way."""
    assert minmax([10.0, 6.0, 2.0]) == pytest.approx([1.0, 0.5, 0.0])
    assert minmax([-1.0, -3.0]) == pytest.approx([1.0, 0.0])
    assert minmax([]) == []


@pytest.mark.parametrize("scores", [[0.7, 0.7, 0.7], [3.0], [0.0, 0.0]])
def test_minmax_all_equal_gives_one(scores: list[float]) -> None:
    """GIVEN all-equal scores (or a single one) THEN 1.0 each, no division by zero."""
    assert minmax(scores) == [1.0] * len(scores)


def test_weighted_sum_two_lists_with_tie() -> None:
    """GIVEN A=[a,b,c] scores [10,6,2] and B=[c,a] scores [0.9,0.3], equal weights

    minmax(A) = [1, 0.5, 0], minmax(B) = [1, 0]:
    a = 1 + 0 = 1.0, b = 0.5, c = 0 + 1 = 1.0.
    a and c tie at 1.0, both with best rank 1 (a in A, c in B): the id decides, a first.
    scale = 2: score = [0.5, 0.5, 0.25].
    """
    out = weighted_sum(
        [
            RankedList("A", ["a", "b", "c"], [10.0, 6.0, 2.0]),
            RankedList("B", ["c", "a"], [0.9, 0.3]),
        ]
    )
    assert _ids(out) == ["a", "c", "b"]
    assert [f.fused for f in out] == pytest.approx([1.0, 1.0, 0.5])
    assert [f.score for f in out] == pytest.approx([0.5, 0.5, 0.25])
    assert _by_id(out)["a"].contributions == pytest.approx({"A": 1.0, "B": 0.0})


def test_weighted_sum_weights() -> None:
    """GIVEN the same lists with weights A=3, B=1

    a = 3*1 + 1*0 = 3, b = 3*0.5 = 1.5, c = 3*0 + 1*1 = 1: order a, b, c.
    scale = 4: score = [0.75, 0.375, 0.25].
    """
    out = weighted_sum(
        [
            RankedList("A", ["a", "b", "c"], [10.0, 6.0, 2.0], weight=3.0),
            RankedList("B", ["c", "a"], [0.9, 0.3]),
        ]
    )
    assert _ids(out) == ["a", "b", "c"]
    assert [f.fused for f in out] == pytest.approx([3.0, 1.5, 1.0])
    assert [f.score for f in out] == pytest.approx([0.75, 0.375, 0.25])


def test_weighted_sum_three_lists() -> None:
    """GIVEN A=[a,b] [2,1], B=[b,c] [5,3], C=[c,a,b] [0.3,0.2,0.1], equal weights

    minmax: A -> a 1, b 0; B -> b 1, c 0; C -> c 1, a 0.5, b 0.
    a = 1 + 0.5 = 1.5, b = 0 + 1 + 0 = 1, c = 0 + 1 = 1.
    b and c tie at 1 with best rank 1 (b in B, c in C): id -> b, c. scale 3.
    """
    out = weighted_sum(
        [
            RankedList("A", ["a", "b"], [2.0, 1.0]),
            RankedList("B", ["b", "c"], [5.0, 3.0]),
            RankedList("C", ["c", "a", "b"], [0.3, 0.2, 0.1]),
        ]
    )
    assert _ids(out) == ["a", "b", "c"]
    assert [f.fused for f in out] == pytest.approx([1.5, 1.0, 1.0])
    assert [f.score for f in out] == pytest.approx([0.5, 1 / 3, 1 / 3])


def test_weighted_sum_all_equal_scores() -> None:
    """GIVEN one list whose scores are all 0.42 WHEN fused THEN each gets 1.0 (not NaN) and
    the tie is broken by rank: the input order is kept."""
    out = weighted_sum([RankedList("A", ["c", "a", "b"], [0.42, 0.42, 0.42])])
    assert _ids(out) == ["c", "a", "b"]
    assert all(f.fused == 1.0 and f.score == 1.0 for f in out)
    assert all(not math.isnan(f.score) for f in out)


def test_weighted_sum_single_list_and_empty() -> None:
    """GIVEN one list [a,b,c] with [4,3,0] THEN minmax [1, 0.75, 0]; empty input -> []."""
    out = weighted_sum([RankedList("A", ["a", "b", "c"], [4.0, 3.0, 0.0])])
    assert [f.score for f in out] == pytest.approx([1.0, 0.75, 0.0])
    assert weighted_sum([]) == []
    assert weighted_sum([RankedList("A", [])]) == []


def test_weighted_sum_requires_scores() -> None:
    """GIVEN a non-empty rank-only list WHEN weighted_sum THEN ValueError names the list."""
    with pytest.raises(ValueError, match="'kw' has none"):
        weighted_sum([RankedList("kw", ["a"])])


# ----- DBSF ------------------------------------------------------------------------------------


def qdrant_distr_norm(scores: list[float]) -> list[float]:
    """A line-by-line transcription of Qdrant's ``distr_norm`` (lib/segment/src/common/
    score_fusion.rs): Welford's one-pass mean and sample variance, extremes mean -/+ 3 std,
    ``norm`` to (s - min) / (max - min), 0.5 when min == max or for a single point."""
    if len(scores) < 2:
        return [0.5] * len(scores)
    mean, aggregate = 0.0, 0.0
    for k, s in enumerate(scores, start=1):
        old_delta = s - mean
        mean += old_delta / k
        aggregate += old_delta * (s - mean)
    std = math.sqrt(aggregate / (len(scores) - 1))
    lo, hi = mean - 3 * std, mean + 3 * std
    if lo == hi:
        return [0.5] * len(scores)
    return [(s - lo) / (hi - lo) for s in scores]


def test_dbsf_normalize_hand_computed() -> None:
    """GIVEN [1, 2, 3] THEN mu = 2, sample sigma = sqrt(2/2) = 1, lo = -1, 6 sigma = 6:
    (s + 1) / 6 = [1/3, 1/2, 2/3] (the population sigma would give 0.2959 / 0.7041)."""
    got = dbsf_normalize([1.0, 2.0, 3.0])
    assert got == pytest.approx([1 / 3, 0.5, 2 / 3])


def test_dbsf_normalize_does_not_clip_outliers() -> None:
    """GIVEN ten 0s and one 100 THEN mu = 100/11, sample sigma = sqrt(100^2*10/11/10) =
    100/sqrt(11) = 30.15; z(100) = (100 - 9.0909)/30.15 = 3.015 > 3, so its value is
    0.5 + 3.015/6 = 1.0025: above 1, as in Qdrant (no clipping)."""
    got = dbsf_normalize([0.0] * 10 + [100.0])
    sigma = 100 / math.sqrt(11)
    assert got[-1] == pytest.approx(0.5 + (100 - 100 / 11) / (6 * sigma))
    assert got[-1] > 1.0
    assert got[0] == pytest.approx(0.5 - (100 / 11) / (6 * sigma))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False),
        min_size=0,
        max_size=60,
    )
)
@example([0.0, 4.295971086880885e-11])  # distinct below 1e-9: not 0.5 each (CI found it)
@example([1000.0, 1000.0 + 2.5e-10, 1000.0 - 1e-10])
def test_dbsf_normalize_equals_qdrant_transcription(scores: list[float]) -> None:
    """GIVEN any list of scores THEN the values equal the transcription of Qdrant's formula
    (to 1e-9), so the order of every fused list is Qdrant's. Where the sample sigma is at most
    1e-12 (dbsf_normalize's guard against dividing by ~0) they are 0.5 each. Where sigma is
    below 1e-4 of the scores' magnitude, the two ways of computing the mean (Qdrant's running
    one, our two-pass one) differ in their last digits by more than sigma can absorb: there
    the values are finite and keep the scores' order (which is what fusion reads)."""
    got = dbsf_normalize(scores)
    want = qdrant_distr_norm(scores)
    n = len(scores)
    mu = sum(scores) / n if n else 0.0
    sigma = math.sqrt(sum((s - mu) ** 2 for s in scores) / (n - 1)) if n > 1 else 0.0
    scale = max([1.0, *(abs(s) for s in scores)])
    if sigma <= 1e-12:
        assert got == [0.5] * n
    elif sigma <= 1e-4 * scale:
        assert all(math.isfinite(v) for v in got)
        ranked = sorted(range(n), key=lambda i: scores[i])
        assert all(got[a] <= got[b] for a, b in itertools.pairwise(ranked))
    else:
        assert got == pytest.approx(want, abs=1e-9, rel=1e-9)


@pytest.mark.parametrize("scores", [[5.0, 5.0], [0.3], [-2.0, -2.0, -2.0]])
def test_dbsf_normalize_zero_sigma_gives_half(scores: list[float]) -> None:
    """GIVEN sigma = 0 (or one score) THEN 0.5 each (no division by zero)."""
    assert dbsf_normalize(scores) == [0.5] * len(scores)


def test_dbsf_normalize_empty() -> None:
    """GIVEN no scores THEN no values."""
    assert dbsf_normalize([]) == []


def test_dbsf_two_lists() -> None:
    """GIVEN A=[a,b,c] [3,2,1] and B=[c,d] [10,0], equal weights

    A: mu 2, sample sigma 1 -> (s + 1)/6: a 2/3, b 1/2, c 1/3
    B: mu 5, sample sigma sqrt(50), lo = 5 - 3 sqrt(50) -> c 0.5 + 5/(6 sqrt(50)) = 0.617851,
       d 0.382149
    fused: c = 1/3 + 0.617851 = 0.951184, a = 0.666667, b = 0.5, d = 0.382149; scale 2.
    """
    b_step = 5 / (6 * math.sqrt(50))
    out = dbsf(
        [
            RankedList("A", ["a", "b", "c"], [3.0, 2.0, 1.0]),
            RankedList("B", ["c", "d"], [10.0, 0.0]),
        ]
    )
    assert _ids(out) == ["c", "a", "b", "d"]
    assert [f.fused for f in out] == pytest.approx([1 / 3 + 0.5 + b_step, 2 / 3, 0.5, 0.5 - b_step])
    assert out[0].score == pytest.approx((1 / 3 + 0.5 + b_step) / 2)
    assert out[0].contributions == pytest.approx({"A": 1 / 3, "B": 0.5 + b_step})


def test_dbsf_weights_and_three_lists() -> None:
    """GIVEN A=[a,b] [1,0] w=2, B=[b,a] [1,0] w=1, C=[c] [7] w=1

    A: mu 0.5, sample sigma sqrt(0.5), 6 sigma = 4.242641 -> a 0.5 + 0.5/4.242641 = 0.617851,
    b 0.382149; B likewise b 0.617851, a 0.382149. C: one score -> c 0.5.
    a = 2*0.617851 + 0.382149 = 1.617851, b = 2*0.382149 + 0.617851 = 1.382149, c = 0.5.
    """
    step = 0.5 / (6 * math.sqrt(0.5))
    out = dbsf(
        [
            RankedList("A", ["a", "b"], [1.0, 0.0], weight=2.0),
            RankedList("B", ["b", "a"], [1.0, 0.0]),
            RankedList("C", ["c"], [7.0]),
        ]
    )
    assert _ids(out) == ["a", "b", "c"]
    want = [2 * (0.5 + step) + 0.5 - step, 2 * (0.5 - step) + 0.5 + step, 0.5]
    assert [f.fused for f in out] == pytest.approx(want)
    assert [f.score for f in out] == pytest.approx([w / 4 for w in want])


def test_dbsf_all_equal_scores_give_half() -> None:
    """GIVEN one list of equal scores WHEN fused THEN fused = score = 0.5, input order kept."""
    out = dbsf([RankedList("A", ["b", "a"], [0.9, 0.9])])
    assert _ids(out) == ["b", "a"]
    assert [(f.fused, f.score) for f in out] == [(0.5, 0.5), (0.5, 0.5)]


def test_dbsf_requires_scores_and_handles_empty() -> None:
    """GIVEN a rank-only list THEN ValueError; GIVEN nothing THEN []."""
    with pytest.raises(ValueError, match="dbsf needs scores"):
        dbsf([RankedList("kw", ["a"])])
    assert dbsf([]) == []
    assert dbsf([RankedList("A", [])]) == []


# ----- no fusion and dispatch ------------------------------------------------------------------


def test_no_fusion_passes_one_list_through() -> None:
    """GIVEN one scored list [4, 2, 0] THEN minmax [1, 0.5, 0]; rank-only -> 1/r; an extra
    empty list is ignored."""
    out = no_fusion([RankedList("A", ["a", "b", "c"], [4.0, 2.0, 0.0]), RankedList("E", [])])
    assert _ids(out) == ["a", "b", "c"]
    assert [f.score for f in out] == pytest.approx([1.0, 0.5, 0.0])
    ranks = no_fusion([RankedList("kw", ["x", "y", "z"])])
    assert [f.score for f in ranks] == pytest.approx([1.0, 1 / 2, 1 / 3])
    assert [f.best_rank for f in ranks] == [1, 2, 3]
    assert no_fusion([]) == []


def test_no_fusion_rejects_two_lists() -> None:
    """GIVEN two non-empty lists WHEN fused with 'none' THEN ValueError."""
    with pytest.raises(ValueError, match="single list"):
        no_fusion([RankedList("A", ["a"]), RankedList("B", ["b"])])


def _as_tuples(out: list[Fused]) -> list[tuple[str, float, float, int]]:
    return [(f.id, f.fused, f.score, f.best_rank) for f in out]


def test_fuse_dispatches_to_each_method() -> None:
    """GIVEN scored lists WHEN fuse(method) THEN the same result as the named function."""
    lists = [
        RankedList("A", ["a", "b", "c"], [3.0, 2.0, 1.0]),
        RankedList("B", ["c", "d"], [1.0, 0.5]),
    ]
    assert _as_tuples(fuse(lists, "rrf")) == _as_tuples(rrf(lists))
    assert _as_tuples(fuse(lists, "rrf", k=5)) == _as_tuples(rrf(lists, k=5))
    assert _as_tuples(fuse(lists, "rrf", k=5)) != _as_tuples(rrf(lists))
    assert _as_tuples(fuse(lists, "weighted_sum")) == _as_tuples(weighted_sum(lists))
    assert _as_tuples(fuse(lists, "dbsf")) == _as_tuples(dbsf(lists))
    single = [lists[0]]
    assert _as_tuples(fuse(single, "none")) == _as_tuples(no_fusion(single))


@pytest.mark.parametrize("method", ["borda", "RRF", "", "combsum"])
def test_fuse_rejects_unknown_method(method: str) -> None:
    """GIVEN an unknown method name WHEN fuse THEN ValueError quoting it."""
    with pytest.raises(ValueError, match="unknown fusion method"):
        fuse([RankedList("A", ["a"])], method)


# ----- properties ------------------------------------------------------------------------------

_ALPHABET = [f"d{i}" for i in range(12)]

_ranked_lists = st.lists(
    st.tuples(
        st.lists(st.sampled_from(_ALPHABET), unique=True, max_size=len(_ALPHABET)),
        st.floats(min_value=0.1, max_value=5.0, allow_nan=False, allow_infinity=False),
    ),
    max_size=5,
).map(lambda specs: [RankedList(f"L{i}", ids, weight=w) for i, (ids, w) in enumerate(specs)])


@settings(max_examples=200, deadline=None)
@given(lists=_ranked_lists, k=st.integers(min_value=1, max_value=200))
def test_rrf_properties(lists: list[RankedList], k: int) -> None:
    """GIVEN random ranked lists with overlapping ids, random weights and k
    WHEN fused with RRF
    THEN no id is repeated, every input id appears exactly once, scores lie in [0, 1], the
    output is sorted by fused value (non-increasing), and a document ranked first in every
    non-empty list scores 1.0.
    """
    out = rrf(lists, k=k)
    ids = _ids(out)
    assert len(ids) == len(set(ids))
    assert set(ids) == {d for lst in lists for d in lst.ids}
    assert all(0.0 <= f.score <= 1.0 for f in out)
    fused = [f.fused for f in out]
    assert all(a >= b for a, b in itertools.pairwise(fused))
    for f in out:
        expected = sum(
            lst.weight / (k + list(lst.ids).index(f.id) + 1) for lst in lists if f.id in lst.ids
        )
        assert f.fused == pytest.approx(expected)
    non_empty = [lst for lst in lists if lst.ids]
    if non_empty and len({lst.ids[0] for lst in non_empty}) == 1:
        assert out[0].score == pytest.approx(1.0)
