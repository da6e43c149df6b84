"""The multi-round executor's pure nodes against hand-worked examples.

Covered: evidence selection (MMR under per-document and token caps, seeds), coverage targets,
evidence matching, the deterministic grader and contradictions, RM3 expansion terms, the filter
relaxation ladder, the stopping policy, the final weighted-RRF ranking, reranking (an in-test
reranker, a real local HTTP rerank endpoint, a cross-encoder folder without files), the HyDE
switch and the executor gate.

Every expected value is worked out by hand in the comments. Nothing here loads the embedding
model or touches Qdrant: the nodes are pure functions over hand-built models.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agentic_search.adapters.rerank import ApiReranker, CrossEncoderReranker, RerankerError
from agentic_search.domain.coverage import (
    DeterministicGrader,
    EvidenceMatcher,
    coverage_targets,
    find_contradictions,
)
from agentic_search.domain.expansion import rm3_terms, rocchio_vector
from agentic_search.domain.planner import PlanError
from agentic_search.domain.schema import DomainSchema
from agentic_search.domain.selection import select_evidence
from agentic_search.domain.text import default_analyzer
from agentic_search.pipeline.rounds import (
    executor_gate,
    final_ranking,
    hyde_status,
    prepare_round_queries,
    relax_step,
    rerank_candidates,
    should_continue,
)
from agentic_search.state import (
    Coverage,
    CoverageItem,
    CoverageTarget,
    Evidence,
    ExecutorCaps,
    ExecutorState,
    Filter,
    IntentState,
    Provenance,
    QueryPlan,
    SourceHit,
    SparseSource,
    StructuredSource,
    VectorSource,
)

# ----- builders ----------------------------------------------------------------------------------


def ev(
    eid: str,
    *,
    doc: str | None = None,
    rel: float = 0.5,
    tokens: int = 10,
    text: str = "",
    title: str | None = None,
    fields: dict[str, Any] | None = None,
    fused: float = 0.0,
    modes: Sequence[str] = (),
) -> Evidence:
    """One hand-made Evidence; ``modes`` become provenance hits with those ``source`` names."""
    prov = None
    if modes:
        hits = [
            SourceHit(source=m, system="qdrant", rank=1, raw_score=1.0, normalized_score=1.0)
            for m in modes
        ]
        prov = Provenance(collection="c", hits=hits)
    return Evidence(
        id=eid,
        doc_id=doc or eid,
        title=title,
        text=text,
        tokens=tokens,
        fields=fields or {},
        fused_score=fused,
        relevance=rel,
        round=1,
        provenance=prov,
    )


def ids(items: Sequence[Evidence]) -> list[str]:
    return [e.id for e in items]


def unit(x: float, y: float) -> np.ndarray:
    v = np.array([x, y], dtype=np.float64)
    assert math.isclose(float(np.linalg.norm(v)), 1.0, abs_tol=1e-12)
    return v


def plan_with(
    filters: Sequence[Filter] = (),
    structured: Sequence[StructuredSource] = (),
    aspect: str = "identity",
) -> QueryPlan:
    return QueryPlan(
        domain="tools",
        strategy="capability-focused",
        vector_sources=[VectorSource(aspect=aspect, top_k=20, text="x")],
        sparse_source=SparseSource(text="x", top_k=50),
        structured_sources=list(structured),
        filters=list(filters),
        fusion="weighted_sum",
    )


def state_with(caps: ExecutorCaps, **kw: Any) -> ExecutorState:
    return ExecutorState(
        plan=plan_with(), intent=IntentState(query="q", normalized_query="q"), caps=caps, **kw
    )


PLATFORMS_LINUX = Filter(field="platforms", operator="in", value=["Linux"])
INTERFACE_CLI = Filter(field="interface", operator="in", value=["CLI"])
PRICE_20 = Filter(field="price_monthly_usd", operator="lte", value=20)
LOCAL = Filter(field="deployment", operator="in", value=["Local"], origin="locally")


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


# ----- 2. coverage -------------------------------------------------------------------------------

QUERY = 'alternative to copilot with code completion that runs locally, a "pair programmer" for vim'


def _intent(**kw: Any) -> IntentState:
    base: dict[str, Any] = {
        "query": QUERY,
        "normalized_query": QUERY,
        "reference_tool_name": "GitHub Copilot",
        "constraints": [LOCAL],
        "matches": {"functionality": ["Code Completion"]},
        "must_preserve_terms": ["pair programmer"],
        "keywords": default_analyzer().terms(QUERY),
    }
    base.update(kw)
    return IntentState(**base)


def test_query_stems_used_below() -> None:
    """GIVEN the query WHEN analysed THEN (Snowball English, stopwords to/with/that/a/for
    dropped) alternative->altern, completion->complet, runs->run, locally->local,
    programmer->programm."""
    assert default_analyzer().terms(QUERY) == [
        "altern",
        "copilot",
        "code",
        "complet",
        "run",
        "local",
        "pair",
        "programm",
        "vim",
    ]


def test_coverage_targets_kinds_labels_and_skipped_terms(tools_schema: DomainSchema) -> None:
    """GIVEN a constraint, a functionality match, a phrase, a reference tool and keywords
    WHEN targets are built
    THEN constraint, preference, phrase, then only the leftover terms 'run' and 'vim':
    altern (goal word), copilot (reference), code/complet (preference value), local
    (constraint origin and value), pair/programm (phrase) are not term targets."""
    targets = coverage_targets(_intent(), tools_schema, default_analyzer())
    assert [(t.kind, t.label, t.must) for t in targets] == [
        ("constraint", "deployment in [Local]", False),
        ("preference", "functionality ~ Code Completion", False),
        ("phrase", '"pair programmer"', True),
        ("term", "run", False),
        ("term", "vim", False),
    ]
    assert targets[0].filter == LOCAL
    assert targets[1].field == "functionality"
    assert targets[1].values == ["Code Completion"]
    assert targets[2].text == "pair programmer"
    assert [t.weight for t in targets] == [3.0, 2.0, 3.0, 1.0, 1.0]


def test_coverage_targets_skip_phrase_naming_the_reference_tool(
    tools_schema: DomainSchema,
) -> None:
    """GIVEN the reference tool's name among the must-preserve terms
    WHEN targets are built THEN it is not a phrase target (evidence about it is not wanted)."""
    intent = _intent(must_preserve_terms=["github copilot", "pair programmer"])
    phrases = [t.label for t in coverage_targets(intent, tools_schema, default_analyzer())]
    assert '"github copilot"' not in phrases
    assert '"pair programmer"' in phrases


def test_coverage_targets_must_constraint_keeps_must(tools_schema: DomainSchema) -> None:
    """GIVEN a must constraint WHEN targets are built THEN its target is must too."""
    must_local = LOCAL.model_copy(update={"must": True})
    intent = _intent(constraints=[must_local], matches={}, must_preserve_terms=[], keywords=[])
    targets = coverage_targets(intent, tools_schema, default_analyzer())
    assert [(t.kind, t.must) for t in targets] == [("constraint", True)]


@pytest.fixture
def matcher(tools_schema: DomainSchema) -> EvidenceMatcher:
    return EvidenceMatcher(tools_schema, default_analyzer())


def test_supports_constraint(matcher: EvidenceMatcher) -> None:
    """GIVEN deployment in [Local] THEN a list containing Local supports it, [Cloud] does not,
    and evidence without the field never does (even for a negative filter)."""
    target = CoverageTarget(kind="constraint", label=LOCAL.label(), filter=LOCAL)
    assert matcher.supports(target, ev("e1", fields={"deployment": ["Cloud", "Local"]}))
    assert not matcher.supports(target, ev("e2", fields={"deployment": ["Cloud"]}))
    assert not matcher.supports(target, ev("e3"))
    not_cloud = Filter(field="deployment", operator="nin", value=["Cloud"])
    t2 = CoverageTarget(kind="constraint", label=not_cloud.label(), filter=not_cloud)
    assert not matcher.supports(t2, ev("e4"))
    assert matcher.supports(t2, ev("e5", fields={"deployment": ["Local"]}))


def test_supports_preference(matcher: EvidenceMatcher) -> None:
    """GIVEN a preference (any of the values) THEN list and scalar fields that hold one of the
    values support it; other values and a missing field do not."""
    target = CoverageTarget(
        kind="preference",
        label="functionality ~ Code Completion",
        field="functionality",
        values=["Code Completion"],
    )
    assert matcher.supports(target, ev("e1", fields={"functionality": ["Chat", "Code Completion"]}))
    assert not matcher.supports(target, ev("e2", fields={"functionality": ["Chat"]}))
    assert not matcher.supports(target, ev("e3"))
    scalar = CoverageTarget(
        kind="preference", label="p", field="pricing_model", values=["Free", "Freemium"]
    )
    assert matcher.supports(scalar, ev("e4", fields={"pricing_model": "Freemium"}))
    assert not matcher.supports(scalar, ev("e5", fields={"pricing_model": "Paid"}))


@pytest.mark.parametrize(
    ("title", "text", "expected"),
    [
        (None, "Your AI pair programmer.", True),
        (None, "YOUR AI PAIR PROGRAMMER", True),  # case-insensitive
        ("Pair Programmer Pro", "an assistant", True),  # the title counts
        (None, "for pair programmers", False),  # (?!\w): 's' follows the phrase
        (None, "a repair programmer", False),  # (?<!\w): 're' precedes the phrase
        (None, "pair the programmer", False),  # not verbatim
    ],
)
def test_supports_phrase_is_whole_word_case_insensitive(
    matcher: EvidenceMatcher, title: str | None, text: str, expected: bool
) -> None:
    """GIVEN the phrase "pair programmer" WHEN matched against title + text
    THEN whole-word, case-insensitive, verbatim."""
    target = CoverageTarget(kind="phrase", label='"pair programmer"', text="pair programmer")
    assert matcher.supports(target, ev("e", title=title, text=text)) is expected


def test_supports_term_by_stem(matcher: EvidenceMatcher) -> None:
    """GIVEN term targets (stems) THEN evidence whose analysed title/text has the stem supports
    them: 'running' stems to 'run'; 'Vim' to 'vim'; 'Neovim' is the different stem 'neovim'."""
    run = CoverageTarget(kind="term", label="run", text="run")
    vim = CoverageTarget(kind="term", label="vim", text="vim")
    assert matcher.supports(run, ev("e1", text="running offline"))
    assert matcher.supports(vim, ev("e2", title="Works inside Vim", text=""))
    assert not matcher.supports(vim, ev("e3", text="a Neovim plugin"))


def _targets_for_grading() -> list[CoverageTarget]:
    return [
        CoverageTarget(kind="constraint", label=LOCAL.label(), filter=LOCAL),  # weight 3
        CoverageTarget(kind="phrase", label='"pair programmer"', text="pair programmer", must=True),
        CoverageTarget(
            kind="preference",
            label="functionality ~ Code Completion",
            field="functionality",
            values=["Code Completion"],
        ),  # weight 2
        CoverageTarget(kind="term", label="vim", text="vim"),  # weight 1
        CoverageTarget(kind="term", label="run", text="run"),  # weight 1
    ]


def test_grade_confidence_formula(tools_schema: DomainSchema, matcher: EvidenceMatcher) -> None:
    """GIVEN 5 targets (weights 3+3+2+1+1 = 10) and two pieces of evidence
    WHEN graded
    THEN covered = constraint and phrase (e1) -> 6/10 = 0.6; quality: e1 found by dense and
    sparse (2 modes), e2 by two dense aspects (1 mode) -> 1/2 = 0.5; no contradictions;
    confidence = 0.85*0.6 + 0.15*0.5 = 0.51 + 0.075 = 0.585."""
    e1 = ev(
        "e1",
        text="An AI pair programmer",
        fields={"deployment": ["Local"]},
        modes=["dense:identity", "sparse"],
    )
    e2 = ev(
        "e2",
        text="chat about code",
        fields={"functionality": ["Chat"]},
        modes=["dense:identity", "dense:functionality"],
    )
    cov = DeterministicGrader(tools_schema, matcher).grade(_targets_for_grading(), [e1, e2])
    assert [(i.label, i.covered, i.evidence, i.must) for i in cov.items] == [
        ("deployment in [Local]", True, ["e1"], False),
        ('"pair programmer"', True, ["e1"], True),
        ("functionality ~ Code Completion", False, [], False),
        ("vim", False, [], False),
        ("run", False, [], False),
    ]
    assert cov.quality == pytest.approx(0.5)
    assert cov.confidence == pytest.approx(0.585)
    assert cov.contradictions == []
    assert cov.grader == "deterministic"
    assert cov.covered == ["deployment in [Local]", '"pair programmer"']


def test_grade_no_targets_full_ratio_and_contradiction_penalty(
    tools_schema: DomainSchema, matcher: EvidenceMatcher
) -> None:
    """GIVEN no targets and two chunks of doc d1 that disagree on pricing_model, both found by
    dense and structured
    THEN ratio 1.0, quality 2/2 = 1.0, one contradiction:
    confidence = 0.85*1 + 0.15*1 - 0.1*1 = 0.9."""
    a = ev("a", doc="d1", fields={"pricing_model": "Free"}, modes=["dense:identity", "structured"])
    b = ev("b", doc="d1", fields={"pricing_model": "Paid"}, modes=["dense:usecases", "structured"])
    cov = DeterministicGrader(tools_schema, matcher).grade([], [a, b])
    assert cov.quality == pytest.approx(1.0)
    assert len(cov.contradictions) == 1
    assert cov.confidence == pytest.approx(0.9)


def test_grade_confidence_floored_at_zero(
    tools_schema: DomainSchema, matcher: EvidenceMatcher
) -> None:
    """GIVEN an uncovered term, no provenance and one contradiction
    THEN 0.85*0 + 0.15*0 - 0.1 = -0.1 -> floored to 0."""
    a = ev("a", doc="d1", fields={"pricing_model": "Free"})
    b = ev("b", doc="d1", fields={"pricing_model": "Paid"})
    target = CoverageTarget(kind="term", label="vim", text="vim")
    cov = DeterministicGrader(tools_schema, matcher).grade([target], [a, b])
    assert cov.confidence == 0.0


def test_grade_no_evidence_is_zero_confidence(
    tools_schema: DomainSchema, matcher: EvidenceMatcher
) -> None:
    """GIVEN targets and no evidence WHEN graded THEN every item missing, confidence 0;
    without targets too (no 'ratio 1.0' for an empty selection)."""
    grader = DeterministicGrader(tools_schema, matcher)
    cov = grader.grade(_targets_for_grading(), [])
    assert cov.confidence == 0.0 and cov.quality == 0.0
    assert not any(i.covered for i in cov.items)
    assert len(cov.missing) == 5
    assert grader.grade([], []).confidence == 0.0


def test_grade_no_targets_no_provenance(
    tools_schema: DomainSchema, matcher: EvidenceMatcher
) -> None:
    """GIVEN no targets and one piece of evidence without provenance
    THEN ratio 1.0, quality 0 -> 0.85*1 + 0.15*0 = 0.85."""
    cov = DeterministicGrader(tools_schema, matcher).grade([], [ev("a")])
    assert cov.confidence == pytest.approx(0.85)


def test_contradiction_same_doc_different_pricing() -> None:
    """GIVEN two chunks of d1 (also the same title) with Free vs Paid
    THEN exactly one contradiction (the title group has the same ids: not reported twice)."""
    a = ev("a", doc="d1", title="Tabby", fields={"pricing_model": "Free", "vendor": "X"})
    b = ev("b", doc="d1", title="Tabby", fields={"pricing_model": "Paid", "vendor": "X"})
    out = find_contradictions([a, b])
    assert len(out) == 1
    assert out[0].doc_id == "d1"
    assert out[0].field == "pricing_model"
    assert out[0].values == {"Free": ["a"], "Paid": ["b"]}


def test_contradiction_same_title_different_docs() -> None:
    """GIVEN two records titled 'Tabby' / ' tabby ' (strip + lower) that disagree on
    open_source (True -> 'yes', False -> 'no')
    THEN one contradiction keyed by the title; none when title_key is False."""
    a = ev("a", doc="t1", title="Tabby", fields={"open_source": True})
    b = ev("b", doc="t2", title=" tabby ", fields={"open_source": False})
    out = find_contradictions([a, b])
    assert [(c.doc_id, c.field, c.values) for c in out] == [
        ("tabby", "open_source", {"yes": ["a"], "no": ["b"]})
    ]
    assert find_contradictions([a, b], title_key=False) == []


def test_contradiction_missing_or_null_field_is_not_a_disagreement() -> None:
    """GIVEN two chunks of d1 where one lacks price and one has price None
    THEN no contradiction (missing values never disagree)."""
    a = ev("a", doc="d1", fields={"pricing_model": "Free", "price_monthly_usd": 10})
    b = ev("b", doc="d1", fields={"pricing_model": "Free"})
    c = ev("c", doc="d1", fields={"pricing_model": "Free", "price_monthly_usd": None})
    assert find_contradictions([a, b, c]) == []


def test_contradiction_needs_two_distinct_evidence() -> None:
    """GIVEN a single piece per doc (or the same id twice) THEN no contradiction."""
    a = ev("a", doc="d1", fields={"pricing_model": "Free"})
    a2 = ev("a", doc="d1", fields={"pricing_model": "Paid"})
    b = ev("b", doc="d2", fields={"pricing_model": "Paid"})
    assert find_contradictions([a, b]) == []
    assert find_contradictions([a, a2]) == []


# ----- 3. RM3 expansion terms --------------------------------------------------------------------

FEEDBACK = [
    ("the vector database vector", 3.0),
    ("search engine databases databases", 1.0),
]


def test_rm3_stems_used_below() -> None:
    """Snowball English: database(s) -> databas, engine -> engin; 'the' is a stopword."""
    assert default_analyzer().terms("the vector database databases search engine zebra") == [
        "vector",
        "databas",
        "databas",
        "search",
        "engin",
        "zebra",
    ]


def test_rm3_terms_by_hand() -> None:
    """GIVEN d1 'the vector database vector' (weight 3) and d2 'search engine databases
    databases' (weight 1)
    THEN P(d1) = 3/4, P(d2) = 1/4; |d1| = 3 stems (the stopword 'the' gives none), |d2| = 4:
      vector  = 2/3*3/4             = 0.5
      databas = 1/3*3/4 + 2/4*1/4   = 0.25 + 0.125 = 0.375
      search  = 1/4*1/4             = 0.0625
      engin   = 1/4*1/4             = 0.0625 (tie with search: search appears first)
    with the query stem 'vector' excluded and databas's most frequent surface form
    'databases' (2 vs 1)."""
    a = default_analyzer()
    assert rm3_terms(["vector"], FEEDBACK, 3, a) == ["databases", "search", "engine"]
    assert rm3_terms(["vector"], FEEDBACK, 2, a) == ["databases", "search"]
    assert rm3_terms([], FEEDBACK, 2, a) == ["vector", "databases"]


def test_rm3_ignores_non_positive_weights() -> None:
    """GIVEN extra texts 'yak yak' (weight -2) and 'zebra zebra' (weight 0) first
    THEN they change nothing: had either counted, its stem would be scored (-2/4 or 0) and
    listed among 10 terms; the weight sum stays 3 + 1 = 4, so the list is the same as above."""
    a = default_analyzer()
    assert a.terms("yak zebra") == ["yak", "zebra"]
    fb = [("yak yak", -2.0), ("zebra zebra", 0.0), *FEEDBACK]
    assert rm3_terms(["vector"], fb, 10, a) == ["databases", "search", "engine"]


def test_rm3_empty_cases() -> None:
    """GIVEN n_terms 0 or no feedback THEN no terms."""
    a = default_analyzer()
    assert rm3_terms([], FEEDBACK, 0, a) == []
    assert rm3_terms([], [], 5, a) == []


def test_rm3_returns_each_word_once() -> None:
    """GIVEN the feedback text 'self-hosted vector database' (one word per regex match, the
    analyzer splits 'self-hosted' into self + host)
    THEN every expansion word appears once."""
    a = default_analyzer()
    assert a.terms("self-hosted") == ["self", "host"]
    out = rm3_terms([], [("self-hosted vector database", 1.0)], 5, a)
    assert len(out) == len(set(out))
    assert set(out) == {"self-hosted", "vector", "database"}


def test_rocchio_moves_the_unit_query_toward_the_unit_centroid() -> None:
    """GIVEN q = (2, 0) and feedback (0, 3), (0, 1) (both unit (0, 1) once normalized)
    WHEN alpha 0.8 THEN 0.8 * (1, 0) + 0.2 * (0, 1) = (0.8, 0.2), normalized; alpha 1 gives
    the unit query, alpha 0 the unit centroid, no feedback the unit query."""
    out = rocchio_vector([2.0, 0.0], [[0.0, 3.0], [0.0, 1.0]], 0.8)
    expected = np.array([0.8, 0.2]) / math.hypot(0.8, 0.2)
    assert out.dtype == np.float32
    assert np.allclose(out, expected, atol=1e-6)
    assert np.allclose(rocchio_vector([2.0, 0.0], [[0.0, 3.0]], 1.0), [1.0, 0.0])
    half = 0.5**0.5
    assert np.allclose(rocchio_vector([2.0, 0.0], [[0.0, 3.0], [3.0, 0.0]], 0.0), unit(half, half))
    assert np.allclose(rocchio_vector([0.0, 5.0], [], 0.5), [0.0, 1.0])


def test_rocchio_rejects_bad_alpha_and_mismatched_dimensions() -> None:
    with pytest.raises(ValueError, match="alpha"):
        rocchio_vector([1.0, 0.0], [[0.0, 1.0]], 1.5)
    with pytest.raises(ValueError, match="dimension 3, query 2"):
        rocchio_vector([1.0, 0.0], [[0.0, 1.0, 0.0]], 0.5)


# ----- 4. relaxation ladder ----------------------------------------------------------------------


def test_relax_ladder_order(tools_schema: DomainSchema) -> None:
    """GIVEN platforms (rank 1), price (rank 2), deployment (rank 4)
    THEN relaxed platforms, then price, then deployment, then nothing is left."""
    plan = plan_with([PLATFORMS_LINUX, PRICE_20, LOCAL])
    dropped = []
    step = relax_step(plan, tools_schema)
    while step is not None:
        plan, flt = step
        dropped.append(flt.label())
        step = relax_step(plan, tools_schema)
    assert dropped == ["platforms in [Linux]", "price_monthly_usd<=20", "deployment in [Local]"]
    assert plan.filters == []


def test_relax_does_not_modify_the_input_plan(tools_schema: DomainSchema) -> None:
    """GIVEN a plan WHEN one step relaxes it THEN the original plan keeps its filters."""
    plan = plan_with([PLATFORMS_LINUX, LOCAL])
    step = relax_step(plan, tools_schema)
    assert step is not None
    assert step[0].filters == [LOCAL]
    assert plan.filters == [PLATFORMS_LINUX, LOCAL]


def test_relax_never_drops_must_filters(tools_schema: DomainSchema) -> None:
    """GIVEN platforms (rank 1) marked must and deployment (rank 4)
    THEN deployment goes first although it is harder, then nothing."""
    must_linux = PLATFORMS_LINUX.model_copy(update={"must": True})
    step = relax_step(plan_with([must_linux, LOCAL]), tools_schema)
    assert step is not None
    plan, flt = step
    assert flt == LOCAL
    assert plan.filters == [must_linux]
    assert relax_step(plan, tools_schema) is None


def test_relax_skips_fields_without_relax_rank(tools_schema: DomainSchema) -> None:
    """GIVEN only a category filter (no relax_rank in tools.yaml) THEN nothing to relax."""
    ide = Filter(field="category", operator="eq", value="IDE")
    assert relax_step(plan_with([ide]), tools_schema) is None
    assert relax_step(plan_with([]), tools_schema) is None


def test_relax_tie_drops_the_later_filter_first(tools_schema: DomainSchema) -> None:
    """GIVEN platforms and interface, both rank 1, in that order
    THEN interface (the later) goes first, then platforms."""
    step = relax_step(plan_with([PLATFORMS_LINUX, INTERFACE_CLI]), tools_schema)
    assert step is not None
    plan, flt = step
    assert flt == INTERFACE_CLI
    step = relax_step(plan, tools_schema)
    assert step is not None
    assert step[1] == PLATFORMS_LINUX


def test_relax_structured_sources_lose_the_same_filter(tools_schema: DomainSchema) -> None:
    """GIVEN a structured source carrying the plan's filters and a preference
    THEN after relaxing platforms it keeps deployment and the preference."""
    pref = Filter(field="functionality", operator="in", value=["Code Completion"])
    src = StructuredSource(filters=[PLATFORMS_LINUX, LOCAL], preferences=[pref], top_k=30)
    step = relax_step(plan_with([PLATFORMS_LINUX, LOCAL], structured=[src]), tools_schema)
    assert step is not None
    plan, _ = step
    assert plan.structured_sources[0].filters == [LOCAL]
    assert plan.structured_sources[0].preferences == [pref]


def test_relax_keeps_a_must_filter_with_the_same_label(tools_schema: DomainSchema) -> None:
    """GIVEN the same condition twice, once must and once not
    WHEN relaxed THEN the non-must copy goes and the must copy stays (never relaxed)."""
    must_linux = PLATFORMS_LINUX.model_copy(update={"must": True})
    step = relax_step(plan_with([must_linux, PLATFORMS_LINUX]), tools_schema)
    assert step is not None
    plan, flt = step
    assert flt == PLATFORMS_LINUX
    assert plan.filters == [must_linux]


# ----- 5. stopping policy ------------------------------------------------------------------------

CAPS = ExecutorCaps(
    max_rounds=3, confidence_threshold=0.9, max_no_new_rounds=1, round_budget_ms=2000.0
)


def _state(rnd: int, conf: float, caps: ExecutorCaps = CAPS) -> ExecutorState:
    cov = Coverage(
        items=[
            CoverageItem(kind="term", label="vim", covered=False),
            CoverageItem(kind="term", label="run", covered=True),
        ],
        confidence=conf,
    )
    return state_with(caps, round_index=rnd, coverage=cov)


def test_stop_no_candidates_in_round_one_wins_over_everything() -> None:
    """GIVEN round 1 found nothing (even with a high confidence) THEN stop: no candidates."""
    go, why = should_continue(_state(1, 0.95), [], 10.0, found_any=False)
    assert not go
    assert why.startswith("no candidates")


def test_nothing_found_in_a_later_round_is_not_the_no_candidates_stop() -> None:
    """GIVEN round 2 found nothing and added nothing THEN the stop is the no-new streak."""
    go, why = should_continue(_state(2, 0.5), [], 10.0, found_any=False)
    assert not go
    assert why == "no new evidence for 1 round(s)"


def test_stop_confidence_reached_wins_over_max_rounds() -> None:
    """GIVEN confidence 0.9 == threshold on the last round THEN stop on confidence."""
    go, why = should_continue(_state(3, 0.9), [], 10.0, found_any=True)
    assert not go
    assert why == "confidence 0.90 reached the threshold 0.90"


def test_stop_max_rounds_wins_over_no_new_streak() -> None:
    """GIVEN round 3 of 3, nothing new, confidence 0.5 THEN stop on max rounds."""
    go, why = should_continue(_state(3, 0.5), [], 10.0, found_any=True)
    assert not go
    assert why == "max rounds reached (3)"


def test_stop_no_new_streak_wins_over_latency() -> None:
    """GIVEN round 1 with no new evidence and a slow round THEN stop on the streak (1 >= 1)."""
    state = _state(1, 0.5)
    go, why = should_continue(state, [], 5000.0, found_any=True)
    assert not go
    assert why == "no new evidence for 1 round(s)"
    assert state.report.no_new_streak == 1


def test_stop_latency_budget() -> None:
    """GIVEN new evidence and a 2500 ms round (budget 2000) THEN stop on latency."""
    go, why = should_continue(_state(1, 0.5), ["e1"], 2500.0, found_any=True)
    assert not go
    assert why == "round latency budget exceeded (2500 ms > 2000 ms)"


def test_continue_lists_missing_items() -> None:
    """GIVEN new evidence, confidence 0.5 and a round exactly at the budget (not over)
    THEN continue, naming the missing target."""
    go, why = should_continue(_state(1, 0.5), ["e1"], 2000.0, found_any=True)
    assert go
    assert why == "continue: confidence 0.50 < 0.90; missing vim"


def test_no_new_streak_increments_and_resets() -> None:
    """GIVEN a streak limit of 3 and 5 rounds WHEN rounds add nothing, nothing, something,
    nothing THEN the streak goes 1, 2, 0, 1 and the search continues each time."""
    caps = ExecutorCaps(max_rounds=5, max_no_new_rounds=3, confidence_threshold=0.9)
    state = _state(0, 0.5, caps)
    streaks = []
    for rnd, new in enumerate([[], [], ["e1"], []], start=1):
        state.round_index = rnd
        go, _ = should_continue(state, new, 1.0, found_any=True)
        assert go
        streaks.append(state.report.no_new_streak)
    assert streaks == [1, 2, 0, 1]


# ----- 6. final ranking --------------------------------------------------------------------------


def test_final_ranking_weighted_rrf_by_hand() -> None:
    """GIVEN round 1 [a, b, c] (weight 1) and round 2 [c, d] (weight 0.2), k = 60
    THEN a = 1/61 = 0.016393, b = 1/62 = 0.016129,
    c = 1/63 + 0.2/61 = 0.015873 + 0.003279 = 0.019152, d = 0.2/62 = 0.003226
    -> c, a, b, d."""
    state = state_with(ExecutorCaps(), round_rankings=[["a", "b", "c"], ["c", "d"]])
    out = final_ranking(state)
    assert [f.id for f in out] == ["c", "a", "b", "d"]
    assert [f.fused for f in out] == pytest.approx(
        [1 / 63 + 0.2 / 61, 1 / 61, 1 / 62, 0.2 / 62], abs=1e-12
    )


def test_final_ranking_single_round_and_empty() -> None:
    """GIVEN one round THEN its order with 1/61, 1/62; no (or only empty) rounds THEN []."""
    out = final_ranking(state_with(ExecutorCaps(), round_rankings=[["a", "b"]]))
    assert [f.id for f in out] == ["a", "b"]
    assert [f.fused for f in out] == pytest.approx([1 / 61, 1 / 62])
    assert final_ranking(state_with(ExecutorCaps())) == []
    assert final_ranking(state_with(ExecutorCaps(), round_rankings=[[], []])) == []


def test_final_ranking_reranked_ids_move_ahead_within_top_n() -> None:
    """GIVEN the fused order c, a, b, d (above), rerank scores b 0.9, a 0.1, d 0.5, top_n 3
    THEN the head [c, a, b] becomes reranked ones first by score (b, a), then c; d stays
    after the head although it has a rerank score: b, a, c, d."""
    state = state_with(
        ExecutorCaps(rerank_top_n=3),
        round_rankings=[["a", "b", "c"], ["c", "d"]],
        rerank_scores={"b": 0.9, "a": 0.1, "d": 0.5},
    )
    assert [f.id for f in final_ranking(state)] == ["b", "a", "c", "d"]


# ----- 7. rerank_candidates ----------------------------------------------------------------------


class ListReranker:
    """A Reranker that answers fixed scores (the protocol is the edge, not our code)."""

    name = "list"

    def __init__(self, scores: Sequence[float]) -> None:
        self.scores = list(scores)
        self.calls: list[tuple[str, list[str]]] = []

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        self.calls.append((query, list(texts)))
        return self.scores[: len(texts)]


class FailingReranker:
    name = "failing"

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        raise RerankerError("model exploded")


def _rerank_input() -> list[Evidence]:
    return [
        ev("e1", title="T1", text="one", fused=0.4, rel=1.0),
        ev("e2", title=None, text="two", fused=0.3, rel=0.6),
        ev("e3", title="T3", text="three", fused=0.2, rel=0.3),
        ev("e4", title="T4", text="four", fused=0.1, rel=0.1),
    ]


def test_rerank_top_n_by_hand() -> None:
    """GIVEN 4 pieces, top_n 3 and scores 0.2, 0.8, 0.5 for e1..e3
    THEN min-max (lo 0.2, hi 0.8): e1 0, e2 1, e3 (0.5-0.2)/0.6 = 0.5;
    order e2, e3, e1 then e4 (not scored, relevance 0); fused scores unchanged."""
    rr = ListReranker([0.2, 0.8, 0.5])
    out, err = rerank_candidates(rr, "the query", _rerank_input(), 3)
    assert err is None
    assert rr.calls == [("the query", ["T1. one", ". two", "T3. three"])]
    assert [e.id for e in out] == ["e2", "e3", "e1", "e4"]
    assert [e.rerank_score for e in out] == [0.8, 0.5, 0.2, None]
    assert [e.relevance for e in out] == pytest.approx([1.0, 0.5, 0.0, 0.0])
    assert [e.fused_score for e in out] == [0.3, 0.2, 0.4, 0.1]


def test_rerank_non_finite_scores_go_below_the_real_ones() -> None:
    """GIVEN scores -inf, 2.0, 1.0 THEN -inf becomes min(real) - 1 = 0.0; min-max over
    [0, 2, 1] -> 0, 1, 0.5; order e2, e3, e1."""
    out, err = rerank_candidates(ListReranker([-math.inf, 2.0, 1.0]), "q", _rerank_input()[:3], 5)
    assert err is None
    assert [(e.id, e.rerank_score, e.relevance) for e in out] == [
        ("e2", 2.0, 1.0),
        ("e3", 1.0, 0.5),
        ("e1", 0.0, 0.0),
    ]


def test_rerank_failure_and_none_leave_input_unchanged() -> None:
    """GIVEN a reranker raising RerankerError THEN the input unchanged and an error;
    GIVEN no reranker THEN unchanged and no error; no evidence THEN []."""
    items = _rerank_input()
    out, err = rerank_candidates(FailingReranker(), "q", items, 3)
    assert out == items
    assert err is not None
    assert (err.source, err.error, err.message) == ("reranker", "RerankerError", "model exploded")
    out, err = rerank_candidates(None, "q", items, 3)
    assert out == items and err is None
    assert rerank_candidates(ListReranker([]), "q", [], 3) == ([], None)


# ----- 8. ApiReranker / CrossEncoderReranker -----------------------------------------------------


class _RerankHandler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        srv: Any = self.server
        srv.requests.append(
            {"path": self.path, "headers": dict(self.headers), "body": self.rfile.read(length)}
        )
        if srv.mode == "hang-up":  # close the connection without any answer
            self.close_connection = True
            return
        status, body = srv.answer
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        # "truncate": announce more bytes than sent, then close the connection
        extra = 100 if srv.mode == "truncate" else 0
        self.send_header("Content-Length", str(len(body) + extra))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def rerank_server() -> Iterator[Any]:
    """A real HTTP server on 127.0.0.1 (random port) recording requests; set ``answer``."""
    srv: Any = ThreadingHTTPServer(("127.0.0.1", 0), _RerankHandler)
    srv.requests = []
    srv.answer = (200, b"{}")
    srv.mode = "normal"
    srv.url = f"http://127.0.0.1:{srv.server_address[1]}/rerank"
    thread = threading.Thread(target=srv.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=5)


def _answer(obj: Any, status: int = 200) -> tuple[int, bytes]:
    return status, json.dumps(obj).encode()


def test_api_reranker_maps_scores_by_index_and_sends_the_request(rerank_server: Any) -> None:
    """GIVEN an API answering index 1 -> 0.9, index 0 -> 0.1
    THEN scores [0.1, 0.9]; the POST carried query, documents, top_n 2, model and the key."""
    rerank_server.answer = _answer(
        {"results": [{"index": 1, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.1}]}
    )
    rr = ApiReranker(rerank_server.url, model="rr-1", api_key="sk-test")
    assert rr.name == "api:rr-1"
    assert rr.score("vector db", ["first", "second"]) == [0.1, 0.9]
    [req] = rerank_server.requests
    assert req["path"] == "/rerank"
    assert json.loads(req["body"]) == {
        "query": "vector db",
        "documents": ["first", "second"],
        "top_n": 2,
        "model": "rr-1",
    }
    assert req["headers"]["Authorization"] == "Bearer sk-test"
    assert req["headers"]["Content-Type"] == "application/json"


def test_api_reranker_without_model_or_key(rerank_server: Any) -> None:
    """GIVEN no model and no key; an answer scoring index 0 only (key 'score'), an
    out-of-range index and a bare list body
    THEN no 'model' in the body, no Authorization header, unscored texts get -inf."""
    rerank_server.answer = _answer([{"index": 0, "score": 2.5}, {"index": 7, "score": 9.0}])
    rr = ApiReranker(rerank_server.url)
    assert rr.name == f"api:{rerank_server.url}"
    assert rr.score("q", ["a", "b"]) == [2.5, -math.inf]
    [req] = rerank_server.requests
    assert json.loads(req["body"]) == {"query": "q", "documents": ["a", "b"], "top_n": 2}
    assert "Authorization" not in req["headers"]


def test_api_reranker_no_texts_sends_nothing(rerank_server: Any) -> None:
    """GIVEN no texts THEN [] without a request."""
    assert ApiReranker(rerank_server.url).score("q", []) == []
    assert rerank_server.requests == []


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (_answer({"error": "boom"}, status=500), "failed"),
        (_answer({"data": []}), "without 'results'"),
        ((200, b"not json"), "failed"),
        (_answer({"results": [{"index": "x", "relevance_score": 1}]}), "bad result"),
        (_answer({"results": [{"relevance_score": 1}]}), "bad result"),
    ],
)
def test_api_reranker_errors(rerank_server: Any, answer: tuple[int, bytes], message: str) -> None:
    """GIVEN a 500, a body without results, a non-JSON body or a bad result item
    THEN RerankerError."""
    rerank_server.answer = answer
    with pytest.raises(RerankerError, match=message):
        ApiReranker(rerank_server.url, timeout_s=5).score("q", ["a", "b"])


@pytest.mark.parametrize("mode", ["hang-up", "truncate"])
def test_api_reranker_broken_connection_is_a_reranker_error(rerank_server: Any, mode: str) -> None:
    """GIVEN a server that closes the connection without answering, or sends fewer body bytes
    than its Content-Length
    THEN RerankerError (the documented failure of Reranker.score), so that
    rerank_candidates keeps the fused order instead of crashing the executor."""
    rerank_server.mode = mode
    rerank_server.answer = _answer({"results": []})
    rr = ApiReranker(rerank_server.url, timeout_s=5)
    with pytest.raises(RerankerError):
        rr.score("q", ["a"])
    out, err = rerank_candidates(rr, "q", _rerank_input(), 3)
    assert out == _rerank_input()
    assert err is not None and err.error == "RerankerError"


def test_cross_encoder_empty_folder_names_missing_files(tmp_path: Path) -> None:
    """GIVEN an empty folder THEN RerankerError naming model.onnx and tokenizer.json;
    with model.onnx present THEN only tokenizer.json is named."""
    with pytest.raises(RerankerError, match=r"lacks model\.onnx, tokenizer\.json"):
        CrossEncoderReranker(tmp_path)
    (tmp_path / "model.onnx").write_bytes(b"")
    with pytest.raises(RerankerError, match=r"lacks tokenizer\.json \("):
        CrossEncoderReranker(tmp_path)


# ----- 9. HyDE switch ----------------------------------------------------------------------------


class FakeHyde:
    name = "fake"

    def generate(self, query: str) -> str:
        return f"a passage about {query}"


def test_hyde_status() -> None:
    """GIVEN no generator THEN off; literal constraints THEN off; otherwise on (fake)."""
    plain = IntentState(query="q", normalized_query="q")
    assert hyde_status(plain, None) == "off (no LLM configured)"
    exact = plain.model_copy(update={"must_match_exactly": True})
    quoted = plain.model_copy(update={"must_preserve_terms": ["pair programmer"]})
    literal = "off (the query has literal constraints that must match exactly)"
    assert hyde_status(exact, FakeHyde()) == literal
    assert hyde_status(quoted, FakeHyde()) == literal
    assert hyde_status(plain, FakeHyde()) == "on (fake)"


# ----- round queries -----------------------------------------------------------------------------


def test_round1_appends_missing_must_terms_to_sparse_and_no_hyde(
    tools_schema: DomainSchema,
) -> None:
    """GIVEN a plan whose sparse text 'x' lacks the must-preserve term and a HyDE generator
    THEN round 1's sparse text is 'x pair programmer' and HyDE stays off (literal term)."""
    state = executor_gate(plan_with(), _intent(), tools_schema)
    plan, queries, errors = prepare_round_queries(state, tools_schema, hyde=FakeHyde())
    assert plan is not None and errors == []
    assert plan.sparse_source is not None
    assert plan.sparse_source.text == "x pair programmer"
    assert len(plan.vector_sources) == 1
    assert plan.round == 1
    assert [(q.text, q.purpose, q.modes) for q in queries] == [
        ("x", "plan", ["dense:identity"]),
        ("x pair programmer", "plan", ["sparse"]),
    ]


