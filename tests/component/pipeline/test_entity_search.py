"""Entity-aware search end to end on the real embedded store and model: the entity graph
written at ingest, the bridge round over a small multi-hop corpus, comparisons, lookups,
typos and "no good match" on the bundled catalog."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.multihop import BRIDGE, COMPARISON, records

from agentic_search.config import Settings
from agentic_search.pipeline.graph import walk
from agentic_search.service import SearchService
from agentic_search.sync.indexer import Indexer
from agentic_search.sync.links import relink
from agentic_search.wire import LINKED_FROM_KEY, LINKS_KEY, GraphSource


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory, embedder) -> Iterator[SearchService]:
    home = tmp_path_factory.mktemp("multihop") / "home"
    engine = SearchService.create(
        Settings(agentic_search_home=home, cache_backend="none"), "documents", embedder=embedder
    )
    engine.ingest_records(records())
    yield engine
    engine.close()


def payload(engine: SearchService, rid: str) -> dict:
    return engine.deps.store.retrieve_records(engine.schema, [rid])[rid].payload


def test_ingest_writes_the_mention_graph_both_ways(docs: SearchService):
    # GIVEN the corpus ingested WHEN the link pass ran THEN "Kiss and Tell" points at the
    # woman it names, and she knows who names her
    assert payload(docs, "m1")[LINKS_KEY] == {"mention": ["m2"]}
    assert "m1" in payload(docs, "m2")[LINKED_FROM_KEY]["mention"]
    assert payload(docs, "m5")[LINKS_KEY] == {"mention": ["m9"]}
    # AND rebuilding it from scratch changes nothing
    assert relink(docs.deps).rewritten == 0


def test_a_new_record_is_linked_from_the_records_that_already_named_it(docs: SearchService):
    # GIVEN the film's and Janet Waldo's articles say "Corliss Archer", a name no record had
    # WHEN a record of that name arrives (a small write: the incremental link pass)
    docs.ingest_records([{"id": "m11", "title": "Corliss Archer", "text": "A fictional girl."}])
    try:
        # THEN the articles that named her point at her, and she knows who names her
        assert "m11" in payload(docs, "m1")[LINKS_KEY]["mention"]
        assert "m11" in payload(docs, "m7")[LINKS_KEY]["mention"]
        assert sorted(payload(docs, "m11")[LINKED_FROM_KEY]["mention"]) == ["m1", "m7"]
        # AND "Meet Corliss Archer" still names its own show, not her (the longest name wins)
        assert "m11" not in (payload(docs, "m3").get(LINKS_KEY) or {}).get("mention", [])
    finally:
        c = docs.deps
        Indexer(c.store, c.embedder, c.keyword).delete(docs.schema, ["m11"])
        relink(c)
    assert "m11" not in payload(docs, "m1")[LINKS_KEY]["mention"]


def test_the_walk_ranks_what_the_seed_names_by_the_question(docs: SearchService):
    _, question, _ = BRIDGE
    got = walk(
        docs.deps,
        GraphSource(seeds=["m1"], text=question, aspect="content", exclude=["m1"]),
    )
    # Shirley Temple, named by the film, is reached along the mention edge
    assert [h.id for h in got] == ["m2"]
    assert got[0].payload["_via"] == "mention:m1" and got[0].score > 0


def test_the_walk_never_returns_a_hub(docs: SearchService):
    """GIVEN Shirley Temple (m2) is mentioned by at least one record THEN a walk that allows
    no mentioning record at all returns nothing, and one allowing as many returns her."""
    _, question, _ = BRIDGE
    mentions = len(payload(docs, "m2")[LINKED_FROM_KEY]["mention"])
    assert mentions >= 1

    def walked(limit: int) -> list[str]:
        source = GraphSource(
            seeds=["m1"], text=question, aspect="content", exclude=["m1"], max_mentions=limit
        )
        return [h.id for h in walk(docs.deps, source)]

    assert "m2" not in walked(mentions - 1)
    assert walked(mentions) == ["m2"]


def test_a_bridge_question_places_the_record_its_evidence_names(docs: SearchService):
    _, question, (first, second) = BRIDGE
    one = docs.search(question, limit=1)
    assert one.intent.bridge and one.output.candidates[0].id == first
    bridges = [b for r in one.evidence.report.rounds for b in r.bridges]
    assert [(b.id, b.after, b.via) for b in bridges] == [(second, first, f"mention:{first}")]
    two = docs.search(question, limit=2)
    assert [c.id for c in two.output.candidates] == [first, second]
    hits = {h.source for h in two.output.candidates[1].provenance.hits}
    assert f"graph:mention:{first}" in hits or len(hits) > 0


def test_a_comparison_of_named_documents_pins_both(docs: SearchService):
    _, question, (a, b) = COMPARISON
    resp = docs.search(question, limit=5)
    assert resp.intent.primary_goal == "compare" and not resp.intent.bridge
    assert [c.id for c in resp.output.candidates[:2]] == [a, b]
    assert resp.comparison is not None and [r.id for r in resp.comparison.records] == [a, b]


# ----- the bundled catalog -----------------------------------------------------------------------


def ids(resp) -> list[str]:
    return [c.id for c in resp.output.candidates]


def test_cursor_vs_windsurf(tools_engine: SearchService):
    resp = tools_engine.search("Cursor vs Windsurf", limit=10)
    # THEN both named tools first, in the order named, then their closest competitors
    assert ids(resp)[:2] == ["cursor", "windsurf"]
    assert {"trae", "void", "zed", "vs-code", "github-copilot"} & set(ids(resp)[2:])
    # AND coverage counts each only by its own record (never by Supermaven's or Void's text)
    cov = resp.evidence.coverage
    covering = {i.label: i.evidence for i in cov.items if i.kind == "entity"}
    assert covering == {"Cursor": ["cursor"], "Windsurf": ["windsurf"]}
    assert resp.comparison is not None
    assert resp.comparison.common["deployment"] == ["Cloud"]


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("compare Pinecone and Qdrant", ["pinecone", "qdrant"]),
        ("is Tabnine better than Copilot", ["tabnine", "github-copilot"]),
        ("copilt", ["github-copilot"]),
        ("ollama pricing", ["ollama"]),
        ("windsurf ide", ["windsurf"]),
    ],
)
def test_named_tools_come_first(tools_engine: SearchService, query: str, first: list[str]):
    assert ids(tools_engine.search(query, limit=10))[: len(first)] == first


def test_a_typo_of_a_vocabulary_phrase_still_finds_the_category(tools_engine: SearchService):
    resp = tools_engine.search("vectr databse", limit=5)
    assert resp.intent.matches == {"categories": ["Vector Database"]}
    cats = {c.metadata.get("category") for c in resp.output.candidates}
    assert cats == {"Vector Database"}


def test_an_alternative_never_returns_the_tool_itself(tools_engine: SearchService):
    assert "cursor" not in ids(tools_engine.search("free alternative to Cursor", limit=10))


@pytest.mark.parametrize(
    "query",
    ["restaurant table reservation system", "3D printing slicer for my printer"],
)
def test_no_good_match_for_what_the_catalog_does_not_hold(tools_engine: SearchService, query):
    resp = tools_engine.search(query, limit=10)
    quality = resp.output.answer_quality
    assert quality is not None and quality.verdict == "none"
    assert ids(resp) == [] and quality.withheld == 10


def test_a_good_match_is_said_to_be_good(tools_engine: SearchService):
    resp = tools_engine.search("open source vector database I can self-host", limit=10)
    assert resp.output.answer_quality.verdict == "good"  # type: ignore[union-attr]
    assert len(resp.output.candidates) == 10


def test_released_since_is_a_year_filter(tools_engine: SearchService):
    resp = tools_engine.search("coding agent released since 2025", limit=10)
    assert [f.label() for f in resp.plan.filters] == ["released>=2025"]
    assert resp.output.candidates
    assert all(c.metadata["released"] >= 2025 for c in resp.output.candidates)


def test_the_link_pass_is_idempotent_on_the_catalog(tools_engine: SearchService, tmp_path: Path):
    assert relink(tools_engine.deps).rewritten == 0
