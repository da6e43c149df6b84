"""Abstention per candidate: each candidate's own evidence (cosine, vocabulary value, every
query word, named) decides whether it is supported; the verdict summarises (issue 27 item 4)."""

from __future__ import annotations

from agentic_search.logic.quality import (
    SUPPORT_WINDOW,
    CandidateEvidence,
    answer_quality,
    ids_to_return,
    supported,
)
from agentic_search.logic.schema import QualitySpec

SPEC = QualitySpec(
    min_relevance=0.42, min_coverage=0.9, candidate_relevance=0.28, candidate_floor=0.2
)


def ev(rid: str, rel: float | None, **kw: bool) -> CandidateEvidence:
    return CandidateEvidence(id=rid, relevance=rel, **kw)


def test_each_kind_of_evidence_supports_a_candidate() -> None:
    """GIVEN cosines 0.30 / 0.27 and the other signals one at a time
    THEN 0.30 >= 0.28 is supported, 0.27 alone is not, and a vocabulary value, every query
    word or being named supports a candidate whatever its cosine."""
    assert supported(SPEC, ev("a", 0.30))
    assert not supported(SPEC, ev("a", 0.27))
    assert not supported(SPEC, ev("a", None))
    for signal in ("vocabulary", "lexical", "named"):
        assert supported(SPEC, ev("a", 0.05, **{signal: True}))


def test_a_non_english_need_with_one_supported_candidate_is_answered() -> None:
    """GIVEN a best cosine of 0.31 (under min_relevance 0.42) and coverage 0.02: the
    answer-level cut-off said "no good match" and returned nothing
    THEN the candidate at 0.31 supports the answer: weak, and every candidate at the floor
    (0.2) or above is returned in order, 0.15 withheld."""
    evidence = [ev("zed", 0.31), ev("void", 0.22), ev("emacs", 0.15)]
    quality = answer_quality(SPEC, evidence, 0.02)
    assert quality.verdict == "weak"
    assert "1 of the first 3 supported" in quality.reason
    assert ids_to_return(SPEC, quality, evidence) == ["zed", "void"]


def test_a_vocabulary_value_supports_an_answer_the_cosine_alone_would_not() -> None:
    """GIVEN cosines all under 0.28 but one candidate holding a category the query asked
    THEN the answer is given (weak) and that candidate is returned even under the floor."""
    evidence = [ev("sentry", 0.18, vocabulary=True), ev("locust", 0.25), ev("x", 0.1)]
    quality = answer_quality(SPEC, evidence, 0.68)
    assert quality.verdict == "weak"
    assert ids_to_return(SPEC, quality, evidence) == ["sentry", "locust"]


def test_nothing_supported_is_no_good_match_with_nothing_padded() -> None:
    """GIVEN no candidate supported (cosines 0.26, 0.2) and coverage 0.7 < 0.9
    THEN "no good match" and nothing is returned (no padding)."""
    evidence = [ev("a", 0.26), ev("b", 0.2)]
    quality = answer_quality(SPEC, evidence, 0.7)
    assert quality.verdict == "none"
    assert ids_to_return(SPEC, quality, evidence) == []


def test_only_the_first_ten_can_support_an_answer() -> None:
    """GIVEN ten unsupported candidates and an eleventh at 0.5
    THEN "no good match": a match at rank 11 does not make the answer."""
    evidence = [ev(f"d{i}", 0.1) for i in range(SUPPORT_WINDOW)] + [ev("late", 0.5)]
    assert answer_quality(SPEC, evidence, 0.5).verdict == "none"


def test_a_good_answer_is_not_padded() -> None:
    """GIVEN a best cosine 0.61 and coverage 0.95 (good) with an unrelated candidate at 0.1
    THEN the verdict is good and the unrelated candidate is withheld."""
    evidence = [ev("qdrant", 0.61), ev("milvus", 0.45), ev("valkey", 0.1)]
    quality = answer_quality(SPEC, evidence, 0.95)
    assert quality.verdict == "good" and quality.score == 1.0
    assert ids_to_return(SPEC, quality, evidence) == ["qdrant", "milvus"]


def test_named_records_and_queries_by_example() -> None:
    """GIVEN a named record found THEN good; GIVEN no relevance measured (a query by example)
    THEN coverage alone decides and nothing is withheld; the default spec never abstains."""
    named = [ev("a", 0.1, named=True), ev("b", 0.05)]
    assert answer_quality(SPEC, named, 0.1).verdict == "good"
    unmeasured = [ev("a", None), ev("b", None)]
    quality = answer_quality(SPEC, unmeasured, 0.95)
    assert quality.verdict == "good"
    assert ids_to_return(SPEC, quality, unmeasured) == ["a", "b"]
    assert answer_quality(SPEC, unmeasured, 0.5).verdict == "weak"
    default = QualitySpec()
    low = [ev("a", -0.5)]
    assert ids_to_return(default, answer_quality(default, low, 0.0), low) == ["a"]