def test_round1_hyde_adds_a_dense_source_and_switches_to_rrf(tools_schema: DomainSchema) -> None:
    """GIVEN no literal terms and a HyDE generator
    THEN a third source (hyde passage on the identity aspect, top_k = max(20) = 20) and,
    with 2 + 1 = 3 sources, fusion rrf; 'x' is one query run by dense and sparse."""
    intent = IntentState(query="code helper", normalized_query="code helper")
    state = executor_gate(plan_with(), intent, tools_schema)
    plan, queries, _ = prepare_round_queries(state, tools_schema, hyde=FakeHyde())
    assert plan is not None
    hyde_vs = plan.vector_sources[-1]
    assert (hyde_vs.aspect, hyde_vs.top_k, hyde_vs.query_vector_source, hyde_vs.text) == (
        "identity",
        20,
        "hyde",
        "a passage about code helper",
    )
    assert plan.fusion == "rrf"
    assert [(q.text, q.purpose, q.modes) for q in queries] == [
        ("x", "plan", ["dense:identity", "sparse"]),
        ("a passage about code helper", "hyde", ["dense:identity"]),
    ]


def test_round2_asks_for_missing_targets_by_weight(tools_schema: DomainSchema) -> None:
    """GIVEN targets constraint, preference, phrase, run, vim (from _intent) with the
    constraint and vim covered, an empty pool (no RM3 feedback)
    THEN the missing ones by weight: phrase (3), preference (2), run (1):
    sparse = query + 'pair programmer pair programmer' + 'runs runs' (the query's surface form
    of the stem run), one structured source (plan filters + the preference, top_k
    min(200, max(30, 10*2)) = 30) and one dense coverage query 'query Code Completion'."""
    state = executor_gate(plan_with([LOCAL]), _intent(), tools_schema)
    covered = {"deployment in [Local]", "vim"}
    state.coverage = Coverage(
        items=[
            CoverageItem(kind=t.kind, label=t.label, covered=t.label in covered)
            for t in state.targets
        ]
    )
    state.round_index = 1
    plan, queries, _ = prepare_round_queries(state, tools_schema)
    assert plan is not None
    assert plan.round == 2 and plan.fusion == "rrf"
    assert plan.sparse_source is not None
    assert plan.sparse_source.text == f"{QUERY} pair programmer pair programmer runs runs"
    assert plan.sparse_source.top_k == 50
    pref = Filter(field="functionality", operator="in", value=["Code Completion"])
    assert [(s.filters, s.preferences, s.top_k) for s in plan.structured_sources] == [
        ([LOCAL], [pref], 30)
    ]
    assert [(v.aspect, v.top_k, v.query_vector_source, v.text) for v in plan.vector_sources] == [
        ("identity", 20, "coverage", f"{QUERY} Code Completion")
    ]
    assert plan.filters == [LOCAL]
    assert [(q.text, q.target, q.modes) for q in queries[1:]] == [
        ("pair programmer", '"pair programmer"', ["sparse"]),
        (f"{QUERY} Code Completion", "functionality ~ Code Completion", ["dense:identity"]),
        ("functionality in [Code Completion]", "functionality ~ Code Completion", ["structured"]),
        ("runs", "run", ["sparse"]),
    ]
    assert state.asked == ['"pair programmer"', "functionality ~ Code Completion", "run"]
    # asked once and still missing: the same queries are not asked again -> nothing new
    state.round_index = 2
    assert prepare_round_queries(state, tools_schema) == (None, [], [])


