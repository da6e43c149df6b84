"""Evidence selection (MMR under per-document and token caps, seeds) against hand-worked
examples."""

from __future__ import annotations

import pytest
from support.builders import ev, ids, unit

from agentic_search.logic.coverage import (
    EvidenceMatcher,
)
from agentic_search.logic.schema import DomainSchema
from agentic_search.logic.selection import select_evidence
from agentic_search.logic.text import default_analyzer
from agentic_search.wire import (
    CoverageTarget,
    Evidence,
)

# ----- 1. select_evidence ------------------------------------------------------------------------

# Four candidates with 2-D unit vectors, given best first:
#   a rel 1.0 v=(1, 0)         b rel 0.9 v=(0.96, 0.28)  (near-duplicate of a: cos 0.96)
#   c rel 0.6 v=(0, 1)         d rel 0.3 v=(0.6, 0.8)
# Cosines: ab 0.96, ac 0, ad 0.6, bc 0.28, bd 0.96*0.6+0.28*0.8 = 0.576+0.224 = 0.8, cd 0.8.
MMR_VECS = {
    "a": unit(1.0, 0.0),
    "b": unit(0.96, 0.28),
    "c": unit(0.0, 1.0),
    "d": unit(0.6, 0.8),
}
MMR_CANDS = [ev("a", rel=1.0), ev("b", rel=0.9), ev("c", rel=0.6), ev("d", rel=0.3)]


def test_select_mmr_passes_over_near_duplicate_for_diverse_candidate() -> None:
    """GIVEN a, its near-duplicate b and diverse c, d (lambda 0.7)
    WHEN selected by MMR
    THEN the order is a, c, b, d with the hand-computed MMR scores."""
    # pick 1 (nothing chosen): 0.7*rel -> a 0.7, b 0.63, c 0.42, d 0.21 -> a (0.7)
    # pick 2 vs {a}: b 0.63-0.3*0.96 = 0.342; c 0.42-0.3*0 = 0.42; d 0.21-0.3*0.6 = 0.03 -> c
    # pick 3 vs {a,c}: b 0.63-0.3*max(0.96,0.28) = 0.342; d 0.21-0.3*max(0.6,0.8) = -0.03 -> b
    # pick 4 vs {a,c,b}: d 0.21-0.3*max(0.6,0.8,0.8) = -0.03
    out = select_evidence(
        MMR_CANDS, MMR_VECS, max_docs=4, max_tokens=1000, max_chunks_per_doc=1, mmr_lambda=0.7
    )
    assert ids(out) == ["a", "c", "b", "d"]
    assert [e.mmr_score for e in out] == pytest.approx([0.7, 0.42, 0.342, -0.03], abs=1e-6)


def test_select_mmr_max_docs_two_takes_the_diverse_one() -> None:
    """GIVEN the same four candidates and max_docs 2
    WHEN selected THEN a and c (b, the second most relevant, is a near-duplicate of a)."""
    out = select_evidence(
        MMR_CANDS, MMR_VECS, max_docs=2, max_tokens=1000, max_chunks_per_doc=1, mmr_lambda=0.7
    )
    assert ids(out) == ["a", "c"]


def test_select_lambda_one_is_pure_relevance() -> None:
    """GIVEN lambda 1 (no diversity term) WHEN selected THEN relevance order a, b, c, d."""
    # mmr = 1*rel - 0*penalty = rel: 1.0, 0.9, 0.6, 0.3
    out = select_evidence(
        MMR_CANDS, MMR_VECS, max_docs=4, max_tokens=1000, max_chunks_per_doc=1, mmr_lambda=1.0
    )
    assert ids(out) == ["a", "b", "c", "d"]
    assert [e.mmr_score for e in out] == pytest.approx([1.0, 0.9, 0.6, 0.3])


def test_select_returns_copies_and_leaves_inputs_untouched() -> None:
    """GIVEN candidates without mmr_score WHEN selected THEN the inputs still have None."""
    select_evidence(MMR_CANDS, MMR_VECS, max_docs=4, max_tokens=1000, max_chunks_per_doc=1)
    assert all(c.mmr_score is None for c in MMR_CANDS)


