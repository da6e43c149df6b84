"""The multi-round executor end to end on the bundled catalog (Qdrant Edge, MiniLM).

The HyDE LLM and the rerank API are the edge of the system: they are served by a real HTTP
server on loopback that speaks the OpenAI chat-completions and the rerank API shapes.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from support.budgets import UNBOUNDED

from agentic_search.adapters.hyde import OpenAIHyde
from agentic_search.adapters.rerank import ApiReranker
from agentic_search.config import Settings
from agentic_search.dependencies import Dependencies
from agentic_search.logic.filters import matches
from agentic_search.pipeline.catalog import extract_by_rules
from agentic_search.pipeline.runner import LocalRunner, RunOptions, from_plan
from agentic_search.pipeline.sources import merge, run_sources
from agentic_search.service import SearchService
from agentic_search.wire import (
    EvidencePack,
    ExecutorCaps,
    IntentState,
    QueryExecutorOutput,
    QueryPlan,
    VectorSource,
)

HYDE_PASSAGE = (
    "A self-hosted vector database that stores embeddings and answers nearest neighbour "
    "queries with metadata filtering."
)


class _Edge(BaseHTTPRequestHandler):
    """/v1/chat/completions answers a fixed passage; /rerank scores by text length (longer =
    higher) or fails with 500 when the server's ``fail_rerank`` is set."""

    def log_message(self, *args: Any) -> None:  # keep pytest output clean
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append((self.path, body))  # type: ignore[attr-defined]
        if self.path.endswith("/chat/completions"):
            answer = {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": HYDE_PASSAGE},
                    }
                ],
            }
        elif self.path == "/rerank" and not self.server.fail_rerank:  # type: ignore[attr-defined]
            docs = body["documents"]
            answer = {
                "results": [
                    {"index": i, "relevance_score": float(len(d))} for i, d in enumerate(docs)
                ]
            }
        else:
            self.send_response(500)
            self.end_headers()
            return
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def edge() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Edge)
    server.requests = []  # type: ignore[attr-defined]
    server.fail_rerank = False  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()


def run_rounds(
    deps: Dependencies, plan: QueryPlan, intent: IntentState, caps: ExecutorCaps | None = None
) -> tuple[QueryExecutorOutput, EvidencePack]:
    """The executor's rounds for ``plan``: the ASL walked from PrepareRound, no result cache,
    under ``caps`` (default: the executor's) with a round budget no busy host reaches."""
    lifted = {"round_budget_ms": UNBOUNDED["round_budget_ms"]}
    caps = (caps or ExecutorCaps()).model_copy(update=lifted)
    state = from_plan(deps, plan, intent, caps)
    result = LocalRunner(lambda _: deps).run_asl(
        state, RunOptions(start_at="PrepareRound", cache=False)
    )
    resp = result.state.built_response
    assert resp is not None
    return resp.output, resp.evidence


def _url(server: ThreadingHTTPServer, path: str) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}{path}"


def test_round_two_covers_a_preference_that_round_one_missed(tools_engine: SearchService):
    # GIVEN a query whose soft preference (industry Healthcare) no chatbot in the first
    # round's top candidates carries
    resp = tools_engine.search("chatbot for healthcare", limit=10)
    report = resp.evidence.report
    # THEN round 1 reports it missing and asks round 2 a query aimed at it
    r1, r2 = report.rounds[0], report.rounds[1]
    assert "industries ~ Healthcare" in r1.missing
    assert r1.decision.startswith("continue")
    aimed = [q for q in r2.queries if q.target == "industries ~ Healthcare"]
    assert {m for q in aimed for m in q.modes} >= {"structured"}
    # AND round 2 adds evidence from the Healthcare industry and covers the preference
    assert "industries ~ Healthcare" in r2.newly_covered
    added = [e for e in resp.evidence.evidence if e.id in r2.new_evidence]
    assert added and all("Healthcare" in e.fields["industries"] for e in added)
    assert all(2 in e.rounds for e in added)
    # AND the evidence pack kept that coverage and the run says why it stopped
    assert "industries ~ Healthcare" in resp.evidence.coverage.covered
    assert report.stop_reason == r2.decision and "threshold" in report.stop_reason


