"""Coverage targets, evidence matching, the deterministic grader and contradictions, by hand."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.builders import LOCAL, QUERY, ev, intent_for

from agentic_search.logic.coverage import (
    MATCHER_CACHE_ENTRIES,
    MAX_TERM_TARGETS,
    DeterministicGrader,
    EvidenceMatcher,
    coverage_targets,
    find_contradictions,
)
from agentic_search.logic.schema import DomainSchema
from agentic_search.logic.text import STEM_SLACK, Analyzer, default_analyzer
from agentic_search.wire import (
    CoverageTarget,
    Filter,
)

# ----- 2. coverage -------------------------------------------------------------------------------


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
    targets = coverage_targets(intent_for(), tools_schema, default_analyzer())
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
    weights = tools_schema.tuning.coverage
    assert [weights.weight(t.kind) for t in targets] == [3.0, 2.0, 3.0, 1.0, 1.0]


def test_coverage_targets_skip_phrase_naming_the_reference_tool(
    tools_schema: DomainSchema,
) -> None:
    """GIVEN the reference tool's name among the must-preserve terms
    WHEN targets are built THEN it is not a phrase target (evidence about it is not wanted)."""
    intent = intent_for(must_preserve_terms=["github copilot", "pair programmer"])
    phrases = [t.label for t in coverage_targets(intent, tools_schema, default_analyzer())]
    assert '"github copilot"' not in phrases
    assert '"pair programmer"' in phrases


def test_coverage_targets_must_constraint_keeps_must(tools_schema: DomainSchema) -> None:
    """GIVEN a must constraint WHEN targets are built THEN its target is must too."""
    must_local = LOCAL.model_copy(update={"must": True})
    intent = intent_for(constraints=[must_local], matches={}, must_preserve_terms=[], keywords=[])
    targets = coverage_targets(intent, tools_schema, default_analyzer())
    assert [(t.kind, t.must) for t in targets] == [("constraint", True)]


def test_a_pasted_paragraph_keeps_its_most_said_terms_as_targets(
    tools_schema: DomainSchema,
) -> None:
    """GIVEN a paragraph of 40 distinct content words, 'kubernetes' said three times and
    'monitoring' twice WHEN targets are built THEN MAX_TERM_TARGETS term targets remain, the
    repeated terms among them, the rest in the order said; a short query keeps every term."""
    analyzer = default_analyzer()
    words = [f"w{i:02d}x" for i in range(40)]
    query = " ".join([*words, "kubernetes monitoring kubernetes monitoring kubernetes"])
    intent = intent_for(
        query=query,
        normalized_query=query,
        constraints=[],
        matches={},
        must_preserve_terms=[],
        keywords=list(dict.fromkeys(analyzer.terms(query))),
    )
    terms = [t.label for t in coverage_targets(intent, tools_schema, analyzer) if t.kind == "term"]
    assert len(terms) == MAX_TERM_TARGETS
    assert terms[-2:] == ["kubernet", "monitor"]
    assert terms[:-2] == analyzer.terms(" ".join(words))[: MAX_TERM_TARGETS - 2]
    short = intent.model_copy(update={"keywords": analyzer.terms(" ".join(words[:10]))})
    assert len(coverage_targets(short, tools_schema, analyzer)) == 10


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


def test_a_record_rewritten_under_the_same_id_is_read_anew(matcher: EvidenceMatcher) -> None:
    """GIVEN a matcher that has read evidence e1 (it lives as long as the process) WHEN the
    record is re-written under the same id THEN its new text decides, not the cached terms."""
    run = CoverageTarget(kind="term", label="run", text="run")
    assert matcher.supports(run, ev("e1", text="running offline"))
    assert not matcher.supports(run, ev("e1", text="a hosted editor"))
    assert matcher.supports(run, ev("e1", title="Run anywhere", text="a hosted editor"))


def test_the_matcher_keeps_a_bounded_number_of_evidences(tools_schema: DomainSchema) -> None:
    """GIVEN a long-running process WHEN more distinct evidences than the bound are matched
    THEN the matcher keeps at most MATCHER_CACHE_ENTRIES of them, and a dropped one still
    matches (read again)."""
    matcher = EvidenceMatcher(tools_schema, default_analyzer())
    run = CoverageTarget(kind="term", label="run", text="run")
    for i in range(MATCHER_CACHE_ENTRIES + 50):
        matcher.supports(run, ev(f"e{i}", text=f"running item {i}"))
    assert len(matcher._terms) == MATCHER_CACHE_ENTRIES
    assert "e0" not in matcher._terms
    assert matcher.supports(run, ev("e0", text="running item 0"))


class CountingAnalyzer(Analyzer):
    """The analyzer, counting the characters it is given (the work of an analysis)."""

    def __init__(self) -> None:
        super().__init__()
        self.chars = 0

    def terms(self, text: str) -> list[str]:
        self.chars += len(text)
        return super().terms(text)


#: Words whose stems differ most from them (two characters, the most Porter2 changes) and the
#: rules behind it: exceptions, step 1b's added "e", step 1c's "i", step 2 and 3 replacements.
HARD_WORDS = [
    "dying",
    "lying",
    "tying",
    "bying",
    "skies",
    "skis",
    "idly",
    "gently",
    "ugly",
    "early",
    "only",
    "singly",
    "news",
    "hoping",
    "hopping",
    "filing",
    "academy",
    "ability",
    "sensibility",
    "conditional",
    "relational",
    "valency",
    "reasonably",
    "organizing",
    "organization",
    "generously",
    "hopefulness",
    "effectiveness",
    "activity",
    "fluently",
    "hesitancy",
    "analogy",
    "electrical",
    "electricity",
    "formalize",
    "formalism",
    "goodness",
    "agreed",
    "agreedly",
    "feed",
    "proceeded",
    "exceeding",
    "succeeded",
    "inning",
    "outing",
    "herring",
    "earring",
]

#: A vocabulary for generated texts: mixed case, digits, underscores, hyphens, non-ASCII,
#: stopwords and suffixed forms, so words start inside others ("cell" in "excellent").
VOCAB = [
    *HARD_WORDS,
    *[
        "cell",
        "cells",
        "cellular",
        "excellent",
        "excel",
        "Cancer",
        "cancers",
        "the",
        "a",
        "of",
        "in",
        "to",
        "is",
    ],
    *[
        "Running",
        "runs",
        "ran",
        "run",
        "re-run",
        "self-hosted",
        "x_ray",
        "2019",
        "covid-19",
        "naïve",
        "café",
        "ÜBER",
    ],
    *[
        "Vim",
        "Neovim",
        "vimrc",
        "mitochondria",
        "mitochondrial",
        "Mitochondrion",
        "protein",
        "proteins",
    ],
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(HARD_WORDS) | st.text("abcdeilnorstuy", min_size=2, max_size=12))
def test_a_stem_differs_from_its_word_in_its_last_stem_slack_characters(word: str) -> None:
    """GIVEN a word (the hard cases, or generated letters) THEN every term the analyzer makes
    of it starts the word but for its last STEM_SLACK characters: what the matcher's search
    for a term relies on (a stemmer that broke it fails here)."""
    for stem in default_analyzer().terms(word):
        assert word.startswith(stem[: len(stem) - STEM_SLACK]), (word, stem)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(VOCAB), max_size=30),
    st.sampled_from(["", " ", ", ", "-", "; ", "_", "."]),
    st.lists(st.sampled_from(VOCAB), min_size=1, max_size=5),
)
def test_has_term_is_the_analysis_answer(
    tools_schema: DomainSchema, words: list[str], sep: str, asked: list[str]
) -> None:
    """GIVEN a text of vocabulary words and terms of its own and of other words WHEN the
    matcher is asked for each term THEN it answers what the whole text's analysis says
    (``stem in terms``), whether it searched or analysed (a 3-letter stem is analysed)."""
    text = sep.join(words)
    stems = default_analyzer().terms(text)
    wanted = [*stems, *default_analyzer().terms(" ".join(asked)), "cel", "vim", "runn"]
    matcher = EvidenceMatcher(tools_schema, default_analyzer())
    e = ev("e1", title=words[0] if words else None, text=text)
    full = set(default_analyzer().terms(f"{e.title or ''} {e.text}"))
    for stem in wanted:
        assert matcher.has_term(e, stem) is (stem in full), stem


@pytest.mark.parametrize("stem", ["-mail", "--ab", "c++", "e-mail", "x y", ".net", "ab"])
def test_a_term_that_is_no_analysed_word_ends_and_answers_no(
    tools_schema: DomainSchema, stem: str
) -> None:
    """GIVEN a term target that no analysis makes (an LLM's keyword with a hyphen, a plus, a
    space or a leading dot) WHEN matched against a text that holds it verbatim THEN the
    search ends and answers what the whole text's analysis says: no (its terms are word
    characters only)."""
    text = "Send e-mail -mail --ab c++ x y .net to ab ab-cd"
    matcher = EvidenceMatcher(tools_schema, default_analyzer())
    want = stem in set(default_analyzer().terms(text))
    assert matcher.has_term(ev("e1", text=text), stem) is want


def test_a_missing_term_does_not_analyse_the_whole_text(tools_schema: DomainSchema) -> None:
    """GIVEN a long evidence text and a term whose stem (less its last 2 characters) starts
    no word of it WHEN the matcher is asked THEN it answers no without analysing the text:
    the analyzer is given nothing; a term that is there is found by analysing its word alone
    ('mitochondrial', 13 characters, not the 2,000-character text); asked again, nothing more
    is analysed."""
    analyzer = CountingAnalyzer()
    matcher = EvidenceMatcher(tools_schema, analyzer)
    text = "A study of mitochondrial function in cells. " * 45
    e = ev("e1", text=text)
    absent = CoverageTarget(kind="term", label="autophagi", text="autophagi")
    present = CoverageTarget(kind="term", label="mitochondri", text="mitochondri")
    assert not matcher.supports(absent, e)
    assert analyzer.chars == 0
    assert matcher.supports(present, e)
    assert analyzer.chars == len("mitochondrial")
    assert matcher.supports(present, e) and not matcher.supports(absent, e)
    assert analyzer.chars == len("mitochondrial")


def test_grading_looks_each_evidence_up_once(tools_schema: DomainSchema) -> None:
    """GIVEN 5 targets (a constraint, a phrase, a preference, two terms) and three pieces of
    evidence WHEN graded THEN the matcher looks each evidence up once (not once per target
    and evidence: 3, not 9 for the phrase and terms), and the coverage is what supports()
    says pair by pair."""
    looked: list[str] = []

    class Counting(EvidenceMatcher):
        def _read(self, ev):  # type: ignore[no-untyped-def]
            looked.append(ev.id)
            return super()._read(ev)

    matcher = Counting(tools_schema, default_analyzer())
    evidence = [
        ev("e1", text="An AI pair programmer", fields={"deployment": ["Local"]}),
        ev("e2", title="Vim", text="running in the terminal"),
        ev("e3", text="chat about code", fields={"functionality": ["Code Completion"]}),
    ]
    targets = _targets_for_grading()
    cov = DeterministicGrader(tools_schema, matcher).grade(targets, evidence)
    assert looked == ["e1", "e2", "e3"]
    plain = EvidenceMatcher(tools_schema, default_analyzer())
    assert [i.evidence for i in cov.items] == [
        [e.id for e in evidence if plain.supports(t, e)] for t in targets
    ]
    assert [i.evidence for i in cov.items] == [["e1"], ["e1"], ["e3"], ["e2"], ["e2"]]


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