def test_select_respects_max_chunks_per_doc() -> None:
    """GIVEN three chunks of doc d1 (rel 1.0, 0.9, 0.8) and one of d2 (rel 0.1), cap 2
    WHEN selected (no vectors: no penalty) THEN x1, x2, then y; x3 would be d1's third chunk."""
    cands = [
        ev("x1", doc="d1", rel=1.0),
        ev("x2", doc="d1", rel=0.9),
        ev("x3", doc="d1", rel=0.8),
        ev("y", doc="d2", rel=0.1),
    ]
    out = select_evidence(cands, {}, max_docs=4, max_tokens=1000, max_chunks_per_doc=2)
    assert ids(out) == ["x1", "x2", "y"]


def test_select_token_budget_skips_what_does_not_fit_and_takes_later_fits() -> None:
    """GIVEN tokens 50, 40, 30 (relevance 1.0, 0.9, 0.8) and max_tokens 80
    WHEN selected THEN a (50) and c (50+30 = 80 <= 80); b would make 50+40 = 90 > 80."""
    cands = [
        ev("a", rel=1.0, tokens=50),
        ev("b", rel=0.9, tokens=40),
        ev("c", rel=0.8, tokens=30),
    ]
    out = select_evidence(cands, {}, max_docs=3, max_tokens=80, max_chunks_per_doc=1)
    assert ids(out) == ["a", "c"]
    assert sum(e.tokens for e in out) == 80


def test_select_must_phrase_seeds_the_only_candidate_that_has_it() -> None:
    """GIVEN a must-preserve phrase only the 4th candidate contains (other case)
    WHEN selected with max_docs 2 THEN that candidate is picked first, then MMR takes a."""
    cands = [
        ev("a", rel=1.0, text="code assistant"),
        ev("b", rel=0.9, text="an ai pair for teams"),
        ev("c", rel=0.8, text="a programmer tool"),
        ev("d", rel=0.2, text="Your AI Pair Programmer"),
    ]
    out = select_evidence(
        cands,
        {},
        max_docs=2,
        max_tokens=1000,
        max_chunks_per_doc=1,
        must_phrases=["pair programmer"],
    )
    assert ids(out) == ["d", "a"]
    # d was taken with nothing chosen and no vectors: 0.7 * 0.2 = 0.14
    assert out[0].mmr_score == pytest.approx(0.14)


def test_select_must_phrase_already_present_is_not_seeded_again() -> None:
    """GIVEN the phrase is in evidence of an earlier round WHEN selected
    THEN no seed: the pick is by MMR (a, the most relevant)."""
    cands = [ev("a", rel=1.0, text="plain"), ev("d", rel=0.2, text="pair programmer")]
    earlier = [ev("z", rel=1.0, text="a PAIR PROGRAMMER")]
    out = select_evidence(
        cands,
        {},
        max_docs=1,
        max_tokens=1000,
        max_chunks_per_doc=1,
        must_phrases=["pair programmer"],
        already=earlier,
    )
    assert ids(out) == ["a"]


def test_select_must_phrase_seed_agrees_with_phrase_coverage(
    tools_schema: DomainSchema,
) -> None:
    """GIVEN a (rel 1.0) saying 'pair programmers' and b (rel 0.1) saying 'pair programmer'
    WHEN selected with the must phrase 'pair programmer' and max_docs 1
    THEN the seed is b, the one the grader counts as covering the phrase target."""
    cands = [
        ev("a", rel=1.0, text="built for pair programmers"),
        ev("b", rel=0.1, text="your pair programmer"),
    ]
    out = select_evidence(
        cands,
        {},
        max_docs=1,
        max_tokens=1000,
        max_chunks_per_doc=1,
        must_phrases=["pair programmer"],
    )
    target = CoverageTarget(kind="phrase", label='"pair programmer"', text="pair programmer")
    matcher = EvidenceMatcher(tools_schema, default_analyzer())
    assert [matcher.supports(target, c) for c in cands] == [False, True]
    assert ids(out) == ["b"]


