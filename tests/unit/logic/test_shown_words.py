"""The words a person is shown are the query's, as written (issue 47, item 10): "in no
record: healthcar / bakeri", keywords "complet, generat", "tool, to, file", "cursor, vs",
"product., json." were stems, stopwords, cue words and punctuation."""

from __future__ import annotations

from agentic_search.logic.keywords import shown_words
from agentic_search.logic.quality import CandidateEvidence, answer_quality, read_query
from agentic_search.logic.schema import load_schema
from agentic_search.logic.text import default_analyzer

ANALYZER = default_analyzer()


def test_written_forms_map_each_term_to_the_word_as_written():
    written = ANALYZER.written_forms("Autocomplete for Bakeries, code completion (product.json).")
    assert written == {
        "autocomplet": "Autocomplete",
        "bakeri": "Bakeries",
        "code": "code",
        "complet": "completion",
        "product": "product",
        "json": "json",
    }


def test_matched_keywords_are_the_users_words_never_stop_or_cue_words_or_punctuation():
    for query, expected in (
        ("tool to convert a pdf file", ["tool", "convert", "pdf", "file"]),
        ("Cursor vs Windsurf", ["Cursor", "Windsurf"]),
        ("export product. json.", ["export", "product", "json"]),
        ("best code completion generator for my team", ["code", "completion", "generator", "team"]),
    ):
        terms = [*ANALYZER.terms(query), "to", "vs", "best", "my"]  # what a record could hold
        assert shown_words(terms, ANALYZER.written_forms(query)) == expected, query


def test_a_term_the_user_did_not_write_is_not_shown():
    written = ANALYZER.written_forms("chatbot for healthcare")
    assert shown_words(["chatbot", "model", "generat"], written) == ["chatbot"]


def test_words_in_no_record_are_named_as_written():
    spec = load_schema("tools").quality
    query = "AI for bakeries with blurry photos"
    words = ANALYZER.terms(query)
    reading = read_query(words, known={"ai", "photo"}, written=ANALYZER.written_forms(query))
    verdict = answer_quality(spec, [CandidateEvidence(id="x", relevance=0.3)], 0.5, reading)
    assert "in no record: bakeries, blurry" in verdict.reason
    assert "bakeri" not in verdict.reason.replace("bakeries", "")