def test_a_search_that_stops_after_round_one_ranks_exactly_like_the_one_shot_executor(
    tools_engine: SearchService,
):
    query = "open source vector database I can self-host"
    multi = tools_engine.search(query, limit=10)
    one_round = tools_engine.search(query, limit=10, rounds=1)
    intent = extract_by_rules(tools_engine.deps, query)
    plan = tools_engine.deps.planner.plan(intent, limit=10)
    # the one-shot ranking: the plan's sources fused, nothing else
    results, _ = run_sources(tools_engine.deps, plan)
    fused, _ = merge(results, plan.fusion, plan.rrf_k)
    assert len(multi.evidence.report.rounds) == 1
    assert len(one_round.evidence.report.rounds) == 1
    expected = [(f.id, round(f.score, 6)) for f in fused[:10]]
    assert [(c.id, c.score) for c in multi.output.candidates] == expected
    assert [(c.id, c.score) for c in one_round.output.candidates] == expected


def _round_one(
    deps: Dependencies, query: str, limit: int
) -> tuple[IntentState, QueryPlan, list, list]:
    """The rules' intent and plan of ``query``, its round-1 source lists and their fusion."""
    intent = extract_by_rules(deps, query)
    plan = deps.planner.plan(intent, limit=limit)
    results, _ = run_sources(deps, plan)
    fused, _ = merge(results, plan.fusion, plan.rrf_k)
    return intent, plan, results, fused


def test_evidence_provenance_is_the_candidates_provenance_without_building_candidates(
    tools_engine: SearchService,
):
    """A round's evidence takes its provenance from :func:`provenances`, which builds no
    candidate: it must give each record exactly the provenance :func:`hydrate` gives that
    record's candidate, from the same inputs (hits, min-max scores, matched terms and values)."""
    from agentic_search.pipeline.hydrate import hydrate, provenances

    c = tools_engine.deps
    query = "open source vector database I can self-host"
    intent, plan, results, fused = _round_one(c, query, limit=20)
    assert len([r for r in results if r.hits]) >= 2 and len(fused) >= 20
    candidates = hydrate(c, plan, intent, results, fused[:20], query_text=query)
    provs = provenances(c, plan, intent, results, fused[:20], query_text=query)
    assert list(provs) == [cand.id for cand in candidates]
    assert provs == {cand.id: cand.provenance for cand in candidates}
    assert any(len(p.hits) >= 2 and p.matched_terms for p in provs.values())


def test_provenance_gives_each_hit_its_rank_and_score_in_the_list_the_source_answered(
    tools_engine: SearchService,
):
    """Finalize reads the lists kept in the executor state, which are pruned to the hits that
    can still be returned (about the top 30 of a limit-5 search): a candidate's provenance must
    still give each source hit its rank in the list the source answered and its min-max score
    against that whole list, not its position among the kept hits (once 21% of the hits of a
    limit-10 SciFact search were misranked this way)."""
    query = "open source vector database I can self-host"
    _, _, results, fused = _round_one(tools_engine.deps, query, limit=5)
    expected: dict[tuple[str, str], tuple[int, float]] = {}
    for r in results:
        scores = [h.score for h in r.hits]
        lo, hi = min(scores), max(scores)
        for h in r.hits:
            norm = round((h.score - lo) / (hi - lo), 6) if hi > lo else 1.0
            expected[(r.name, h.id)] = (h.rank, norm)
    # the lists are pruned: some hit below the top of its list is not kept
    assert len(fused) > 30
    resp = tools_engine.search(query, limit=5, rounds=1)
    seen = [
        (h.source, cand.id, h.rank, h.normalized_score)
        for cand in resp.output.candidates
        for h in cand.provenance.hits
    ]
    assert seen and any(rank > 5 for _, _, rank, _ in seen)
    for source, rid, rank, norm in seen:
        assert (rank, norm) == expected[(source, rid)], (source, rid)