def _feedback_round_state(tools_schema: DomainSchema, how: str) -> ExecutorState:
    """Round 1 done, every target covered, a pool of four evidence (relevance 0.9, 0.2, 0.7,
    0.5) whose texts give RM3 terms."""
    state = executor_gate(plan_with(), _intent(), tools_schema, ExecutorCaps(feedback_vector=how))
    state.coverage = Coverage(
        items=[CoverageItem(kind=t.kind, label=t.label, covered=True) for t in state.targets]
    )
    state.pool = [
        ev("a", rel=0.9, text="neovim plugin for offline completion"),
        ev("b", rel=0.2, text="cloud chat assistant"),
        ev("c", rel=0.7, text="offline model runs on a laptop"),
        ev("d", rel=0.5, text="editor plugin with offline models"),
    ]
    state.round_index = 1
    return state


def test_round2_dense_feedback_is_rocchio_on_the_feedback_documents(
    tools_schema: DomainSchema,
) -> None:
    """GIVEN feedback_vector rocchio (and the default feedback_docs 3, rocchio_alpha 0.8)
    THEN the round's dense query is round 1's dense text ('x', whose vector is cached) moved
    toward the three most relevant evidence (a, c, d: not b), with no new text to embed, and
    the RM3 words go to the sparse query only."""
    state = _feedback_round_state(tools_schema, "rocchio")
    plan, queries, _ = prepare_round_queries(state, tools_schema)
    assert plan is not None and plan.sparse_source is not None
    assert "offline" in plan.sparse_source.text
    assert [
        (v.query_vector_source, v.text, v.feedback_ids, v.feedback_alpha)
        for v in plan.vector_sources
    ] == [("feedback", "x", ["a", "c", "d"], 0.8)]
    assert [q.target for q in queries if q.modes == ["dense:identity"]] == ["Rocchio"]


