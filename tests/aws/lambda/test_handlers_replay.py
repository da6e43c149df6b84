"""Every file of events/ replayed through its function's handler, in-process (what
``sam local invoke <Function> -e events/...`` does), and the result checked.

The handlers are the real ``functions/<dir>/app.py`` modules (Powertools Logger, Tracer,
Metrics, event parser) over the session's service and the bundled catalog. Each replay checks
the step's contract (what it must add to the state and leave alone), and that the handler is a
thin adapter: its output equals the pipeline step called directly on the same deps.
Rankings are compared only where they are deterministic by construction (RRF of the event's
own lists, the final order of a state's own fused list), never against a recording made by
the same code.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from support.lambdas import FUNCTION_IDS, load_event, runtime_over, use_runtime
from support.paths import EVENTS, REPO

from agentic_search.adapters.caches import SqliteCache
from agentic_search.logic.executor.subqueries import split_plan
from agentic_search.logic.fusion import rrf
from agentic_search.pipeline.catalog import extract_by_rules
from agentic_search.pipeline.retrieve import retrieve_sub_query
from agentic_search.wire import RankedList, SubQuery
from agentic_search_cli.local_server import LocalContext

HEX64 = re.compile(r"^[0-9a-f]{64}$")

#: Every event file a test below replays (filled by @replays at import).
REPLAYED: set[str] = set()


def replays(*rels: str) -> Callable[[Callable], Callable]:
    """Mark a test as the replay of ``events/<rel>`` (see test_every_event_file_is_replayed)."""
    REPLAYED.update(rels)
    return lambda fn: fn


def replay(handlers: dict[str, Any], rel: str, event: dict | None = None) -> dict:
    """Run ``events/<rel>`` (or ``event``) through the handler of its folder."""
    directory = rel.split("/", 1)[0]
    ctx = LocalContext(
        function_name=FUNCTION_IDS[directory],
        invoked_function_arn=f"arn:aws:lambda:us-east-1:123456789012:function:{directory}",
        aws_request_id=f"replay-{rel}",
    )
    out = handlers[directory].handler(load_event(rel) if event is None else event, ctx)
    assert isinstance(out, dict)
    json.dumps(out)  # JSON-able, as Lambda requires
    return out


def sources_of(plan: dict) -> int:
    return (
        len(plan.get("vectorSources", []))
        + (plan.get("sparseSource") is not None)
        + len(plan.get("structuredSources", []))
    )


#: Catalog sync events (several functions, not search states): replayed by tests/aws/sync/.
SYNC_EVENTS = "sync/"


# ----- coverage of events/ ------------------------------------------------------------------------


def test_every_event_file_is_replayed_and_every_replay_has_its_file():
    # GIVEN the event files on disk
    on_disk = {p.relative_to(EVENTS).as_posix() for p in EVENTS.rglob("*.json")}
    on_disk = {rel for rel in on_disk if not rel.startswith(SYNC_EVENTS)}
    # THEN each one is replayed by a test below, and each replayed file exists
    assert on_disk - REPLAYED == set(), "event files nothing replays"
    assert REPLAYED - on_disk == set(), "replayed event files missing from events/"
    # AND every folder is a function's code directory
    assert {rel.split("/")[0] for rel in on_disk} == set(FUNCTION_IDS)
    assert all((REPO / "functions" / d / "app.py").is_file() for d in FUNCTION_IDS)


def test_every_state_event_parses_as_the_model_its_handler_declares():
    from agentic_search.wire import RetrieveEvent, SearchState

    for path in sorted(EVENTS.rglob("*.json")):
        rel = path.relative_to(EVENTS).as_posix()
        if rel.startswith(("search_api/", "mcp_api/", SYNC_EVENTS)):
            continue
        model = RetrieveEvent if rel.startswith("retrieve/") else SearchState
        model.model_validate_json(path.read_text(encoding="utf-8"))  # raises when stale


# ----- CacheCheck ---------------------------------------------------------------------------------


@replays("cache_check/miss.json")
def test_cache_check_miss_computes_the_key_and_goes_on(handlers, wired_runtime):
    # GIVEN the state machine's input and no cached answer (CACHE_BACKEND=none)
    event = load_event("cache_check/miss.json")
    # WHEN CacheCheckFunction runs
    out = replay(handlers, "cache_check/miss.json")
    # THEN it is a miss with a SHA-256 key, the request passes through and no response is set
    assert out["cache"]["hit"] is False
    assert HEX64.match(out["cache"]["key"])
    assert out["request"] == event["request"]
    assert out["correlationId"] == event["correlationId"]
    assert "response" not in out
    # AND the key is the one the next state of the chain carries (catalog version 0)
    assert out["cache"]["key"] == load_event("extract_intent/input.json")["cache"]["key"]


@pytest.fixture()
def sqlite_cache_steps(tools_engine, handlers, tmp_path: Path) -> Iterator[Path]:
    """The handlers over the session service with an SQLite result cache in tmp."""
    path = tmp_path / "cache.sqlite"
    cache = SqliteCache(path)
    c = tools_engine.deps.derive(cache=cache)
    rt = runtime_over(tools_engine)
    rt.deps = lambda _: c
    with use_runtime(rt):
        yield path
    cache.close()


@replays("cache_store/input.json")
def test_cache_store_puts_the_response_under_its_key(handlers, sqlite_cache_steps):
    # GIVEN Finalize's output for "free code editor" and an empty SQLite cache
    event = load_event("cache_store/input.json")
    key = event["cache"]["key"]
    assert SqliteCache(sqlite_cache_steps).get(key) is None
    # WHEN CacheStoreFunction runs
    out = replay(handlers, "cache_store/input.json")
    # THEN the state passes through and the response is retrievable from the cache file
    assert out["response"] == event["response"]
    reader = SqliteCache(sqlite_cache_steps)  # a second connection: the entry is on disk
    try:
        stored = reader.get(key)
    finally:
        reader.close()
    # as it was, its cache note saying when it was computed (what a later hit shows)
    note = stored.pop("cache")
    assert stored == {k: v for k, v in event["response"].items() if k != "cache"}
    computed = note.pop("computedAt")
    assert note == event["response"].get("cache", note)
    assert datetime.fromisoformat(computed).tzinfo is not None


@replays("cache_check/hit.json")
def test_cache_check_hit_answers_from_what_cache_store_stored(handlers, sqlite_cache_steps):
    # GIVEN the same request again, with nothing cached yet: a miss
    assert replay(handlers, "cache_check/hit.json")["cache"]["hit"] is False
    # AND CacheStore has stored the first answer (events/cache_store/input.json)
    stored = replay(handlers, "cache_store/input.json")["response"]
    # WHEN CacheCheckFunction runs on hit.json
    out = replay(handlers, "cache_check/hit.json")
    # THEN it is a hit carrying the stored response, marked as a hit
    assert out["cache"]["hit"] is True and out["cache"]["backend"] == "sqlite"
    assert out["response"]["cache"]["hit"] is True
    assert out["response"]["cache"]["computedAt"] and out["response"]["cache"]["lookupMs"] >= 0
    assert out["response"]["candidates"] == stored["candidates"]
    assert out["cache"]["key"] == load_event("finalize/cache_hit.json")["cache"]["key"]


# ----- ExtractIntent ------------------------------------------------------------------------------


@replays("extract_intent/input.json")
def test_extract_intent_takes_the_rule_based_path(handlers, wired_runtime, tools_engine):
    out = replay(handlers, "extract_intent/input.json")
    assert out["intent"]["query"] == "free code editor"
    assert out["intent"]["matches"]["categories"] == ["IDE"]
    assert out["extractor"]["path"] == "rules"
    assert "intentError" not in out
    # AND the handler only adapted the event: the intent is the rule-based extractor's
    want = extract_by_rules(tools_engine.deps, "free code editor").wire()
    assert out["intent"] == want


@replays("extract_intent/fallback.json")
def test_extract_intent_fallback_says_which_error_it_falls_back_from(handlers, wired_runtime):
    # GIVEN ExtractIntent's Catch put intentError (a timeout) in the state
    event = load_event("extract_intent/fallback.json")
    # WHEN ExtractIntentRules (the same function) runs
    out = replay(handlers, "extract_intent/fallback.json")
    # THEN the rule-based intent is there and the reason names the error and its cause
    assert out["intent"]["query"] == event["request"]["query"]
    assert out["extractor"]["path"] == "rules"
    assert "fallback after States.Timeout" in out["extractor"]["reason"]
    assert "Task timed out" in out["extractor"]["reason"]
    # AND the intent is the one the normal path extracts
    assert out["intent"] == replay(handlers, "extract_intent/input.json")["intent"]


# ----- PlanQuery ----------------------------------------------------------------------------------


@replays("plan_query/input.json")
def test_plan_query_opens_the_executor_with_a_plan(handlers, wired_runtime, tools_engine):
    out = replay(handlers, "plan_query/input.json")
    ex = out["executor"]
    assert ex["continueSearch"] is True and ex["roundIndex"] == 0
    assert ex["plan"]["vectorSources"] and sources_of(ex["plan"]) >= 3
    assert ex["plan"]["limit"] == 5
    assert ex["caps"]["maxRounds"] == 3 and ex["caps"]["maxTotalDocs"] == 5
    assert ex["startedAt"] > time.time() - 60  # the gate's clock reading
    # AND the plan is the rule-based planner's for the state's intent and limit
    c = tools_engine.deps
    intent = extract_by_rules(c, out["request"]["query"])
    assert ex["plan"] == c.planner.plan(intent, limit=5).wire()


# ----- PrepareRound -------------------------------------------------------------------------------


def _check_round(out: dict, index: int) -> list[dict]:
    rnd = out["round"]
    assert rnd["index"] == index
    subs = rnd["subQueries"]
    assert subs, "a round with nothing to ask"
    names = [s["name"] for s in subs]
    assert len(set(names)) == len(names), f"duplicate sub-query names: {names}"
    for s in subs:
        plan = s["plan"]
        assert sources_of(plan) == 1, f"{s['name']} has {sources_of(plan)} sources"
        own = {
            "dense": bool(plan["vectorSources"]),
            "sparse": plan.get("sparseSource") is not None,
            "structured": bool(plan["structuredSources"]),
        }
        assert own[s["kind"]], f"{s['name']} is {s['kind']} but its source is not"
        assert s["name"].startswith(s["kind"] + ":")
    assert out["executor"]["continueSearch"] is True
    return subs


@replays("prepare_round/round1.json")
def test_prepare_round_1_splits_the_plan_into_one_sub_query_per_source(
    handlers, wired_runtime, tools_engine
):
    out = replay(handlers, "prepare_round/round1.json")
    subs = _check_round(out, 1)
    assert {s["kind"] for s in subs} == {"dense", "sparse", "structured"}
    # AND the sub-queries are the round plan split one source each, in the plan's order
    plan = out["round"]["plan"]
    assert sum(sources_of(s["plan"]) for s in subs) == sources_of(plan)
    c = tools_engine.deps
    from agentic_search.wire import QueryPlan

    want = split_plan(QueryPlan.model_validate(plan), c.keyword.name, c.structured.system)
    assert [SubQuery.model_validate(s) for s in subs] == want


@replays("prepare_round/round2.json")
def test_prepare_round_2_asks_for_what_round_1_left_missing(handlers, wired_runtime):
    # GIVEN "chatbot for healthcare" after round 1 graded "continue: ... missing industries"
    event = load_event("prepare_round/round2.json")
    assert event["executor"]["roundIndex"] == 1
    assert "missing industries" in event["executor"]["report"]["rounds"][0]["decision"]
    # WHEN PrepareRound runs
    out = replay(handlers, "prepare_round/round2.json")
    # THEN round 2 has its own sub-queries, one source each, aimed at the missing coverage
    subs = _check_round(out, 2)
    assert any("Healthcare" in json.dumps(s["plan"]) for s in subs)
    # AND round 2 fuses by RRF and asks nothing round 1 already asked for the same target
    assert out["round"]["plan"]["fusion"] == "rrf"
    queries = out["round"]["report"]["queries"]
    assert any(
        q["purpose"] == "coverage" and "industries" in (q.get("target") or "") for q in queries
    )


# ----- Retrieve -----------------------------------------------------------------------------------


@replays("retrieve/dense.json", "retrieve/sparse.json", "retrieve/structured.json")
@pytest.mark.parametrize("kind", ["dense", "sparse", "structured"])
def test_retrieve_returns_one_sources_ranked_hits(handlers, wired_runtime, tools_engine, kind):
    # GIVEN one Map item (the Map's ItemSelector: domain, subQuery and the state's caller)
    event = load_event(f"retrieve/{kind}.json")
    assert set(event) == {"domain", "subQuery", "caller"}
    assert event["caller"] == {"principals": []}  # recorded anonymous
    # WHEN RetrieveFunction runs
    out = replay(handlers, f"retrieve/{kind}.json")
    # THEN the source answered without error, hits ranked 1..n
    assert "error" not in out, out.get("error")
    expected = event["subQuery"]["name"]
    if kind == "sparse":  # the recorded event names bm25s; the source is the wired index
        expected = f"sparse:{tools_engine.deps.keyword.name}"
    assert out["name"] == expected
    plan = event["subQuery"]["plan"]
    source = (plan["vectorSources"] or plan["structuredSources"] or [plan.get("sparseSource")])[0]
    hits = out["hits"]
    assert hits and len(hits) <= source["topK"]
    assert [h["rank"] for h in hits] == list(range(1, len(hits) + 1))
    assert len({h["id"] for h in hits}) == len(hits)
    assert out["total"] == len(hits)
    if kind == "dense":
        scores = [h["score"] for h in hits]
        assert scores == sorted(scores, reverse=True)
    # AND the handler only adapted the event: the same sub-query run directly answers the same
    direct = retrieve_sub_query(tools_engine.deps, SubQuery.model_validate(event["subQuery"]))
    assert [h["id"] for h in hits] == [h.id for h in direct.hits]


# ----- FuseRerank ---------------------------------------------------------------------------------


@replays("fuse_rerank/input.json")
def test_fuse_rerank_consumes_the_maps_results(handlers, wired_runtime):
    event = load_event("fuse_rerank/input.json")
    assert event["round"]["results"] and not event["executor"]["retrieved"]
    out = replay(handlers, "fuse_rerank/input.json")
    ex = out["executor"]
    assert out["round"]["results"] == []
    assert len(ex["roundRankings"]) == len(event["executor"]["roundRankings"]) + 1
    assert ex["roundRankings"][-1], "the fused ranking of the round"
    assert ex["retrieved"], "the kept hits of the round"
    assert {r["name"] for r in ex["retrieved"]} == {r["name"] for r in event["round"]["results"]}
    assert ex["pool"], "evidence selected into the pool"
    # AND the round's ranking is the RRF (k = the plan's) of the Map's lists, as given
    lists = [
        RankedList(r["name"], [h["id"] for h in sorted(r["hits"], key=lambda h: h["rank"])])
        for r in event["round"]["results"]
        if "error" not in r
    ]
    plan = event["round"]["plan"]
    assert plan["fusion"] == "rrf"
    fused = [f.id for f in rrf(lists, plan["rrfK"])]
    assert ex["roundRankings"][-1] == fused[: len(ex["roundRankings"][-1])]
    # AND every pooled piece of evidence is a fused candidate
    assert {e["id"] for e in ex["pool"]} <= set(fused)


# ----- GradeRound ---------------------------------------------------------------------------------


@replays("grade_round/input.json")
def test_grade_round_closes_the_round_with_a_decision(handlers, wired_runtime):
    event = load_event("grade_round/input.json")
    before = len(event["executor"]["report"]["rounds"])
    out = replay(handlers, "grade_round/input.json")
    assert "round" not in out
    rounds = out["executor"]["report"]["rounds"]
    assert len(rounds) == before + 1
    assert rounds[-1]["decision"]
    assert out["executor"]["roundIndex"] == event["round"]["index"]
    # "free code editor": round 1 covers what was asked, so the search stops
    assert out["executor"]["continueSearch"] is False
    assert "confidence" in rounds[-1]["decision"]
    # AND the coverage graded the pool the state carried: its items are the state's targets
    coverage = out["executor"]["coverage"]
    assert [i["label"] for i in coverage["items"]] == [
        t["label"] for t in event["executor"]["targets"]
    ]
    assert rounds[-1]["confidence"] == coverage["confidence"]


# ----- Finalize -----------------------------------------------------------------------------------


@replays("finalize/input.json")
def test_finalize_answers_with_candidates_and_their_provenance(handlers, wired_runtime):
    out = replay(handlers, "finalize/input.json")
    resp = out["response"]
    assert "executor" not in out and "round" not in out
    assert 1 <= len(resp["candidates"]) <= 5
    for c in resp["candidates"]:
        prov = c["provenance"]
        assert prov["collection"] == "tools"
        assert prov["hits"], f"{c['id']} has no source hit"
        assert 0.0 <= c["score"] <= 1.0
    assert resp["errors"] == []
    assert resp["cache"]["key"] == out["cache"]["key"] and resp["cache"]["hit"] is False
    assert resp["extractor"]["path"] == "rules"
    assert resp["retrievalReport"]["rounds"]
    # AND after one round the order is the state's own fused list (no reranker), cut at limit
    event = load_event("finalize/input.json")
    first = [f["id"] for f in event["executor"]["firstFused"]]
    assert len(event["executor"]["roundRankings"]) == 1
    assert [c["id"] for c in resp["candidates"]] == first[: event["request"]["limit"]]


@replays("finalize/cache_hit.json")
def test_finalize_passes_a_cache_hit_through_unchanged(handlers, wired_runtime):
    event = load_event("finalize/cache_hit.json")
    assert event["cache"]["hit"] is True and "executor" not in event
    out = replay(handlers, "finalize/cache_hit.json")
    # the same state (its wire form lists its long texts: none here, whether or not recorded)
    assert out.pop("texts") == [] and event.pop("texts", []) == [] and out == event
    assert out["response"]["candidates"]


@replays("finalize/after_fuse_error.json")
def test_finalize_after_a_fuse_failure_answers_from_round_1_and_lists_the_error(
    handlers, wired_runtime
):
    # GIVEN round 2's FuseRerank was killed (its Catch kept the input and added fuseError)
    event = load_event("finalize/after_fuse_error.json")
    assert event["round"]["index"] == 2 and event["fuseError"]["Error"] == "Runtime.ExitError"
    # WHEN Finalize runs
    out = replay(handlers, "finalize/after_fuse_error.json")
    resp = out["response"]
    # THEN the error is listed under the failed step and round 1's candidates are returned
    errors = [e for e in resp["errors"] if e["source"] == "FuseRerank"]
    assert errors and errors[0]["error"] == "Runtime.ExitError"
    assert "signal: killed" in errors[0]["message"]
    assert resp["candidates"]
    assert len(resp["retrievalReport"]["rounds"]) == 1
    assert resp["retrievalReport"]["stopReason"].startswith("FuseRerank failed")


# ----- SearchApiFunction --------------------------------------------------------------------------


def _body(out: dict) -> Any:
    return json.loads(out["body"])


def _local_ids(service, query: str, limit: int) -> list[str]:
    """What the in-process runner answers for the same request on the same deps."""
    return [c.id for c in service.search(query, limit=limit).output.candidates]


@replays("search_api/post_search.json")
def test_post_search_answers_200_with_the_candidates_of_the_step_by_step_run(
    handlers, wired_runtime, tools_engine
):
    out = replay(handlers, "search_api/post_search.json")
    assert out["statusCode"] == 200, out["body"][:500]
    assert out["headers"]["Content-Type"] == "application/json"
    body = _body(out)
    assert body["query"] == "free code editor"
    assert 1 <= len(body["candidates"]) <= 5
    # the API's orchestrator answers what the in-process runner answers on the same deps
    assert [c["id"] for c in body["candidates"]] == _local_ids(tools_engine, "free code editor", 5)


@replays("search_api/post_search_follow_up.json")
def test_post_search_with_history_reads_the_follow_up_as_the_runner_does(
    handlers, wired_runtime, tools_engine
):
    event = load_event("search_api/post_search_follow_up.json")
    sent = json.loads(event["body"])
    out = replay(handlers, "search_api/post_search_follow_up.json")
    assert out["statusCode"] == 200, out["body"][:500]
    body = _body(out)
    assert body["intent"]["followUp"]["kind"] == "filter"
    expected = tools_engine.search(sent["query"], limit=sent["limit"], history=sent["history"])
    assert [c["id"] for c in body["candidates"]] == [c.id for c in expected.output.candidates]


@replays("search_api/post_search_form_encoded.json")
def test_post_search_reads_a_json_body_sent_form_encoded_like_curl_d(
    handlers, wired_runtime, tools_engine
):
    event = load_event("search_api/post_search_form_encoded.json")
    assert event["headers"]["content-type"] == "application/x-www-form-urlencoded"
    out = replay(handlers, "search_api/post_search_form_encoded.json")
    assert out["statusCode"] == 200, out["body"][:500]
    assert [c["id"] for c in _body(out)["candidates"]] == _local_ids(
        tools_engine, "free code editor", 5
    )


@replays(
    "search_api/post_search_invalid_limit.json",
    "search_api/post_search_unknown_field.json",
    "search_api/post_search_empty_query.json",
)
@pytest.mark.parametrize(
    ("rel", "field", "type_"),
    [
        ("search_api/post_search_invalid_limit.json", "limit", "less_than_equal"),
        ("search_api/post_search_unknown_field.json", "sort", "extra_forbidden"),
        ("search_api/post_search_empty_query.json", "query", "string_too_short"),
    ],
)
def test_post_search_rejects_an_invalid_body_with_422_naming_the_field(
    handlers, wired_runtime, rel, field, type_
):
    out = replay(handlers, rel)
    assert out["statusCode"] == 422
    body = _body(out)
    assert body["error"] == "ValidationError"
    assert [(d["field"], d["type"]) for d in body["detail"]] == [(field, type_)]
    assert field in body["message"]


@replays("search_api/get_health.json")
def test_health_is_200_ok(handlers):
    out = replay(handlers, "search_api/get_health.json")
    assert out["statusCode"] == 200
    assert _body(out) == {"status": "ok"}


@replays("search_api/get_openapi.json")
def test_openapi_document_describes_the_search_body(handlers):
    # WHEN GET /openapi.json is replayed
    out = replay(handlers, "search_api/get_openapi.json")
    # THEN it is an OpenAPI 3 document
    assert out["statusCode"] == 200, out.get("body", "")[:500]
    doc = _body(out)
    assert doc["openapi"].startswith("3.")
    assert doc["info"]["title"] == "agentic-search" and doc["info"]["version"]
    assert {"/search", "/health", "/openapi.json"} <= set(doc["paths"])
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            assert op.get("responses"), f"{method.upper()} {path} documents no response"
    # AND POST /search takes a JSON SearchBody whose limit is at most 100, no extra fields
    post = doc["paths"]["/search"]["post"]
    schema = post["requestBody"]["content"]["application/json"]["schema"]
    assert schema["$ref"] == "#/components/schemas/SearchBody"
    body = doc["components"]["schemas"]["SearchBody"]
    assert body["properties"]["limit"]["maximum"] == 100
    assert body["properties"]["limit"]["minimum"] == 1
    assert body["properties"]["query"]["maxLength"] == 4000
    assert body["required"] == ["query"]
    assert body["additionalProperties"] is False
    # AND every component schema is valid JSON Schema 2020-12 (OpenAPI 3.1's dialect)
    for name, component in doc["components"]["schemas"].items():
        try:
            Draft202012Validator.check_schema(component)
        except Exception as exc:  # pragma: no cover - the message names the schema
            pytest.fail(f"components.schemas.{name}: {exc}")


@replays(
    "search_api/default_post_sync_status.json",
    "search_api/default_get_search.json",
    "search_api/default_get_unknown.json",
)
@pytest.mark.parametrize(
    ("rel", "status", "allow"),
    [
        ("search_api/default_post_sync_status.json", 405, "GET"),
        ("search_api/default_get_search.json", 405, "POST"),
        ("search_api/default_get_unknown.json", 404, None),
    ],
)
def test_the_default_route_answers_405_with_allow_or_404_as_serve_does(
    handlers, rel, status, allow
):
    # GIVEN a request no route of the template matches, as API Gateway hands it to
    # SearchApiFunction through the $default route (issue 25 finding 10)
    event = load_event(rel)
    assert event["routeKey"] == event["requestContext"]["routeKey"] == "$default"
    method, path = event["requestContext"]["http"]["method"], event["rawPath"]
    # WHEN it is replayed
    out = replay(handlers, rel)
    # THEN a known path answers 405 naming its methods in Allow, an unknown one 404 "no route"
    assert out["statusCode"] == status, out["body"]
    body = _body(out)
    headers = out.get("headers") or {}
    if allow is None:
        assert body == {"error": "NotFound", "message": f"no route {method} {path}"}
        assert "Allow" not in headers
    else:
        assert headers["Allow"] == allow
        assert body == {"error": "MethodNotAllowed", "message": f"{method} {path}: use {allow}"}


# ----- McpFunction (/mcp: the MCP server over stateless streamable HTTP) -----------------------


def _rpc(out: dict) -> dict:
    """The JSON-RPC response of an /mcp answer (200, JSON, no session id: stateless)."""
    assert out["statusCode"] == 200, out["body"][:500]
    assert out["headers"]["content-type"].startswith("application/json")
    assert "mcp-session-id" not in out["headers"]
    message = _body(out)
    assert message["jsonrpc"] == "2.0" and "error" not in message, message
    return message["result"]


@replays("mcp_api/post_initialize.json")
def test_mcp_initialize_names_the_server_and_its_tools_and_resources(handlers, wired_runtime):
    result = _rpc(replay(handlers, "mcp_api/post_initialize.json"))
    assert result["serverInfo"]["name"] == "agentic-search"
    assert result["protocolVersion"] == "2025-11-25"  # the client's, which the SDK speaks
    assert {"tools", "resources"} <= set(result["capabilities"])


@replays("mcp_api/post_tools_list.json")
def test_mcp_tools_list_gives_five_read_only_tools_with_input_and_output_schemas(
    handlers, wired_runtime
):
    tools = _rpc(replay(handlers, "mcp_api/post_tools_list.json"))["tools"]
    assert [t["name"] for t in tools] == [
        "search",
        "explain",
        "get_record",
        "compare",
        "list_domains",
    ]
    for tool in tools:
        assert tool["annotations"]["readOnlyHint"] is True, tool["name"]
        assert tool["annotations"]["destructiveHint"] is False, tool["name"]
        Draft202012Validator.check_schema(tool["inputSchema"])
        Draft202012Validator.check_schema(tool["outputSchema"])
    search = tools[0]
    assert search["inputSchema"]["required"] == ["query"]
    assert search["inputSchema"]["properties"]["limit"]["maximum"] == 100


@replays("mcp_api/post_tools_call_search.json")
def test_mcp_search_answers_the_candidates_of_the_api_in_the_advertised_schema(
    handlers, wired_runtime, tools_engine
):
    tools = _rpc(replay(handlers, "mcp_api/post_tools_list.json"))["tools"]
    [schema] = [t["outputSchema"] for t in tools if t["name"] == "search"]
    result = _rpc(replay(handlers, "mcp_api/post_tools_call_search.json"))
    assert result["isError"] is False
    structured = result["structuredContent"]
    Draft202012Validator(schema).validate(structured)
    assert json.loads(result["content"][0]["text"]) == structured  # the text is the same JSON
    # the state machine's answer (the local runner on the same deps), as POST /search gives it
    assert [c["id"] for c in structured["candidates"]] == _local_ids(
        tools_engine, "free code editor", 5
    )
    assert all(c["provenance"]["hits"] for c in structured["candidates"])


@replays("mcp_api/post_tools_call_unknown_domain.json")
def test_mcp_search_in_an_unknown_domain_is_a_tool_error_with_the_apis_reason(
    handlers, wired_runtime
):
    result = _rpc(replay(handlers, "mcp_api/post_tools_call_unknown_domain.json"))
    assert result["isError"] is True
    [text] = [c["text"] for c in result["content"]]
    # POST /search with the same arguments: a 422 whose detail says the same of the same field
    event = load_event("search_api/post_search.json")
    event["body"] = json.dumps({"query": "free code editor", "domain": "recipes"})
    [problem] = _body(replay(handlers, "search_api/post_search.json", event))["detail"]
    assert problem["field"] == "domain"
    assert text == f"invalid field(s): domain ({problem['message']})"
    assert "unknown domain 'recipes' (known: documents, tools)" in text


# ----- access control: JWT claims -> principals, over a DynamoDB cache (moto) -----------------

#: The access-controlled domain the JWT events search (tests/support/access.py), default public:
#: two records for the ``eng`` group, one for another user, the rest without a list.
ACL_RECORDS = 8


@pytest.fixture()
def access_api(tmp_path, embedder, monkeypatch) -> Iterator[dict[str, set[str]]]:
    """SearchApiFunction over the ``acltools`` domain with its result cache in a moto
    DynamoDB table; yields the ids each kind of caller may read."""
    import boto3
    from moto import mock_aws
    from support.access import access_yaml, tools_records, with_access
    from support.aws import fake_credentials

    from agentic_search.config import Settings
    from agentic_search.pipeline.runner import LocalRunner
    from agentic_search.service import SearchService
    from agentic_search_lambda.orchestrators import LocalOrchestrator
    from agentic_search_lambda.runtime import Runtime
    from agentic_search_lambda.settings import LambdaSettings

    fake_credentials(monkeypatch)
    records = tools_records()[:ACL_RECORDS]
    ids = [r["id"] for r in records]
    acls = {ids[0]: ["eng"], ids[1]: ["eng", "qa"], ids[2]: ["u-bob"]}
    yaml = access_yaml(tmp_path / "acltools.yaml", "public")
    with mock_aws():
        boto3.client("dynamodb").create_table(
            TableName="cache",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        settings = Settings(
            agentic_search_home=tmp_path / "home",
            cache_backend="dynamodb",
            cache_table="cache",
            domain_files=[yaml],
        )
        service = SearchService.create(settings, str(yaml), embedder=embedder)
        service.ingest_records(with_access(records, acls))
        runner = LocalRunner(lambda _: service.deps, 2)
        rt = Runtime(
            settings,
            LambdaSettings(),
            deps=lambda _: service.deps,
            orchestrator=LocalOrchestrator(runner),
        )
        public = set(ids[3:])
        with use_runtime(rt):
            yield {"alice": public | {ids[0], ids[1]}, "anonymous": public}
        runner.close()
        service.close()


@replays("search_api/post_search_jwt_groups.json", "search_api/post_search_jwt_no_claims.json")
def test_jwt_claims_are_the_callers_principals_and_no_claims_read_only_public(handlers, access_api):
    alice = _body(replay(handlers, "search_api/post_search_jwt_groups.json"))
    anonymous = _body(replay(handlers, "search_api/post_search_jwt_no_claims.json"))
    got_alice = {c["id"] for c in alice["candidates"]}
    got_anonymous = {c["id"] for c in anonymous["candidates"]}
    assert got_alice <= access_api["alice"] and got_alice & (
        access_api["alice"] - access_api["anonymous"]
    )  # the group's records are found
    assert got_anonymous and got_anonymous <= access_api["anonymous"]


@replays("search_api/post_search_iam_role.json")
def test_an_iam_callers_role_tags_are_its_principals(handlers, access_api):
    # GIVEN the signing role (moto's IAM, inside the fixture's mock) tagged with group eng
    import boto3

    boto3.client("iam").create_role(
        RoleName="search-readers",
        AssumeRolePolicyDocument='{"Version":"2012-10-17","Statement":[]}',
        Tags=[{"Key": "groups", "Value": "eng"}],
    )
    # WHEN a session of it searches (AuthMode=IAM: the event names the session, no tags)
    got = {c["id"] for c in _body(replay(handlers, "search_api/post_search_iam_role.json"))[
        "candidates"
    ]}  # fmt: skip
    # THEN it reads what the group eng may: the public records and the group's
    assert got <= access_api["alice"] and got & (access_api["alice"] - access_api["anonymous"])


def test_two_jwt_callers_alternating_are_never_served_each_others_cached_answer(
    handlers, access_api
):
    events = {
        "alice": load_event("search_api/post_search_jwt_groups.json"),
        "anonymous": load_event("search_api/post_search_jwt_no_claims.json"),
    }
    first: dict[str, list[str]] = {}
    hits = 0
    for i in range(100):
        who = "alice" if i % 2 == 0 else "anonymous"
        body = _body(replay(handlers, "search_api/post_search.json", events[who]))
        ids = [c["id"] for c in body["candidates"]]
        assert set(ids) <= access_api[who]
        assert first.setdefault(who, ids) == ids
        hits += bool(body["cache"]["hit"])
    assert first["alice"] != first["anonymous"]
    assert hits == 98  # each caller's first answer was computed, every later one its own hit