def test_evidence_pack_respects_caps_and_counts_tokens_with_the_embedder(
    tools_engine: SearchService,
):
    caps = ExecutorCaps(max_rounds=3, max_total_docs=4, max_total_tokens=300, max_docs=6)
    intent = extract_by_rules(tools_engine.deps, "AI code completion tools that work locally")
    plan = tools_engine.deps.planner.plan(intent, limit=10)
    _, pack = run_rounds(tools_engine.deps, plan, intent, caps)
    ev = pack.evidence
    assert 0 < len(ev) <= 4
    assert len({e.id for e in ev}) == len(ev)
    counted = tools_engine.deps.embedder.count_tokens([e.text for e in ev])
    assert [e.tokens for e in ev] == counted
    assert pack.tokens == sum(counted) <= 300
    # every piece of evidence says which sources found it and with which query
    for e in ev:
        assert e.provenance is not None and e.provenance.hits
        assert all(h.round is not None and h.query for h in e.provenance.hits)
    # every round's selection respects the per-round cap
    assert all(len(r.selected) <= caps.max_docs for r in pack.report.rounds)


def test_relaxation_ladder_fills_up_with_the_softest_constraint_relaxed(
    tools_engine: SearchService, catalog_by_id: dict[str, dict]
):
    # GIVEN two hard filters that together leave fewer than 10 tools
    resp = tools_engine.search("open source video generator for iOS", limit=10)
    labels = {f.label(): f for f in resp.intent.constraints}
    assert set(labels) == {"open_source=True", "platforms in [iOS]"}
    # THEN platforms (relax_rank 1) is relaxed, open_source (relax_rank 3) is kept
    assert resp.evidence.report.relaxed == ["platforms in [iOS]"]
    cands = resp.output.candidates
    assert len(cands) == 10
    strict = [c for c in cands if not c.provenance.relaxed_filters]
    relaxed = [c for c in cands if c.provenance.relaxed_filters]
    assert strict and relaxed
    # strict results come first and satisfy every filter; relaxed ones still satisfy the
    # filter that was kept, and say which one was relaxed
    assert cands[: len(strict)] == strict
    schema = tools_engine.schema
    for c in strict:
        assert all(matches(schema, f, catalog_by_id[c.id]) for f in labels.values())
    for c in relaxed:
        assert matches(schema, labels["open_source=True"], catalog_by_id[c.id])
        assert c.provenance.relaxed_filters == ["platforms in [iOS]"]
        assert "platforms in [iOS]" not in c.provenance.filters_applied


def test_a_constraint_stated_as_must_is_never_relaxed(
    tools_engine: SearchService, catalog_by_id: dict[str, dict]
):
    resp = tools_engine.search("open source video generator that must run on iOS", limit=10)
    assert all(f.must for f in resp.intent.constraints)
    assert resp.evidence.report.relaxed == []
    assert len(resp.output.candidates) < 10
    for c in resp.output.candidates:
        assert "iOS" in catalog_by_id[c.id]["platforms"]


def test_hyde_adds_a_dense_query_from_the_llm_and_is_off_for_exact_phrases(
    tools_engine: SearchService, edge: ThreadingHTTPServer
):
    settings = Settings(
        openai_base_url=_url(edge, "/v1"),
        openai_api_key="k",
        llm_model="tiny-chat",
        llm_timeout_s=UNBOUNDED["source_timeout_s"],  # the loopback edge answers when it can
    )
    c = tools_engine.deps.derive(hyde=OpenAIHyde(settings))
    intent = extract_by_rules(tools_engine.deps, "a database for embeddings I can run myself")
    plan = tools_engine.deps.planner.plan(intent, limit=10)
    out, pack = run_rounds(c, plan, intent, ExecutorCaps(max_rounds=1))
    assert pack.report.hyde == "on (openai:tiny-chat)"
    hyde_queries = [q for q in pack.report.rounds[0].queries if q.purpose == "hyde"]
    assert [q.text for q in hyde_queries] == [HYDE_PASSAGE]
    # the LLM got the user's query delimited as data
    path, body = edge.requests[-1]
    assert path == "/v1/chat/completions" and body["model"] == "tiny-chat"
    assert "<request>a database for embeddings I can run myself</request>" in json.dumps(body)
    # the hyde source ran and found candidates
    assert any(h.query_vector_source == "hyde" for c in out.candidates for h in c.provenance.hits)
    # GIVEN a quoted phrase THEN no LLM call is made and the report says why
    n = len(edge.requests)
    intent = extract_by_rules(tools_engine.deps, '"vector database" for Python')
    plan = tools_engine.deps.planner.plan(intent, limit=10)
    _, pack = run_rounds(c, plan, intent, ExecutorCaps(max_rounds=1))
    assert pack.report.hyde.startswith("off (the query has literal constraints")
    assert len(edge.requests) == n


