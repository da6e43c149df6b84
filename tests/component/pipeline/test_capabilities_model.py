"""Needs read by meaning with the real MiniLM embedder (issue 27, item 5): a job named without
any vocabulary word reaches the capability it needs, with its cosine in the intent and in
``--explain``; the entries are embedded once per process (the process caches), not per query."""

from __future__ import annotations

from pathlib import Path

from support.fakes import CountingEmbedder

from agentic_search.dependencies import ProcessCaches
from agentic_search.logic.capabilities import CapabilityMatcher
from agentic_search.logic.intent import CatalogLookup
from agentic_search.logic.intent_rules import RuleBasedIntentExtractor
from agentic_search.logic.schema import DomainSchema


def test_job_phrased_need_reaches_its_capability(
    tools_schema: DomainSchema, catalog_lookup: CatalogLookup, embedder
) -> None:
    matcher = CapabilityMatcher(tools_schema, embedder.embed_documents, embedder.embed_query)
    ex = RuleBasedIntentExtractor(tools_schema, catalog_lookup, capabilities=matcher)
    intent = ex.extract("upscale my old photos")
    assert intent.matches.get("functionality") == ["Image Editing"]
    (m,) = intent.by_meaning
    assert m.value == "Image Editing" and m.score >= matcher.min_score


def test_unanswerable_job_is_given_no_capability(
    tools_schema: DomainSchema, catalog_lookup: CatalogLookup, embedder
) -> None:
    matcher = CapabilityMatcher(tools_schema, embedder.embed_documents, embedder.embed_query)
    ex = RuleBasedIntentExtractor(tools_schema, catalog_lookup, capabilities=matcher)
    intent = ex.extract("track my running pace and heart rate on my watch")
    assert intent.by_meaning == []
    assert not intent.matches.get("functionality")


def test_search_embeds_the_entries_once_and_explains_the_score(
    tmp_path: Path, embedder, tools_schema: DomainSchema
) -> None:
    from rich.console import Console

    from agentic_search.config import Settings
    from agentic_search.pipeline.catalog import capability_matcher, extract_by_rules
    from agentic_search.service import SearchService
    from agentic_search_cli.render import explain_panel

    counting = CountingEmbedder(embedder)
    engine = SearchService.create(
        Settings(agentic_search_home=tmp_path), "tools", embedder=counting
    )
    try:
        c = engine.deps
        assert isinstance(c.caches, ProcessCaches)
        first = extract_by_rules(c, "upscale my old photos")
        calls = counting.calls
        again = extract_by_rules(c, "enlarge my scanned photos without blur")
        assert counting.calls == calls  # the entries were embedded once
        assert capability_matcher(c) is c.caches.capabilities
        assert first.by_meaning and first.by_meaning[0].value == "Image Editing"
        assert again.query.startswith("enlarge")
        resp = engine.search("upscale my old photos", limit=5)
        console = Console(record=True, width=200)
        console.print(explain_panel(resp))
        assert "by meaning: functionality=Image Editing (cosine 0." in console.export_text()
    finally:
        engine.close()


def test_document_vectors_of_minilm_come_from_its_query_session_bit_for_bit(
    tools_schema: DomainSchema,
) -> None:
    """GIVEN a fresh MiniLM embedder (no prefixes: its two sides are one model) WHEN the
    search-time document vectors of the capability entries and of single words are asked for
    THEN they equal ``embed_documents``' bit for bit, and the document session was not made
    for them (a second onnxruntime session: ~0.3 s and ~100 MB of a CLI search)."""
    import numpy as np

    from agentic_search.adapters.onnx_embedder import OnnxMiniLMEmbedder
    from agentic_search.logic.capabilities import entry_texts
    from agentic_search.pipeline.embedding import document_vectors

    fresh = OnnxMiniLMEmbedder()
    texts = [t for *_, t in entry_texts(tools_schema)] + ["Spotify", "backup", "figure"]
    got = document_vectors(fresh, texts)
    assert "documents" not in fresh._sessions
    assert np.array_equal(got, fresh.embed_documents(texts))


def test_an_embedder_with_prefixes_gives_its_document_side() -> None:
    """GIVEN an embedder whose queries and passages carry different prefixes (e5) WHEN
    search-time document vectors are asked for THEN its ``embed_documents`` answers."""
    import numpy as np

    from agentic_search.pipeline.embedding import document_vectors
    from agentic_search.wire import EmbedderIdentity

    class Prefixed:
        name, dim = "e5-like", 2
        identity = EmbedderIdentity(
            model="e5-like", dim=2, query_prefix="query: ", passage_prefix="passage: "
        )

        def embed_documents(self, texts):
            return np.ones((len(texts), 2), dtype=np.float32)

        def embed_queries(self, texts):
            raise AssertionError("the query side answered for documents")

        def embed_query(self, text):
            raise AssertionError("the query side answered for documents")

    assert document_vectors(Prefixed(), ["a", "b"]).shape == (2, 2)
