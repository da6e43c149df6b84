"""Invariants of the executor's pure nodes on random inputs (hypothesis).

* ``select_evidence``: no duplicates, at most ``max_docs``, within the token budget, per-document
  cap counted with ``already``, only input evidence (same id, provenance kept) with
  ``mmr_score`` set, never an ``already`` id again;
* ``final_ranking``: no duplicate ids, exactly the union of the rounds' ids;
* ``finalize_evidence_pack``: within ``max_total_tokens`` and ``max_total_docs``, no duplicates,
  only pooled evidence.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_search.logic.coverage import DeterministicGrader, EvidenceMatcher
from agentic_search.logic.executor.rounds import final_ranking, finalize_evidence_pack
from agentic_search.logic.schema import load_schema
from agentic_search.logic.selection import select_evidence
from agentic_search.logic.text import default_analyzer
from agentic_search.wire import (
    Evidence,
    ExecutorCaps,
    ExecutorState,
    IntentState,
    Provenance,
    QueryPlan,
    SourceHit,
    SparseSource,
    VectorSource,
)

TEXTS = ["", "vector", "pair programmer", "local code search", "free pair programmers"]
WORDS = ["vector", "pair programmer", "search", "local", "code", "free"]
DOCS = ["d0", "d1", "d2", "d3"]
MODE_SETS = [
    ("dense:identity",),
    ("sparse",),
    ("dense:identity", "dense:content"),
    ("dense:identity", "sparse"),
    ("dense:identity", "sparse", "structured:mongodb:0"),
]

PLAN = QueryPlan(
    domain="documents",
    strategy="capability-focused",
    vector_sources=[VectorSource(aspect="content", top_k=20, text="x")],
    sparse_source=SparseSource(text="x", top_k=50),
    fusion="weighted_sum",
)
INTENT = IntentState(query="q", normalized_query="q")
DOC_SCHEMA = load_schema("documents")


def _make(
    eid: str,
    doc: str,
    text: str,
    tokens: int,
    fused: float,
    rerank: float | None,
    rel: float,
    modes: tuple[str, ...],
) -> Evidence:
    hits = [
        SourceHit(source=m, system="qdrant", rank=r, raw_score=1.0, normalized_score=1.0)
        for r, m in enumerate(modes, start=1)
    ]
    return Evidence(
        id=eid,
        doc_id=doc,
        text=text,
        tokens=tokens,
        fused_score=fused,
        rerank_score=rerank,
        relevance=rel,
        round=1,
        provenance=Provenance(collection="c", hits=hits),
    )


#: Everything of one Evidence but its id: doc, text, tokens, fused, rerank, relevance, modes.
FIELDS = st.tuples(
    st.sampled_from(DOCS),
    st.sampled_from(TEXTS),
    st.integers(0, 120),
    st.floats(0, 1),
    st.none() | st.floats(-5, 5),
    st.floats(0, 1),
    st.sampled_from(MODE_SETS),
)
#: Evidence ids come from a small space, so repeats and overlaps with ``already`` happen.
SMALL_IDS = st.integers(0, 11)


@st.composite
def selection_case(draw: Any) -> dict[str, Any]:
    """Candidates, 2-D unit vectors for some ids, earlier picks and the selection knobs."""
    cands = [
        _make(f"e{i}", *f) for i, f in draw(st.lists(st.tuples(SMALL_IDS, FIELDS), max_size=8))
    ]
    earlier = draw(st.dictionaries(SMALL_IDS, FIELDS, max_size=3))
    already = [_make(f"e{i}", *f) for i, f in earlier.items()]
    angles = draw(st.dictionaries(SMALL_IDS, st.floats(0, 2 * math.pi), max_size=8))
    vectors = {f"e{i}": np.array([math.cos(a), math.sin(a)]) for i, a in angles.items()}
    seed_docs = draw(st.lists(st.sampled_from(DOCS), max_size=2))
    return {
        "candidates": cands,
        "vectors": vectors,
        "max_docs": draw(st.integers(0, 6)),
        "max_tokens": draw(st.integers(0, 300)),
        "max_chunks_per_doc": draw(st.integers(1, 3)),
        "mmr_lambda": draw(st.floats(0, 1)),
        "must_phrases": draw(st.lists(st.sampled_from(WORDS), max_size=2)),
        "seed_targets": [(lambda e, d=d: e.doc_id == d) for d in seed_docs],
        "already": already,
        "fill": draw(st.booleans()),
    }


def _without_mmr(e: Evidence) -> dict[str, Any]:
    return e.model_dump(exclude={"mmr_score"})


@settings(max_examples=150, deadline=None)
@given(case=selection_case())
def test_select_evidence_invariants(case: dict[str, Any]) -> None:
    """GIVEN random candidates, vectors, earlier picks, seeds and caps
    WHEN selected
    THEN no duplicate ids, none of the earlier ids, at most max_docs, tokens within
    max_tokens, per-doc chunks (earlier + new) within the cap for every doc that got a pick,
    and each pick is an input candidate (same fields, provenance kept) with mmr_score set."""
    out = select_evidence(**case)
    out_ids = [e.id for e in out]
    assert len(out_ids) == len(set(out_ids))
    assert not set(out_ids) & {e.id for e in case["already"]}
    assert len(out) <= max(case["max_docs"], 0)
    assert sum(e.tokens for e in out) <= case["max_tokens"]
    per_doc = Counter(e.doc_id for e in [*case["already"], *out])
    for doc in {e.doc_id for e in out}:
        assert per_doc[doc] <= case["max_chunks_per_doc"]
    inputs = [_without_mmr(c) for c in case["candidates"]]
    for e in out:
        assert e.mmr_score is not None and math.isfinite(e.mmr_score)
        assert _without_mmr(e) in inputs
        assert e.provenance is not None and e.provenance.hits
    if not case["fill"]:
        # without fill only seeds: at most one per must phrase and per predicate
        assert len(out) <= len(case["must_phrases"]) + len(case["seed_targets"])


_round_lists = st.lists(
    st.lists(st.sampled_from([f"r{i}" for i in range(10)]), unique=True, max_size=8),
    max_size=4,
)


@settings(max_examples=150, deadline=None)
@given(
    rounds=_round_lists,
    reranked=st.dictionaries(
        st.sampled_from([f"r{i}" for i in range(10)]), st.floats(-5, 5), max_size=6
    ),
    top_n=st.integers(1, 12),
    later=st.floats(0.01, 1.0),
)
def test_final_ranking_invariants(
    rounds: list[list[str]], reranked: dict[str, float], top_n: int, later: float
) -> None:
    """GIVEN random round rankings, rerank scores, rerank_top_n and later-round weight
    WHEN ranked THEN no duplicate ids and the ids are exactly the union of the rounds."""
    state = ExecutorState(
        plan=PLAN,
        intent=INTENT,
        caps=ExecutorCaps(rerank_top_n=top_n, later_round_weight=later),
        round_rankings=rounds,
        rerank_scores=reranked,
    )
    out = [f.id for f in final_ranking(state)]
    assert len(out) == len(set(out))
    assert set(out) == {i for ids in rounds for i in ids}


@st.composite
def pack_case(draw: Any) -> tuple[list[Evidence], list[str], ExecutorCaps]:
    """A pool of distinct evidence (the executor keys the pool by id), a final order over
    some ids (possibly unknown ones) and caps."""
    pool = [_make(f"p{i}", *f) for i, f in enumerate(draw(st.lists(FIELDS, max_size=10)))]
    if pool and draw(st.booleans()):  # every piece reranked: the rerank-score branch
        pool = [
            e if e.rerank_score is not None else e.model_copy(update={"rerank_score": e.relevance})
            for e in pool
        ]
    order = draw(st.lists(st.sampled_from([f"p{i}" for i in range(15)]), unique=True))
    caps = ExecutorCaps(
        max_total_docs=draw(st.integers(1, 12)), max_total_tokens=draw(st.integers(32, 400))
    )
    return pool, order, caps


@settings(max_examples=150, deadline=None)
@given(case=pack_case())
def test_finalize_evidence_pack_invariants(
    case: tuple[list[Evidence], list[str], ExecutorCaps],
) -> None:
    """GIVEN a random pool, order and caps WHEN finalized
    THEN total tokens <= max_total_tokens (and equal to the pack's count), at most
    max_total_docs pieces, no duplicates, only pooled evidence, and a grade of what was kept."""
    pool, order, caps = case
    state = ExecutorState(plan=PLAN, intent=INTENT, caps=caps, pool=pool)
    grader = DeterministicGrader(DOC_SCHEMA, EvidenceMatcher(DOC_SCHEMA, default_analyzer()))
    pack = finalize_evidence_pack(state, grader, order, coverage=DOC_SCHEMA.tuning.coverage)
    kept = [e.id for e in pack.evidence]
    assert sum(e.tokens for e in pack.evidence) == pack.tokens <= caps.max_total_tokens
    assert len(kept) <= caps.max_total_docs
    assert len(kept) == len(set(kept))
    assert all(e in pool for e in pack.evidence)
    assert pack.coverage.items == []
    # no targets: ratio 1.0 and no fields, so no contradictions -> 0.85 + 0.15*quality >= 0.85;
    # nothing kept -> 0
    if pack.evidence:
        assert pack.coverage.confidence >= 0.85
    else:
        assert pack.coverage.confidence == 0.0