def test_rerank_scores_sit_beside_fused_scores_and_a_failing_reranker_is_reported(
    tools_engine: SearchService, edge: ThreadingHTTPServer
):
    c = tools_engine.deps.derive(reranker=ApiReranker(_url(edge, "/rerank"), model="m"))
    intent = extract_by_rules(tools_engine.deps, "speech to text transcription that runs offline")
    plan = tools_engine.deps.planner.plan(intent, limit=10)
    caps = ExecutorCaps(max_rounds=1, rerank_top_n=10)
    out, pack = run_rounds(c, plan, intent, caps)
    assert pack.report.reranker == "api:m" and pack.report.rounds[0].reranked == 10
    reranked = [c for c in out.candidates if c.rerank_score is not None]
    assert reranked and all(c.fused_score > 0 for c in reranked)
    # the edge scores by text length: the reranked head is in descending rerank score
    scores = [c.rerank_score for c in out.candidates[: len(reranked)]]
    assert scores == sorted(scores, reverse=True)
    # GIVEN the rerank API failing THEN the search still answers, unreranked, and says so
    edge.fail_rerank = True  # type: ignore[attr-defined]
    try:
        out2, pack2 = run_rounds(c, plan, intent, caps)
    finally:
        edge.fail_rerank = False  # type: ignore[attr-defined]
    assert out2.candidates and all(c.rerank_score is None for c in out2.candidates)
    assert [e.source for e in out2.errors] == ["reranker"]
    assert pack2.report.rounds[0].reranked is None
    one = tools_engine.search("speech to text transcription that runs offline", rounds=1)
    assert [c.id for c in out2.candidates] == [c.id for c in one.output.candidates]


def test_long_documents_are_chunked_and_found_by_the_chunk_that_holds_the_words(tmp_path, embedder):
    from agentic_search_cli.evaluation import indexed_ids

    engine = SearchService.create(
        Settings(agentic_search_home=tmp_path), "documents", embedder=embedder
    )
    try:
        # GIVEN a 600-word document (windows of 400 words, overlap 50 -> starts 0 and 350)
        # whose only mention of "zeolite catalysis" is in its last 100 words
        filler = " ".join(f"alpha{i}" for i in range(500))
        tail = " ".join(["zeolite catalysis"] * 50)
        long_doc = {"id": "d1", "title": "Porous minerals", "text": f"{filler} {tail}"}
        short = {"id": "d2", "title": "Bread", "text": "sourdough bread rises slowly overnight"}
        stats = engine.ingest_records([long_doc, short])
        assert stats.inserted == 3  # d1, d1::1, d2
        assert indexed_ids(engine) == {"d1", "d2"}
        # WHEN searching for the words of the tail
        resp = engine.search("zeolite catalysis", limit=3)
        # THEN the document is the top candidate, found by its second chunk (named in its
        # provenance), and the chunk's evidence names doc and chunk
        top_candidate = resp.output.candidates[0]
        assert (top_candidate.id, top_candidate.provenance.chunk) == ("d1", "d1::1")
        top = next(e for e in resp.evidence.evidence if e.id == "d1::1")
        assert (top.doc_id, top.chunk_id, top.title) == ("d1", 1, "Porous minerals")
    finally:
        engine.close()