def _is_free(e: Evidence) -> bool:
    return e.fields.get("pricing_model") == "Free"


FREE_CANDS = [
    ev("a", rel=1.0, fields={"pricing_model": "Paid"}),
    ev("b", rel=0.9, fields={"pricing_model": "Paid"}),
    ev("c", rel=0.5, fields={"pricing_model": "Free"}),
]


def test_select_seed_target_takes_best_satisfying_candidate_first() -> None:
    """GIVEN a seed predicate only c satisfies WHEN selected with max_docs 2
    THEN c first, then a (highest MMR among the rest)."""
    out = select_evidence(
        FREE_CANDS, {}, max_docs=2, max_tokens=1000, max_chunks_per_doc=1, seed_targets=[_is_free]
    )
    assert ids(out) == ["c", "a"]


def test_select_seed_target_already_satisfied_is_skipped() -> None:
    """GIVEN earlier evidence already satisfies the predicate WHEN selected with max_docs 2
    THEN no seed: plain relevance order a, b."""
    out = select_evidence(
        FREE_CANDS,
        {},
        max_docs=2,
        max_tokens=1000,
        max_chunks_per_doc=1,
        seed_targets=[_is_free],
        already=[ev("z", fields={"pricing_model": "Free"})],
    )
    assert ids(out) == ["a", "b"]


def test_select_fill_false_returns_only_seeds() -> None:
    """GIVEN fill=False WHEN selected THEN only the seeded c; without seeds, nothing."""
    out = select_evidence(
        FREE_CANDS,
        {},
        max_docs=3,
        max_tokens=1000,
        max_chunks_per_doc=1,
        seed_targets=[_is_free],
        fill=False,
    )
    assert ids(out) == ["c"]
    none = select_evidence(
        FREE_CANDS, {}, max_docs=3, max_tokens=1000, max_chunks_per_doc=1, fill=False
    )
    assert none == []


def test_select_already_counts_towards_per_doc_cap_but_not_tokens() -> None:
    """GIVEN earlier evidence x1 of d1 (100 tokens) and a cap of 2 chunks per doc
    WHEN x1 (again), x2, x3 of d1 and y of d2 are offered with max_tokens 50
    THEN x1 is not picked again, x2 fills d1's second slot, x3 is over the cap, y fits;
    x1's 100 tokens do not count against this selection's 50."""
    earlier = [ev("x1", doc="d1", rel=1.0, tokens=100)]
    cands = [
        ev("x1", doc="d1", rel=1.0, tokens=10),
        ev("x2", doc="d1", rel=0.9, tokens=25),
        ev("x3", doc="d1", rel=0.8, tokens=10),
        ev("y", doc="d2", rel=0.1, tokens=25),
    ]
    out = select_evidence(
        cands, {}, max_docs=4, max_tokens=50, max_chunks_per_doc=2, already=earlier
    )
    assert ids(out) == ["x2", "y"]  # tokens 25 + 25 = 50 <= 50


def test_select_already_vectors_penalize_near_duplicates() -> None:
    """GIVEN a (v=(1,0)) chosen in an earlier round WHEN b (near-dup) and c (orthogonal) are
    offered THEN c wins: b 0.63-0.3*0.96 = 0.342 < c 0.42-0 = 0.42."""
    out = select_evidence(
        [MMR_CANDS[1], MMR_CANDS[2]],
        MMR_VECS,
        max_docs=1,
        max_tokens=1000,
        max_chunks_per_doc=1,
        already=[MMR_CANDS[0]],
    )
    assert ids(out) == ["c"]
    assert out[0].mmr_score == pytest.approx(0.42)


def test_select_empty_input_and_zero_max_docs() -> None:
    """GIVEN no candidates, or max_docs 0 WHEN selected THEN nothing."""
    assert select_evidence([], {}, max_docs=5, max_tokens=100, max_chunks_per_doc=1) == []
    assert (
        select_evidence(MMR_CANDS, MMR_VECS, max_docs=0, max_tokens=100, max_chunks_per_doc=1) == []
    )
