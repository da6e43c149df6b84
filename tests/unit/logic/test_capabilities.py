"""Needs read by meaning (issue 27, item 5): the capability vocabulary entries embedded once,
the query matched to them by cosine, the match and its score in the intent. The embedder is
the edge: a bag-of-words embedder over a few words stands in for the model here (the real
model is in tests/component/pipeline/test_capabilities_model.py)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from agentic_search.logic.capabilities import CapabilityMatcher, entry_texts
from agentic_search.logic.intent import CatalogLookup
from agentic_search.logic.intent_rules import RuleBasedIntentExtractor
from agentic_search.logic.planner import RuleBasedPlanner
from agentic_search.logic.schema import DomainSchema

WORDS = ["video", "editing", "edit", "slides", "music", "song", "security", "image", "photo"]


class BagOfWords:
    """Unit vectors over :data:`WORDS` plus one small dimension of their own for documents and
    one for queries (so texts that share no word have cosine 0)."""

    def __init__(self) -> None:
        self.document_calls = 0

    def _vec(self, text: str, side: list[float]) -> np.ndarray:
        toks = text.lower().replace(",", " ").replace(":", " ").split()
        v = np.array([float(sum(t.startswith(w) for t in toks)) for w in WORDS] + side)
        return (v / np.linalg.norm(v)).astype(np.float32)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.document_calls += 1
        return np.stack([self._vec(t, [0.05, 0.0]) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._vec(text, [0.0, 0.05])


@pytest.fixture()
def bow() -> BagOfWords:
    return BagOfWords()


@pytest.fixture()
def matcher(tools_schema: DomainSchema, bow: BagOfWords) -> CapabilityMatcher:
    return CapabilityMatcher(tools_schema, bow.embed_documents, bow.embed_query)


def test_entries_come_from_the_declared_vocabularies(tools_schema: DomainSchema) -> None:
    entries = entry_texts(tools_schema)
    assert tools_schema.capabilities is not None
    assert {v for v, *_ in entries} == set(tools_schema.capabilities.vocabularies)
    texts = {(v, c): t for v, c, t in entries}
    assert texts[("functionality", "Video Editing")] == "Video Editing: edit videos"


def test_entries_are_embedded_once(matcher: CapabilityMatcher, bow: BagOfWords) -> None:
    for q in ["edit my slides video", "a song", "edit a video"]:
        matcher.scores(q)
    assert bow.document_calls == 1


def test_match_is_the_best_entry_above_the_threshold(matcher: CapabilityMatcher) -> None:
    got = matcher.match("edit a video of my slides")
    assert [(m.vocabulary, m.value) for m in got] == [("functionality", "Video Editing")]
    assert got[0].score >= matcher.min_score
    assert matcher.match("book a table for two") == []


def test_extractor_adds_the_need_read_by_meaning_with_its_score(
    tools_schema: DomainSchema, catalog_lookup: CatalogLookup, matcher: CapabilityMatcher
) -> None:
    ex = RuleBasedIntentExtractor(tools_schema, catalog_lookup, capabilities=matcher)
    intent = ex.extract("edit the video of my slides")
    assert intent.matches.get("functionality") == ["Video Editing"]
    assert [(m.value, m.score >= 0.5) for m in intent.by_meaning] == [("Video Editing", True)]
    plan = RuleBasedPlanner(tools_schema).plan(intent)
    assert plan.strategy in ("capability-focused", "multi-collection-hybrid")
    assert any("Video Editing" in p.label() for s in plan.structured_sources for p in s.preferences)


def test_words_that_match_a_vocabulary_are_not_read_again_by_meaning(
    tools_schema: DomainSchema, catalog_lookup: CatalogLookup, matcher: CapabilityMatcher
) -> None:
    ex = RuleBasedIntentExtractor(tools_schema, catalog_lookup, capabilities=matcher)
    intent = ex.extract("video editing for my slides")
    assert intent.by_meaning == []
    assert "Video Editing" in intent.matches.get("functionality", [])


def test_a_threshold_calibrated_for_another_model_matches_nothing(
    tools_schema: DomainSchema, bow: BagOfWords
) -> None:
    # the tools schema's min_score is on MiniLM's cosine scale (calibrated_for); e5-small's
    # cosines run far higher, so under it the step is off rather than matching everything
    spec = tools_schema.capabilities
    assert spec is not None and spec.calibrated_for == ["all-MiniLM-L6-v2-int8"]
    other = CapabilityMatcher(
        tools_schema, bow.embed_documents, bow.embed_query, model=lambda: "multilingual-e5"
    )
    assert other.scores("edit a video of my slides")  # scored, but not trusted
    assert other.match("edit a video of my slides") == []
    same = CapabilityMatcher(
        tools_schema, bow.embed_documents, bow.embed_query, model=lambda: "all-MiniLM-L6-v2-int8"
    )
    assert [m.value for m in same.match("edit a video of my slides")] == ["Video Editing"]


class DictMemo:
    """An :class:`~agentic_search.ports.ArrayMemo` in a dict (a folder between processes,
    in the adapter's own test)."""

    def __init__(self) -> None:
        self.kept: dict[str, np.ndarray] = {}

    def get_or_compute(self, key, compute, shape):
        if key in self.kept and self.kept[key].shape == shape:
            return self.kept[key]
        self.kept[key] = compute()
        return self.kept[key]


IDENTITY = '{"model": "bag-of-words", "dim": 11}'


def memoized(
    schema: DomainSchema, bow: BagOfWords, memo: DictMemo, identity: str = IDENTITY
) -> CapabilityMatcher:
    """A matcher over ``bow`` that keeps its entries' vectors in ``memo`` under ``identity``."""
    return CapabilityMatcher(
        schema,
        bow.embed_documents,
        bow.embed_query,
        memo=memo.get_or_compute,
        identity=lambda: identity,
    )


def test_a_second_process_reads_the_entries_vectors_from_the_memo(
    tools_schema: DomainSchema,
) -> None:
    """GIVEN a memo a first matcher filled WHEN a new matcher (a new process) scores a query
    THEN it embeds no entry, and its scores equal the first one's; AND a memo keyed for
    another embedder identity or other entry texts is not read."""
    memo, first, second = DictMemo(), BagOfWords(), BagOfWords()
    a, b = memoized(tools_schema, first, memo), memoized(tools_schema, second, memo)
    assert a.scores("edit a video from my slides") == b.scores("edit a video from my slides")
    assert (first.document_calls, second.document_calls) == (1, 0)
    assert len(memo.kept) == 1
    other_model = a.matrix_key('{"model": "other", "dim": 11}')
    assert other_model != a.matrix_key(IDENTITY)
    changed = tools_schema.model_copy(deep=True)
    changed.vocabularies["functionality"]["Video Editing"] = ["edit videos", "cut clips"]
    c = CapabilityMatcher(changed, first.embed_documents, first.embed_query)
    assert c.matrix_key(IDENTITY) != a.matrix_key(IDENTITY)


def test_an_identity_without_a_dimension_is_not_memoized(tools_schema: DomainSchema) -> None:
    """GIVEN an embedder whose dimension is learnt from its first answer WHEN entries are
    embedded THEN the memo is not used (its shape check would have nothing to hold to)."""
    memo, bow = DictMemo(), BagOfWords()
    memoized(tools_schema, bow, memo, '{"model": "api", "dim": null}').matrix()
    assert memo.kept == {} and bow.document_calls == 1