def _dense_plan(text: str, **feedback: Any) -> QueryPlan:
    return QueryPlan(
        domain="tools",
        strategy="capability-focused",
        vector_sources=[
            VectorSource(
                aspect="functionality",
                top_k=20,
                query_vector_source="feedback" if feedback else "query_text",
                text=text,
                **feedback,
            )
        ],
        fusion="none",
    )


def test_rocchio_feedback_query_moves_toward_the_stored_vectors(tools_engine: SearchService):
    # GIVEN a plain dense query and one of its lower hits X
    text = "vector database for embeddings"
    c = tools_engine.deps
    [plain], _ = run_sources(c, _dense_plan(text))
    plain_ids = [h.id for h in plain.hits]
    x = plain_ids[7]
    # WHEN the feedback query leans fully on X's stored vector (alpha 0)
    [only_x], _ = run_sources(c, _dense_plan(text, feedback_ids=[x], feedback_alpha=0.0))
    # THEN X is its own nearest neighbour (cosine 1)
    assert only_x.error is None
    assert only_x.hits[0].id == x and only_x.hits[0].score == pytest.approx(1.0, abs=1e-5)
    # AND a mix (alpha 0.5) lifts X above where the plain query ranked it
    [mixed], _ = run_sources(c, _dense_plan(text, feedback_ids=[x], feedback_alpha=0.5))
    assert [h.id for h in mixed.hits].index(x) < 7
    # AND alpha 1, or feedback ids with no stored vector, rank exactly as the plain query
    [same], _ = run_sources(c, _dense_plan(text, feedback_ids=[x], feedback_alpha=1.0))
    [unknown], _ = run_sources(c, _dense_plan(text, feedback_ids=["no-such-tool"]))
    assert [h.id for h in same.hits] == plain_ids
    assert [h.id for h in unknown.hits] == plain_ids


def test_feedback_round_dense_query_rocchio_reuses_round_one_vector_and_none_has_none(
    tools_engine: SearchService,
):
    # GIVEN a query that goes to round 2 (see the healthcare test above)
    intent = extract_by_rules(tools_engine.deps, "chatbot for healthcare")
    plan = tools_engine.deps.planner.plan(intent, limit=10)
    c = tools_engine.deps
    _, pack = run_rounds(c, plan, intent, ExecutorCaps(feedback_vector="rocchio"))
    rounds = pack.report.rounds
    assert len(rounds) >= 2
    # THEN with Rocchio, round 2's dense feedback query is a text round 1 embedded (its
    # vector is cached), moved toward evidence round 1 found
    r1_texts = {q.text for q in rounds[0].queries if any(m.startswith("dense") for m in q.modes)}
    [rocchio] = [q for q in rounds[1].queries if q.target == "Rocchio"]
    text, named = rocchio.text.split(" (Rocchio toward ")
    assert text in r1_texts
    assert set(named.rstrip(")").split(", ")) <= set(rounds[0].new_evidence)
    # AND by default (feedback_vector none) round 2 asks RM3 words of BM25 only
    _, pack = run_rounds(c, plan, intent, ExecutorCaps())
    feedback = [q for q in pack.report.rounds[1].queries if q.purpose == "feedback"]
    assert feedback and all(q.modes == ["sparse"] for q in feedback)


def test_a_round_builds_provenance_only_for_the_evidence_it_selects(
    tools_engine: SearchService, monkeypatch: pytest.MonkeyPatch
):
    """Selection, reranking and grading never read an evidence's provenance: a round builds
    it for the pieces it selects into the pool, not for its whole selection pool (30 reads
    of every hit of the round's lists per round, ~8 kept in round 1, fewer later)."""
    from agentic_search.pipeline import evidence as evidence_module

    asked: list[list[str]] = []
    real = evidence_module.provenances

    def counting(c, plan, intent, results, fused, **kw):  # type: ignore[no-untyped-def]
        asked.append([f.id for f in fused])
        return real(c, plan, intent, results, fused, **kw)

    monkeypatch.setattr(evidence_module, "provenances", counting)
    # GIVEN a query that runs two rounds (a preference round 1 misses)
    resp = tools_engine.search("chatbot for healthcare", limit=10)
    rounds = resp.evidence.report.rounds
    assert len(rounds) >= 2
    # THEN each round built provenance for exactly what it selected, in selection order
    selected = [[s.id for s in r.selected] for r in rounds if r.selected]
    assert asked == selected
    pool_n = max(ExecutorCaps().selection_pool, 1)
    assert sum(map(len, asked)) < pool_n * len(rounds)
    # AND every piece of evidence returned carries it (the hits that found it)
    assert resp.evidence.evidence
    assert all(e.provenance is not None and e.provenance.hits for e in resp.evidence.evidence)
    assert all(e.queries for e in resp.evidence.evidence)


