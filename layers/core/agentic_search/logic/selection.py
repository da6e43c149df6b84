"""Diverse evidence selection under budgets: MMR with per-document and token caps.

Maximal Marginal Relevance (Carbonell and Goldstein, "The Use of MMR, Diversity-Based
Reranking for Reordering Documents and Producing Summaries", SIGIR 1998):
``mmr(c) = lambda * rel(c) - (1 - lambda) * max_{s in S} sim(c, s)`` with ``rel`` the
candidate's normalized score in [0, 1] and ``sim`` the cosine of unit vectors.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from agentic_search.logic.text import contains_phrase
from agentic_search.wire import Evidence


def select_evidence(
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
    count_tokens: Callable[[Evidence], int] | None = None,
) -> list[Evidence]:
    """Pick up to ``max_docs`` of ``candidates`` (given best first), diverse and within budget.

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

    ``vectors`` maps evidence id -> unit vector of shape (d,) (float32 from the store). The
    similarities are vectorized: the candidates' vectors form an (n, d) matrix and each pick
    costs one (n, d) @ (d,) product that updates every candidate's max similarity to the
    picks, instead of n x picks dot products per MMR step; the picks are the same as the
    pairwise definition's (first best candidate wins ties within 1e-12).

    ``count_tokens`` (optional) gives a candidate's exact token count on demand, for callers
    that have not counted them (their ``tokens`` are then ignored): it is asked only for a
    candidate whose budget check decides something (a seed that matches, or one whose MMR
    score beats the best so far), and the picks carry the counted ``tokens``. The picks are
    the same as with every candidate counted up front.
    """
    if max_docs <= 0 or not candidates:
        return []
    n = len(candidates)
    rel = np.fromiter((c.relevance for c in candidates), dtype=np.float64, count=n)
    has_vec = np.fromiter((c.id in vectors for c in candidates), dtype=bool, count=n)
    # Rows of the candidates' unit vectors (zeros where a candidate has none): one
    # matrix-vector product per pick updates every candidate's max similarity to the picks.
    matrix: np.ndarray | None = None
    if has_vec.any():
        dim = next(len(vectors[c.id]) for c in candidates if c.id in vectors)
        dtype = np.result_type(*(vectors[c.id] for c in candidates if c.id in vectors))
        matrix = np.zeros((n, dim), dtype=dtype)
        for i, c in enumerate(candidates):
            if has_vec[i]:
                matrix[i] = vectors[c.id]
    max_sim = np.full(n, -np.inf, dtype=np.float64)  # max cosine to anything chosen
    any_chosen = False

    def choose(vec: np.ndarray | None) -> None:
        nonlocal any_chosen
        if vec is None:
            return
        any_chosen = True
        if matrix is not None:
            np.maximum(max_sim, matrix @ np.asarray(vec, dtype=matrix.dtype), out=max_sim)

    per_doc: Counter[str] = Counter(e.doc_id for e in already)
    for e in already:
        choose(vectors.get(e.id))
    picked: list[Evidence] = []
    picked_ids: set[str] = {e.id for e in already}
    used = 0
    counted: dict[int, int] = {}  # candidate position -> tokens, asked lazily

    def tokens(i: int) -> int:
        if count_tokens is None:
            return candidates[i].tokens
        if i not in counted:
            counted[i] = int(count_tokens(candidates[i]))
        return counted[i]

    def fits(i: int) -> bool:
        c = candidates[i]
        return (
            c.id not in picked_ids
            and per_doc[c.doc_id] < max_chunks_per_doc
            and used + tokens(i) <= max_tokens
        )

    def scores() -> list[float]:
        """MMR of every candidate against the picks so far (no penalty without a vector or
        before the first pick with a vector)."""
        if not any_chosen:
            return (mmr_lambda * rel).tolist()
        penalty = np.where(has_vec, max_sim, 0.0)
        return (mmr_lambda * rel - (1.0 - mmr_lambda) * penalty).tolist()

    def take(i: int) -> None:
        nonlocal used
        c = candidates[i]
        n = tokens(i)
        picked.append(c.model_copy(update={"mmr_score": round(scores()[i], 6), "tokens": n}))
        picked_ids.add(c.id)
        per_doc[c.doc_id] += 1
        used += n
        choose(vectors.get(c.id))

    def has(e: Evidence, phrase: str) -> bool:
        return contains_phrase(f"{e.title or ''} {e.text}", phrase)

    for phrase in must_phrases:
        if any(has(e, phrase) for e in [*already, *picked]):
            continue
        hit = next((i for i, c in enumerate(candidates) if has(c, phrase) and fits(i)), None)
        if hit is not None and len(picked) < max_docs:
            take(hit)
    for pred in seed_targets:
        if any(pred(e) for e in [*already, *picked]):
            continue
        hit = next((i for i, c in enumerate(candidates) if pred(c) and fits(i)), None)
        if hit is not None and len(picked) < max_docs:
            take(hit)
    while fill and len(picked) < max_docs:
        best: int | None = None
        best_score = -np.inf
        for i, score in enumerate(scores()):
            # the first candidate that beats the best so far by more than 1e-12 (stable ties)
            if score > best_score + 1e-12 and fits(i):
                best, best_score = i, score
        if best is None:
            break
        take(best)
    return picked
