"""The vectorized MMR selection equals the pairwise reference on random inputs (hypothesis).

``_reference_select`` is the pairwise definition ``select_evidence`` had before it was
vectorized (one ``np.dot`` per candidate and pick); vectors here have components in
{-1, -0.5, 0, 0.5, 1} so every dot product is exact in float32 and the two must agree bit for
bit, ties included.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_search.logic.selection import select_evidence
from agentic_search.logic.text import contains_phrase
from agentic_search.wire import Evidence

DOCS = ["d0", "d1", "d2"]
TEXTS = ["", "vector search", "pair programmer", "local code"]
COMPONENTS = [-1.0, -0.5, 0.0, 0.5, 1.0]


def _reference_select(
    candidates: Sequence[Evidence],
    vectors: Mapping[str, np.ndarray],
    *,
    max_docs: int,
    max_tokens: int,
    max_chunks_per_doc: int,
    mmr_lambda: float = 0.7,
    must_phrases: Sequence[str] = (),
    seed_targets: Sequence[Callable[[Evidence], bool]] = (),
    already: Sequence[Evidence] = (),
    fill: bool = True,
) -> list[Evidence]:
    """The pairwise MMR reference (the pre-vectorization select_evidence).

    1. Seeds: for each must-preserve phrase that no pick contains yet, the best candidate that
       contains it as whole words (case-insensitive, title or text: the grader's rule); then
       for each ``seed_targets`` predicate (a missing coverage item) that no pick satisfies
       yet, the best candidate satisfying it.
    2. When ``fill``, MMR fills the rest, against everything picked so far and ``already``
       (evidence chosen in earlier rounds, which also counts towards ``max_chunks_per_doc``
       but not towards the token budget of this selection). Later rounds select with
       ``fill=False``: only evidence that covers something still missing is new evidence.

    A candidate is never picked if it would exceed ``max_tokens`` (sum of ``tokens`` of this
    selection) or give its document more than ``max_chunks_per_doc`` chunks. Candidates without
    a vector get no similarity penalty. Returns copies with ``mmr_score`` set, in pick order.
    """
    if max_docs <= 0 or not candidates:
        return []
    per_doc: Counter[str] = Counter(e.doc_id for e in already)
    chosen_vecs: list[np.ndarray] = [vectors[e.id] for e in already if e.id in vectors]
    picked: list[Evidence] = []
    picked_ids: set[str] = {e.id for e in already}
    used = 0

    def fits(c: Evidence) -> bool:
        return (
            c.id not in picked_ids
            and per_doc[c.doc_id] < max_chunks_per_doc
            and used + c.tokens <= max_tokens
        )

    def mmr(c: Evidence) -> float:
        vec = vectors.get(c.id)
        penalty = 0.0
        if vec is not None and chosen_vecs:
            penalty = max(float(np.dot(vec, v)) for v in chosen_vecs)
        return mmr_lambda * c.relevance - (1.0 - mmr_lambda) * penalty

    def take(c: Evidence) -> None:
        nonlocal used
        picked.append(c.model_copy(update={"mmr_score": round(mmr(c), 6)}))
        picked_ids.add(c.id)
        per_doc[c.doc_id] += 1
        used += c.tokens
        if c.id in vectors:
            chosen_vecs.append(vectors[c.id])

    def has(e: Evidence, phrase: str) -> bool:
        return contains_phrase(f"{e.title or ''} {e.text}", phrase)

    for phrase in must_phrases:
        if any(has(e, phrase) for e in [*already, *picked]):
            continue
        hit = next((c for c in candidates if fits(c) and has(c, phrase)), None)
        if hit is not None and len(picked) < max_docs:
            take(hit)
    for pred in seed_targets:
        if any(pred(e) for e in [*already, *picked]):
            continue
        hit = next((c for c in candidates if fits(c) and pred(c)), None)
        if hit is not None and len(picked) < max_docs:
            take(hit)
    while fill and len(picked) < max_docs:
        best: Evidence | None = None
        best_score = -np.inf
        for c in candidates:
            if not fits(c):
                continue
            score = mmr(c)
            if score > best_score + 1e-12:
                best, best_score = c, score
        if best is None:
            break
        take(best)
    return picked


def _ev(i: int, doc: str, text: str, tokens: int, rel: float) -> Evidence:
    return Evidence(
        id=f"e{i}", doc_id=doc, text=text, tokens=tokens, fused_score=rel, relevance=rel, round=1
    )


EVIDENCE = st.tuples(
    st.integers(0, 15),
    st.sampled_from(DOCS),
    st.sampled_from(TEXTS),
    st.integers(0, 60),
    st.sampled_from([0.0, 0.125, 0.25, 0.5, 0.75, 1.0]) | st.floats(0, 1),
)


@st.composite
def case(draw: Any) -> dict[str, Any]:
    cands = [_ev(*t) for t in draw(st.lists(EVIDENCE, max_size=30))]
    already = [_ev(*t) for t in draw(st.lists(EVIDENCE, max_size=3))]
    dim = draw(st.integers(1, 6))
    ids = draw(st.sets(st.integers(0, 15), max_size=16))
    vectors = {
        f"e{i}": np.array(
            draw(st.lists(st.sampled_from(COMPONENTS), min_size=dim, max_size=dim)),
            dtype=np.float32,
        )
        for i in ids
    }
    seed_docs = draw(st.lists(st.sampled_from(DOCS), max_size=2))
    return {
        "candidates": cands,
        "vectors": vectors,
        "max_docs": draw(st.integers(0, 10)),
        "max_tokens": draw(st.integers(0, 400)),
        "max_chunks_per_doc": draw(st.integers(1, 3)),
        "mmr_lambda": draw(st.sampled_from([0.0, 0.5, 0.7, 1.0]) | st.floats(0, 1)),
        "must_phrases": draw(st.lists(st.sampled_from(["vector", "code", "pair"]), max_size=2)),
        "seed_targets": [(lambda e, d=d: e.doc_id == d) for d in seed_docs],
        "already": already,
        "fill": draw(st.booleans()),
    }


@settings(max_examples=400, deadline=None)
@given(c=case())
def test_vectorized_mmr_equals_pairwise_reference(c: dict[str, Any]) -> None:
    """GIVEN random candidates (duplicates and ties included), vectors for some ids, earlier
    picks, seeds and budgets
    WHEN selected by the vectorized implementation and by the pairwise reference
    THEN the picks are the same evidence in the same order with the same mmr_score."""
    got = select_evidence(**c)
    want = _reference_select(**c)
    assert [(e.id, e.mmr_score) for e in got] == [(e.id, e.mmr_score) for e in want]
    assert [e.model_dump() for e in got] == [e.model_dump() for e in want]


def test_no_vectors_ranks_by_relevance() -> None:
    """GIVEN candidates without vectors WHEN selected THEN MMR is lambda * relevance: the
    most relevant first."""
    cands = [_ev(i, f"d{i}", "", 1, rel) for i, rel in enumerate([0.2, 0.9, 0.5])]
    out = select_evidence(cands, {}, max_docs=3, max_tokens=10, max_chunks_per_doc=1)
    assert [e.id for e in out] == ["e1", "e2", "e0"]


@settings(max_examples=300, deadline=None)
@given(c=case())
def test_lazy_token_counts_pick_the_same_as_counting_up_front(c: dict[str, Any]) -> None:
    """GIVEN random candidates whose tokens are only known to a counter (their own tokens
    field zeroed)
    WHEN selected with count_tokens
    THEN the picks, their mmr_score and their tokens equal the selection with every count
    known up front, and no candidate is counted twice."""
    truth = {id(e): e.tokens for e in c["candidates"]}
    zeroed = [e.model_copy(update={"tokens": 0}) for e in c["candidates"]]
    asked: list[int] = []

    def count(e: Evidence) -> int:
        i = next(k for k, z in enumerate(zeroed) if z is e)
        asked.append(i)
        return truth[id(c["candidates"][i])]

    lazy = select_evidence(**{**c, "candidates": zeroed, "count_tokens": count})
    eager = select_evidence(**c)
    assert [(e.id, e.mmr_score, e.tokens) for e in lazy] == [
        (e.id, e.mmr_score, e.tokens) for e in eager
    ]
    assert len(asked) == len(set(asked)) <= len(zeroed)