def test_a_later_rounds_relevance_is_measured_only_for_what_is_returned(
    tools_engine: SearchService, monkeypatch: pytest.MonkeyPatch
):
    """A later round's new head needs its query relevance only if Finalize returns it (answer
    quality and ``relevance`` read it): it is noted as due, and measured at the round's end,
    from that round's lists, for the head Finalize would return (``final_order``) alone."""
    from agentic_search.pipeline import fuse_rerank, relevance

    asked: list[list[str]] = []
    real = relevance.query_relevance

    def counting(c, plan, results, ids):  # type: ignore[no-untyped-def]
        asked.append(list(ids))
        return real(c, plan, results, ids)

    monkeypatch.setattr(relevance, "query_relevance", counting)
    monkeypatch.setattr(fuse_rerank, "query_relevance", counting)
    # GIVEN a two-round search (a preference round 1 misses)
    resp = tools_engine.search("chatbot for healthcare", limit=10)
    rounds = resp.evidence.report.rounds
    assert len(rounds) == 2 and asked
    quality = resp.output.answer_quality
    assert quality is not None and quality.withheld == 0  # every head candidate is returned
    # THEN after round 1's head, only returned candidates were measured, each once
    returned = [c.id for c in resp.output.candidates]
    later = [rid for ids in asked[1:] for rid in ids]
    assert set(later) <= set(returned)
    assert len(later) == len(set(later)) and set(later).isdisjoint(asked[0])
    # AND every returned candidate has its relevance
    assert all(c.relevance is not None for c in resp.output.candidates)


def test_a_later_round_reads_dense_vectors_only_for_its_picks_and_the_pool(
    tools_engine: SearchService, monkeypatch: pytest.MonkeyPatch
):
    """A later round selects without the MMR fill: what it picks does not depend on the
    vectors, and the picks' MMR scores read only the vectors of the picks and of the pool's
    pieces. Its evidence is read without dense vectors (round 1's, which fills, with them),
    and only those vectors are read after."""
    store = tools_engine.deps.store
    reads: list[tuple[list[str], bool]] = []
    vector_reads: list[list[str]] = []
    hydrate_records, vectors_of = store.hydrate_records, store.vectors_of

    def hydrating(schema, ids, with_vectors=False):  # type: ignore[no-untyped-def]
        reads.append((list(ids), with_vectors))
        return hydrate_records(schema, ids, with_vectors)

    def vectors(schema, ids, aspect):  # type: ignore[no-untyped-def]
        if aspect != "bm25":
            vector_reads.append(list(ids))
        return vectors_of(schema, ids, aspect)

    monkeypatch.setattr(store, "hydrate_records", hydrating)
    monkeypatch.setattr(store, "vectors_of", vectors)
    resp = tools_engine.search("chatbot for healthcare", limit=10)
    rounds = resp.evidence.report.rounds
    assert len(rounds) >= 2
    # THEN only round 1's evidence was read with every vector
    assert [with_vectors for _, with_vectors in reads].count(True) == 1
    assert reads[0][1] and len(reads[0][0]) == ExecutorCaps().selection_pool
    # AND a later round's picks had their dense vectors read on their own (MMR scores)
    later_picks = {s.id for r in rounds[1:] for s in r.selected}
    assert later_picks and later_picks <= {rid for ids in vector_reads for rid in ids}
    assert all(s.mmr_score is not None for r in rounds[1:] for s in r.selected)
