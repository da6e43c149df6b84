"""The CLI's results table is for people: the candidates their own evidence supports
(``answerQuality.supported``) are the table, the others fold under "N weaker results"; the
score is the cosine the answer's quality judged (never the rank score, a min-max of the list);
"why" is plain words, the aspects and fused scores only under ``--explain``; a cache hit says
when it was computed and how long the lookup took."""

from __future__ import annotations

import re

from rich.console import Console
from support.builders import plan_with

from agentic_search.wire import (
    AnswerQuality,
    Candidate,
    EntityLink,
    ExecutionStats,
    IntentState,
    Provenance,
    QueryExecutorOutput,
    SearchResponse,
    SourceHit,
)
from agentic_search_cli.render import print_search, relevance_text, why


def hit(source: str, raw: float, aspect: str | None = None, qvs: str | None = None) -> SourceHit:
    return SourceHit(
        source=source,
        system="qdrant",
        aspect=aspect,
        query_vector_source=qvs,
        rank=1,
        raw_score=raw,
        normalized_score=1.0,
    )


def cand(rid: str, name: str, score: float, relevance: float | None, **prov) -> Candidate:
    hits = prov.pop("hits", [])
    return Candidate(
        id=rid,
        source="qdrant",
        score=score,
        fused_score=score / 10,
        metadata={"name": name, "released": 2023},
        provenance=Provenance(collection="tools", hits=hits, **prov),
        relevance=relevance,
    )


def response(
    candidates: list[Candidate], quality: AnswerQuality, paths: dict | None = None
) -> SearchResponse:
    intent = IntentState(
        query="local code completion like VS Code",
        normalized_query="local code completion like vs code",
        reference_tool="vs-code",
        reference_tool_name="vs code",
        entities=[
            EntityLink(
                kind="entity",
                id="vs-code",
                name="Visual Studio Code",
                surface="VS Code",
                method="exact",
                score=1.0,
            )
        ],
    )
    stats = ExecutionStats(
        vector_queries_executed=1,
        structured_queries_executed=0,
        fusion_method="rrf",
        latency_ms=5,
    )
    output = QueryExecutorOutput(
        candidates=candidates, execution_stats=stats, confidence=0.5, answer_quality=quality
    )
    return SearchResponse(
        query=intent.query,
        domain="tools",
        intent=intent,
        plan=plan_with(),
        output=output,
        paths=paths or {},
    )


def rendered(resp: SearchResponse, explain: bool = False) -> str:
    console = Console(record=True, width=200)
    print_search(console, resp, explain)
    return console.export_text()


CONTINUE = cand(
    "continue",
    "Continue",
    1.0,
    0.41,
    hits=[
        hit("dense:identity:query_text", 0.41, "identity", "query_text"),
        hit("dense:identity:reference_tool", 0.7, "identity", "reference_tool"),
        hit("graph:mention:vs-code", 0.5),
    ],
    matched_values={"functionality": ["Code Completion"], "deployment": ["Local"]},
    matched_keywords=["code", "completion"],
    matched_terms=["code", "complet"],
)
# supported by a dense source's cosine (0.52), its main aspect's relevance 0.16
ANTHROPIC = cand(
    "anthropic-api",
    "Anthropic API",
    0.9,
    0.16,
    hits=[hit("dense:usecases:query_text", 0.52, "usecases", "query_text")],
    matched_keywords=["code"],
)
DVC = cand("dvc", "DVC", 0.98, 0.26, hits=[hit("sparse:bm25", 4.2)], matched_keywords=["code"])
WEAK = AnswerQuality(
    verdict="weak",
    score=0.6,
    reason="best match 0.52 >= 0.42, coverage 0.7 < 0.9",
    supported=["continue", "anthropic-api"],
    support_relevance=0.46,
)


def test_supported_results_are_the_table_and_the_rest_fold_under_weaker_results():
    out = rendered(response([CONTINUE, DVC, ANTHROPIC], WEAK))
    head, _, fold = out.partition("1 weaker result")
    assert "2 results for 'local code completion like VS Code'" in head
    assert "Continue" in head and "Anthropic API" in head and "DVC" not in head
    assert "DVC" in fold and "Continue" not in fold
    # ranks stay the ranks of the whole answer: DVC was second
    assert re.search(r"│\s+2 │ DVC", fold), fold
    assert "weak match: 2 of 3 results show they fit" in out


def test_the_score_is_the_judged_cosine_never_the_lists_min_max():
    assert relevance_text(ANTHROPIC) == "0.52"  # its best dense source's, not 0.16
    assert relevance_text(CONTINUE) == "0.41"  # the reference's vector is not the query's
    unmeasured = cand("x", "X", 1.0, None, hits=[hit("sparse:bm25", 3.0)])
    assert relevance_text(unmeasured) == "-"
    out = rendered(response([CONTINUE, DVC, ANTHROPIC], WEAK))
    assert "relevance" in out and "score" not in out
    assert "1.000" not in out and "0.980" not in out  # the rank scores are not shown


def test_why_is_plain_words_and_the_developer_details_only_under_explain():
    line = why(CONTINUE, "q", "Visual Studio Code", {"vs-code": "Visual Studio Code"})
    assert line == (
        "linked from Visual Studio Code (mention); matched Code Completion (functionality), "
        "Local (deployment), your words code, completion; like Visual Studio Code"
    )
    plain = rendered(response([CONTINUE], WEAK))
    assert "like Visual Studio Code" in plain
    assert "aspects" not in plain and "identity" not in plain and "fused" not in plain
    explained = rendered(response([CONTINUE], WEAK), explain=True)
    assert "aspects identity, identity~ref" in explained and "fused 0.1000" in explained


def test_every_candidate_is_a_result_when_none_was_judged_on_its_own():
    by_example = AnswerQuality(verdict="good", score=1.0, reason="coverage 0.95")
    out = rendered(response([CONTINUE, DVC], by_example))
    assert "2 results for" in out and "weaker" not in out


def test_a_cache_hit_says_when_it_was_computed_and_how_long_the_lookup_took():
    good = AnswerQuality(verdict="good", score=1.0, reason="ok", supported=["continue"])
    paths = {
        "cache": {
            "key": "k",
            "hit": True,
            "backend": "sqlite",
            "computedAt": "2026-12-01T09:30:00+00:00",
            "lookupMs": 1.234,
        }
    }
    out = rendered(response([CONTINUE], good, paths))
    assert "from the result cache: computed 2026-12-01 09:30:00 UTC, looked up in 1.2 ms" in out
    assert "result cache" not in rendered(response([CONTINUE], good))


def test_years_print_as_integers():
    out = rendered(response([CONTINUE], WEAK), explain=True)
    assert not re.search(r"\b(19|20)\d\d\.0\b", out), out
