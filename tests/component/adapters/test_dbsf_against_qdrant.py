"""Our DBSF against Qdrant's own: qdrant-client's ``distribution_based_score_fusion`` (the
local-mode implementation of the server's ``distr_norm``: sample variance, no clipping).

GIVEN random score lists WHEN both fuse them THEN every point's fused score is the same (to
1e-9), hence the same order wherever scores differ (the issue measured the old population-sigma,
clipped version differing in the top-10 order in 129 of 300 random trials).
"""

from __future__ import annotations

import random

import pytest
from qdrant_client import models
from qdrant_client.hybrid.fusion import distribution_based_score_fusion

from agentic_search.logic.fusion import dbsf
from agentic_search.wire import RankedList


def _trial(rng: random.Random) -> list[list[tuple[str, float]]]:
    lists = []
    for _ in range(rng.randint(2, 4)):
        n = rng.randint(1, 40)
        ids = rng.sample([f"d{i}" for i in range(60)], n)
        scale = rng.choice([1.0, 10.0, 0.01])
        scores = sorted((rng.gauss(0.5, 0.3) * scale for _ in ids), reverse=True)
        if rng.random() < 0.2 and n > 2:
            scores[0] *= 8  # an outlier beyond 3 sigma: clipping would change the order
        lists.append(list(zip(ids, scores, strict=True)))
    return lists


@pytest.mark.parametrize("seed", range(300))
def test_dbsf_equals_qdrant_client(seed: int) -> None:
    rng = random.Random(seed)
    lists = _trial(rng)
    ours = dbsf(
        [
            RankedList(f"l{i}", [d for d, _ in lst], [s for _, s in lst])
            for i, lst in enumerate(lists)
        ]
    )
    theirs = distribution_based_score_fusion(
        [[models.ScoredPoint(id=int(d[1:]), version=0, score=s) for d, s in lst] for lst in lists],
        limit=1000,
    )
    want = {f"d{p.id}": p.score for p in theirs}
    got = {f.id: f.fused for f in ours}
    assert got.keys() == want.keys()
    for doc, value in want.items():
        assert got[doc] == pytest.approx(value, abs=1e-9)
    # THEN the top 10 is the same wherever the fused values are not tied
    top = [f.id for f in ours][:10]
    ranked = sorted(want, key=lambda d: -want[d])[:10]
    if len({round(want[d], 9) for d in want}) == len(want):
        assert top == ranked
