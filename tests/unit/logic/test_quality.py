"""Abstention per candidate: each candidate's own evidence (cosine, vocabulary value, every
query word, named) decides whether it is supported; the verdict summarises (issue 27 item 4)."""

from __future__ import annotations

from agentic_search.logic.quality import (
    SUPPORT_WINDOW,
    CandidateEvidence,
    QueryReading,
    answer_quality,
    best_cosine,
    content_words,
    ids_to_return,
    needed_relevance,
    read_query,
    supported,
)
from agentic_search.logic.schema import QualitySpec
from agentic_search.wire import SourceHit

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


# --- how the query reads against the catalog (issue 27 item 4, branch h27a) -------------

READING_SPEC = QualitySpec(
    min_relevance=0.42,
    min_coverage=0.9,
    candidate_relevance=0.22,
    candidate_floor=0.10,
    unread_relevance=0.18,
    missing_word_relevance=0.46,
)


def test_a_need_word_in_no_record_asks_for_a_good_match() -> None:
    """GIVEN "track my running pace and heart rate on my watch": "heart" is in no record,
    the best cosine 0.26 and coverage 0.95 (the other words are everywhere)
    THEN 0.26 supports nothing (0.46 needed), coverage does not rescue the answer: "no good
    match", nothing returned, and the reason names the word; the same cosines with every
    word held answer the query."""
    reading = read_query(
        ["track", "run", "pace", "heart", "rate", "watch"],
        {"track", "run", "pace", "rate", "watch"},
    )
    assert reading.missing and not reading.unread
    assert needed_relevance(READING_SPEC, reading) == 0.46
    evidence = [ev("prometheus", 0.26), ev("neptune", 0.13)]
    quality = answer_quality(READING_SPEC, evidence, 0.95, reading)
    assert quality.verdict == "none" and "heart" in quality.reason
    assert ids_to_return(READING_SPEC, quality, evidence, reading) == []
    held = read_query(list(reading.words), set(reading.words))
    assert answer_quality(READING_SPEC, evidence, 0.95, held).verdict == "weak"


def test_a_query_the_catalog_cannot_read_is_judged_on_a_lower_cosine() -> None:
    """GIVEN a Chinese need whose only content word is in no record and a best cosine 0.19
    THEN it is unread (not "missing"): 0.18 is needed and the answer is given; read alike
    (no reading) it would be "no good match"."""
    reading = read_query(["本地运行的代码补全工具"], set())
    assert reading.unread and not reading.missing
    evidence = [ev("tabby", 0.19), ev("x", 0.05)]
    quality = answer_quality(READING_SPEC, evidence, 0.0, reading)
    assert quality.verdict == "weak"
    assert ids_to_return(READING_SPEC, quality, evidence, reading) == ["tabby"]
    assert answer_quality(READING_SPEC, evidence, 0.0).verdict == "none"


def test_an_unread_query_is_another_language_and_function_words_are_not_content() -> None:
    """GIVEN analysed terms with pronouns, goal words and a number
    THEN only the content words are read; half of them in no record with one written
    outside ASCII is unread ("für", "übersetzen"); an English need the catalog lacks is read
    and missing ("3D printing slicer for my printer": three of four in no record); an index
    that cannot tell (None) leaves every word held."""
    words = content_words(
        ["my", "our", "altern", "10", "code", "server", "keep"], ["altern", "my", "our"]
    )
    assert words == ["code", "server", "keep"]
    german = read_query(
        ["dokument", "englisch", "übersetzen", "formatierung"], {"dokument", "englisch"}
    )
    assert german.unread and not german.missing
    english = read_query(["3d", "print", "slicer", "printer"], {"print"})
    assert english.missing and not english.unread
    assert read_query(["a", "b", "c", "d"], {"a", "b", "c"}).missing
    assert read_query(["a", "b"], None) == QueryReading(words=("a", "b"))
    assert not QueryReading().unread and not QueryReading().missing


def test_a_candidate_is_judged_on_its_best_dense_cosine_to_the_query_text() -> None:
    """GIVEN a main-aspect cosine 0.28 and a use-cases hit at 0.88 for the query's text, and
    a hit for a reference tool's vector at 0.95
    THEN its cosine is 0.88 (the reference tool's vector is not the query's); with no
    relevance and no such hit, None."""

    def hit(source: str, score: float, qvs: str) -> SourceHit:
        return SourceHit(
            source=source, system="qdrant", aspect=source.split(":")[1], query_vector_source=qvs,
            rank=1, raw_score=score, normalized_score=1.0,
        )  # fmt: skip

    hits = [
        hit("dense:usecases:query_text", 0.878, "query_text"),
        hit("dense:identity:reference_tool", 0.95, "reference_tool"),
    ]
    assert best_cosine(0.2777, hits) == 0.878
    assert best_cosine(None, hits[1:]) is None
    assert best_cosine(0.3, []) == 0.3


def test_a_word_unrelated_to_the_query_is_incidental() -> None:
    """GIVEN "figure out which microservice is making our requests slow": "figur" is in no
    record but its cosine to the query is 0.10 (under candidate_relevance 0.22)
    THEN it is incidental and the query is read with nothing missing; "spotifi" at 0.78 is
    missing; an unmeasured unknown word counts (missing)."""
    words = ["figur", "microservic", "request", "slow"]
    known = {"microservic", "request", "slow"}
    figure = read_query(words, known, {"figur": 0.10}, 0.22)
    assert figure.incidental == ("figur",) and not figure.missing
    assert needed_relevance(READING_SPEC, figure) == 0.22
    spotify = read_query(
        ["spotifi", "stream", "music"], {"stream", "music"}, {"spotifi": 0.78}, 0.22
    )
    assert spotify.missing and spotify.incidental == ()
    assert read_query(words, known, {}, 0.22).missing