def test_round2_dense_feedback_embed_and_none(tools_schema: DomainSchema) -> None:
    """GIVEN feedback_vector 'embed' THEN the dense feedback query is the query plus the RM3
    words as text (a new embedding), without feedback ids; GIVEN 'none' (the default) THEN
    no dense query, and the sparse query is the same in both."""
    assert ExecutorCaps().feedback_vector == "none"
    embed = _feedback_round_state(tools_schema, "embed")
    plan, _, _ = prepare_round_queries(embed, tools_schema)
    assert plan is not None and plan.sparse_source is not None
    [vs] = plan.vector_sources
    words = plan.sparse_source.text.removeprefix(f"{QUERY} ")
    assert vs.text == f"{QUERY} {words}" and vs.feedback_ids == []
    none = _feedback_round_state(tools_schema, "none")
    plan_none, _, _ = prepare_round_queries(none, tools_schema)
    assert plan_none is not None and plan_none.vector_sources == []
    assert plan_none.sparse_source == plan.sparse_source


# ----- 10. executor gate -------------------------------------------------------------------------


def test_gate_plan_without_sources_stops(tools_schema: DomainSchema) -> None:
    """GIVEN a plan with no sources THEN continue_search False, a stop reason, no targets."""
    plan = QueryPlan(domain="tools", strategy="capability-focused", vector_sources=[])
    state = executor_gate(plan, _intent(), tools_schema)
    assert state.continue_search is False
    assert state.report.stop_reason == "plan has no retrieval sources (non-retrieval strategy)"
    assert state.targets == []


def test_gate_invalid_plan_raises(tools_schema: DomainSchema) -> None:
    """GIVEN a plan with an unknown aspect THEN PlanError naming it."""
    with pytest.raises(PlanError, match="unknown aspect 'nope'"):
        executor_gate(plan_with(aspect="nope"), _intent(), tools_schema)


def test_gate_valid_plan_starts_state(tools_schema: DomainSchema) -> None:
    """GIVEN a valid plan, caps and names THEN the state carries them and the targets."""
    caps = ExecutorCaps(max_rounds=2)
    state = executor_gate(
        plan_with([LOCAL]), _intent(), tools_schema, caps, reranker="list", hyde="on (fake)"
    )
    assert state.continue_search is True
    assert state.report.caps == caps
    assert (state.report.reranker, state.report.hyde) == ("list", "on (fake)")
    assert [t.kind for t in state.targets] == ["constraint", "preference", "phrase", "term", "term"]
    default = executor_gate(plan_with(), _intent(), tools_schema)
    assert default.report.reranker == "none (not configured)"
    assert default.report.hyde == "off (no LLM configured)"
