"""The search ASL (layers/core/agentic_search/statemachine/search.asl.json) executed by moto's
Step Functions interpreter, with every Task's Lambda function run in-process by its real handler
(functions/<step>/app.py).

moto runs Lambda code in Docker, which this machine does not have; the one seam is moto's
``LambdaFunction._invoke_lambda``, replaced by a dispatch to the handler the template names
for that function (the Lambda runtime is the edge of the system). Everything else is real: the
ASL, its Map, Retry/Catch routes, JSONPath, the handlers, the core and the embedded stores.

GIVEN the bundled catalog, WHEN a search runs through the state machine, THEN it answers what
the local runner answers, routes failures through the named Catch states, and every state's
output stays under Step Functions' 256 KB limit.
"""

from __future__ import annotations

import io
import json
import time
import zipfile
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.awslambda.models import LambdaFunction
from support.aws import wait_for_execution
from support.budgets import unbounded
from support.lambdas import STATE_FUNCTIONS, invoke_serialized, load_function, use_runtime
from support.paths import SEARCH_ASL

from agentic_search.pipeline import steps
from agentic_search.pipeline.runner import LocalRunner, RunResult
from agentic_search.service import SearchService
from agentic_search.wire import BUDGET_STOP, QUERY_MAX_CHARS, SearchRequest
from agentic_search_cli.local_server import LocalContext
from agentic_search_lambda.runtime import Runtime

ASL = SEARCH_ASL
REGION = "us-east-1"
STATE_LIMIT = 256 * 1024
#: The executions' timeout under moto (s): generous, so machine load cannot time one out.
EXECUTION_TIMEOUT_S = 600

#: Template logical id -> code directory (docs/state-machine.md).
FUNCTIONS = {logical: directory for directory, logical in STATE_FUNCTIONS.items()}


class Faults:
    """Failures to inject per function: name -> predicate(event) that raises when true."""

    def __init__(self) -> None:
        self.rules: dict[str, Callable[[dict], bool]] = {}
        self.calls: dict[str, int] = {}

    def check(self, function: str, event: dict) -> None:
        self.calls[function] = self.calls.get(function, 0) + 1
        rule = self.rules.get(function)
        if rule is not None and rule(event):
            raise RuntimeError(f"injected fault in {function}")


@pytest.fixture(scope="module")
def handlers() -> dict[str, Any]:
    """The handler modules, by template logical id."""
    return {name: load_function(d) for name, d in FUNCTIONS.items()}


@pytest.fixture()
def steps_over(tools_engine: SearchService) -> Iterator[Any]:
    """The handlers run over the session service (one Qdrant local client per folder) with
    rounds and sources no busy host can cut (:func:`support.budgets.unbounded`, whatever the
    environment says; the budget test sets its own); yields the container runtime they use."""
    deps = tools_engine.deps.derive()
    deps.settings = unbounded(tools_engine.settings)
    with use_runtime(Runtime(deps.settings, deps=lambda _: deps)) as rt:
        yield rt


@pytest.fixture()
def sfn(handlers, steps_over, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, str, Faults]]:
    faults = Faults()
    names_to_logical: dict[str, str] = {}

    def invoke(self: LambdaFunction, event: Any = None) -> tuple[str, bool, str]:
        logical = names_to_logical[self.function_name]
        payload = json.loads(event) if isinstance(event, str | bytes) else event
        try:
            faults.check(logical, payload)
            out = invoke_serialized(
                handlers[logical].handler, payload, LocalContext(function_name=logical)
            )
            return json.dumps(out), False, ""
        except Exception as exc:  # what the Lambda runtime reports for an unhandled error
            body = {"errorType": type(exc).__name__, "errorMessage": str(exc)}
            return json.dumps(body), True, ""

    monkeypatch.setattr(LambdaFunction, "_invoke_lambda", invoke)
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        iam = boto3.client("iam", region_name=REGION)
        role = iam.create_role(RoleName="sfn", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        lam = boto3.client("lambda", region_name=REGION)
        code = io.BytesIO()
        with zipfile.ZipFile(code, "w") as zf:
            zf.writestr("app.py", "def handler(event, context):\n    return event\n")
        # The execution's own TimeoutSeconds (27 s, checked against the API's 30 s in
        # test_template.py) is lifted here: moto runs every function in this process, and a
        # five-round search with 100 results took longer than 27 s on a loaded machine
        asl = json.loads(ASL.read_text())
        asl["TimeoutSeconds"] = EXECUTION_TIMEOUT_S
        definition = json.dumps(asl)
        for logical in FUNCTIONS:
            arn = lam.create_function(
                FunctionName=f"test-{logical}",
                Runtime="python3.12",
                Role=role,
                Handler="app.handler",
                Code={"ZipFile": code.getvalue()},
            )["FunctionArn"]
            names_to_logical[f"test-{logical}"] = logical
            definition = definition.replace("${" + logical + "Arn}", arn)
        assert "${" not in definition, "every DefinitionSubstitution is a function ARN"
        client = boto3.client("stepfunctions", region_name=REGION)
        arn = client.create_state_machine(
            name="search", definition=definition, roleArn=role, type="EXPRESS"
        )["stateMachineArn"]
        yield client, arn, faults


def execute(sfn: tuple[Any, str, Faults], request: dict) -> tuple[dict, list[dict]]:
    client, arn, _ = sfn
    state = {"request": request, "correlationId": "test-1", "config": {"mapMaxConcurrency": 4}}
    ex = client.start_execution(
        stateMachineArn=arn, name=f"search-{time.monotonic_ns()}", input=json.dumps(state)
    )["executionArn"]
    out = wait_for_execution(client, ex, timeout_s=EXECUTION_TIMEOUT_S)
    history = client.get_execution_history(executionArn=ex, maxResults=1000)["events"]
    return out, history


def entered(history: list[dict]) -> list[str]:
    return [
        e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e
    ]


def local(deps: Any, request: dict) -> dict:
    result = local_run(deps, request)
    assert result.state.response is not None
    return result.state.response


def local_run(deps: Any, request: dict, *, wire: bool = False) -> RunResult:
    runner = LocalRunner(lambda _: deps, 4, wire=wire)
    return runner.run(SearchRequest.model_validate(request))


def ranked(response: dict) -> list[tuple[str, float]]:
    return [(c["id"], c["score"]) for c in response["candidates"]]


@pytest.mark.parametrize(
    "query",
    ["chatbot for healthcare", "open source video generator for iOS", "vector database"],
)
def test_the_state_machine_answers_what_the_local_runner_answers(sfn, steps_over, query):
    request = {"query": query, "limit": 5}
    out, history = execute(sfn, request)
    assert out["status"] == "SUCCEEDED", out
    response = json.loads(out["output"])
    expected = local(steps_over.deps("tools"), request)
    assert ranked(response) == ranked(expected)
    assert len(response["retrievalReport"]["rounds"]) == len(expected["retrievalReport"]["rounds"])
    names = entered(history)
    assert names[:5] == ["CacheCheck", "CacheHit", "ExtractIntent", "PlanQuery", "PrepareRound"]
    assert names[-3:] == ["Finalize", "CacheStore", "Respond"]
    # one Retrieve per sub-query of every round
    rounds = response["retrievalReport"]["rounds"]
    assert names.count("FuseRerank") == names.count("GradeRound") == len(rounds)
    assert names.count("Retrieve") >= len(rounds)


def test_a_round_two_search_loops_back_through_prepare_round(sfn):
    # GIVEN rounds with no latency budget a loaded host reaches (steps_over)
    out, history = execute(sfn, {"query": "chatbot for healthcare", "limit": 5})
    names = entered(history)
    response = json.loads(out["output"])
    # THEN round 2 ran, and the search stopped for what it found, never for the clock
    assert BUDGET_STOP not in response["retrievalReport"]["stopReason"]
    assert len(response["retrievalReport"]["rounds"]) == 2
    assert names.count("PrepareRound") == 2 and names.count("Continue") == 2


def test_a_failing_retrieve_is_listed_and_the_other_sources_still_answer(sfn, steps_over):
    _, _, faults = sfn
    faults.rules["RetrieveFunction"] = lambda e: e["subQuery"]["kind"] == "sparse"
    out, history = execute(sfn, {"query": "vector database", "limit": 5})
    assert out["status"] == "SUCCEEDED"
    response = json.loads(out["output"])
    failed = [e for e in response["errors"] if e["source"].startswith("sparse:")]
    assert failed and failed[0]["error"] == "RuntimeError"
    assert failed[0]["message"] == "injected fault in RetrieveFunction"  # no stack trace
    assert response["candidates"], "dense and structured sources still answered"
    assert "RetrieveFailed" in entered(history)


def test_an_intent_failure_takes_the_rule_based_fallback_state(sfn):
    _, _, faults = sfn
    seen: list[dict] = []

    def first_call_fails(event: dict) -> bool:
        seen.append(event)
        return len(seen) == 1

    faults.rules["ExtractIntentFunction"] = first_call_fails
    out, history = execute(sfn, {"query": "free code editor", "limit": 3})
    assert out["status"] == "SUCCEEDED"
    names = entered(history)
    assert "ExtractIntentRules" in names
    response = json.loads(out["output"])
    assert "fallback after RuntimeError" in response["extractor"]["reason"]
    assert "intentError" in seen[1]


def test_a_fuse_failure_in_round_two_finalizes_with_round_one_and_lists_the_error(sfn):
    _, _, faults = sfn
    faults.rules["FuseRerankFunction"] = lambda e: e["round"]["index"] == 2
    out, history = execute(sfn, {"query": "chatbot for healthcare", "limit": 5})
    assert out["status"] == "SUCCEEDED"
    response = json.loads(out["output"])
    assert [e["source"] for e in response["errors"]] == ["FuseRerank"]
    assert len(response["retrievalReport"]["rounds"]) == 1
    assert response["candidates"]
    assert entered(history)[-3:] == ["Finalize", "CacheStore", "Respond"]


def test_a_prepare_failure_in_round_two_finalizes_with_round_one(sfn):
    _, _, faults = sfn
    faults.rules["PrepareRoundFunction"] = lambda e: e["executor"]["roundIndex"] == 1
    out, _ = execute(sfn, {"query": "chatbot for healthcare", "limit": 5})
    assert out["status"] == "SUCCEEDED"
    response = json.loads(out["output"])
    assert [e["source"] for e in response["errors"]] == ["PrepareRound"]
    assert "injected fault" in response["errors"][0]["message"]
    assert "stackTrace" not in response["errors"][0]["message"]
    assert len(response["retrievalReport"]["rounds"]) == 1 and response["candidates"]


def test_a_failing_finalize_fails_the_execution_with_a_named_error(sfn):
    _, _, faults = sfn
    faults.rules["FinalizeFunction"] = lambda e: True
    out, history = execute(sfn, {"query": "vector database", "limit": 3})
    assert out["status"] == "FAILED"
    assert "SearchFailed" in entered(history)


def test_a_cache_hit_skips_retrieval(sfn, steps_over, tmp_path):
    from agentic_search.adapters.caches import SqliteCache

    cached = steps_over.deps("tools").derive(cache=SqliteCache(tmp_path / "cache.sqlite"))
    steps_over.deps = lambda _: cached
    request = {"query": "vector database", "limit": 3}
    first, _ = execute(sfn, request)
    second, history = execute(sfn, request)
    names = entered(history)
    assert names == ["CacheCheck", "CacheHit", "Finalize", "CacheStore", "Respond"]
    a, b = json.loads(first["output"]), json.loads(second["output"])
    assert ranked(a) == ranked(b) and b["cache"]["hit"] is True and a["cache"]["hit"] is False


#: The largest request the API allows: limit 100, 5 rounds, and (second case) a query of
#: QUERY_MAX_CHARS (4,000) characters, which the steps repeat in every plan, round report and
#: source hit, and the state's wire form carries once (agentic_search.wire.texts).
LONG_QUERY = (
    "coding assistant like Amazon Q Developer that runs in the IDE and the terminal, with "
    "security scanning, code transformation and agents for enterprise teams on AWS; "
) * 50
LONG_QUERY = LONG_QUERY[:QUERY_MAX_CHARS].rstrip()


@pytest.fixture()
def every_round(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rounds never stop before ``max_rounds`` (as if coverage never completed): the stopping
    rule's own answer is kept only for the last round."""
    from agentic_search.pipeline import grade_round

    rule = grade_round.should_continue

    def keep_going(state, new_evidence, round_ms, found_any):
        go, reason = rule(state, new_evidence, round_ms, found_any)
        if state.round_index < state.caps.max_rounds:
            return True, f"continue (forced by the test; the rule said: {reason})"
        return go, reason

    monkeypatch.setattr(grade_round, "should_continue", keep_going)


def state_sizes(history: list[dict]) -> list[tuple[str, int]]:
    """(state name, bytes) of every state's output, as moto's interpreter wrote it (ASCII JSON
    with spaces: never fewer bytes than the UTF-8 JSON Step Functions counts)."""
    return [
        (e["stateExitedEventDetails"]["name"], len(e["stateExitedEventDetails"]["output"].encode()))
        for e in history
        if "stateExitedEventDetails" in e
    ]


@pytest.mark.parametrize(
    ("query", "largest_first"),
    [
        ("AI coding assistant for AWS developers", True),
        (LONG_QUERY, False),
    ],
    ids=["largest-record-first", "longest-query"],
)
def test_every_state_output_stays_under_256_kb(
    sfn, steps_over, every_round, catalog_records, query, largest_first
):
    request = {"query": query, "limit": 100, "rounds": 5}
    out, history = execute(sfn, request)
    assert out["status"] == "SUCCEEDED", out
    names = entered(history)
    assert names.count("GradeRound") == 5 and names.count("PrepareRound") == 5
    sizes = state_sizes(history)
    assert len(sizes) > 30 and max(size for _, size in sizes) < STATE_LIMIT, sizes
    assert not any("DataLimitExceeded" in json.dumps(e, default=str) for e in history)
    response = json.loads(out["output"])
    assert len(response["retrievalReport"]["rounds"]) == 5
    assert response["errors"] == []  # no step failed (a Catch would list it)
    # the local runner (no state limit) answers the same request with more than fits: the
    # guard trimmed and says so in the response
    untrimmed = local(steps_over.deps("tools"), request)
    assert len(json.dumps(untrimmed)) > STATE_LIMIT
    trimmed = response["retrievalReport"]["trimmed"]
    assert trimmed and any(t.startswith("query texts: ") for t in trimmed), trimmed
    ids = [c["id"] for c in response["candidates"]]
    best = [c["id"] for c in untrimmed["candidates"]][: len(ids)]
    if not any("hits of rank > " in t for t in trimmed):
        assert ids and ids == best  # best, in order
    else:
        # hits ranked below the limit were dropped (reported): their small RRF shares can swap
        # neighbours whose scores were that close, never which records are returned, nor the
        # first, and no record moves more than two ranks
        assert ids and set(ids) == set(best) and ids[0] == best[0], (ids, best)
        moved = {i: abs(n - best.index(i)) for n, i in enumerate(ids)}
        assert max(moved.values()) <= 2, (ids, best)
    # the query is carried once (state.texts): no round dropped a source hit ranked within
    # the first half of the request's limit (before, a 4,000-character query forced cuts at
    # rank 50, 30, 20; since the shipped enrichment adds the needs source, one state of this
    # 100-result, five-round request needs the cut at 50)
    cuts = [int(t.split("rank > ")[1].split()[0]) for t in trimmed if "hits of rank > " in t]
    assert all(cut >= request["limit"] // 2 for cut in cuts), trimmed
    if largest_first:  # the largest catalog record is the first result
        assert ids[0] == max(catalog_records, key=lambda r: len(json.dumps(r)))["id"]


# ----- one graph: the local run takes the ASL's path, state by state -------------------------


#: The states of one Map item (the Map's ItemProcessor).
ITEM_STATES = frozenset({"Retrieve", "RetrieveFailed"})


def canonical(names: list[str]) -> list[Any]:
    """``names`` with each Map's item states as a sorted tuple: Step Functions runs a Map's
    items concurrently (moto in threads, up to MaxConcurrency), so their states interleave in
    any order; what must agree is which states ran, and every state outside the Map, in
    order."""
    out: list[Any] = []
    run: list[str] = []
    for name in [*names, None]:
        if name in ITEM_STATES:
            run.append(name)
            continue
        if run:
            out.append(tuple(sorted(run)))
            run = []
        if name is not None:
            out.append(name)
    return out


def _sparse_fails(event: dict) -> bool:
    return event["subQuery"]["kind"] == "sparse"


@pytest.mark.parametrize(
    "path",
    ["simple", "relaxation", "two-rounds", "budget-stop", "failed-source", "cache-hit"],
)
def test_the_local_run_enters_the_states_step_functions_enters_in_the_same_order(
    sfn, steps_over, monkeypatch: pytest.MonkeyPatch, tmp_path, path
):
    """GIVEN one request per path of the graph, WHEN Step Functions (moto) runs the ASL and
    the local runner runs it over the same deps (and the same injected fault), THEN
    both enter the same states in the same order (the Map's Retrieve items included) and
    answer the same ranking, in-process and with JSON between the states."""
    from agentic_search.adapters.caches import SqliteCache

    _, _, faults = sfn
    base = steps_over.deps("tools")
    deps = base
    query = {
        "simple": "ollama pricing",
        "relaxation": "open source video generator for iOS",
        "two-rounds": "chatbot for healthcare",
        "budget-stop": "chatbot for healthcare",
        "failed-source": "vector database",
        "cache-hit": "vector database",
    }[path]
    request = {"query": query, "limit": 10}
    if path == "budget-stop":  # every round is over a budget of 1 microsecond
        tight = base.settings.model_copy(update={"round_budget_ms": 0.001})
        deps = base.derive()
        deps.settings = tight
    if path == "cache-hit":
        deps = base.derive(cache=SqliteCache(tmp_path / "cache.sqlite"))
    if path == "failed-source":  # the same fault at the same seam: the Retrieve function
        faults.rules["RetrieveFunction"] = _sparse_fails
        retrieve = steps.FUNCTIONS["RetrieveFunction"]

        def failing(event, c):
            if event.sub_query.kind == "sparse":
                raise RuntimeError("injected fault in RetrieveFunction")
            return retrieve(event, c)

        monkeypatch.setitem(steps.FUNCTIONS, "RetrieveFunction", failing)
    steps_over.deps = lambda _: deps
    if path == "cache-hit":
        execute(sfn, request)  # stores the answer
    out, history = execute(sfn, request)
    assert out["status"] == "SUCCEEDED", out
    expected = entered(history)
    response = json.loads(out["output"])
    for wire in (False, True):
        result = local_run(deps, request, wire=wire)
        assert canonical(result.trace) == canonical(expected), (wire, result.trace, expected)
        assert result.state.response is not None
        assert ranked(result.state.response) == ranked(response)
    # each case took the path it is named for
    report = response.get("retrievalReport") or {}
    rounds = expected.count("PrepareRound")
    if path == "simple":
        assert rounds == 1 and expected.count("Continue") == 1
    elif path == "relaxation":
        assert report["relaxed"] == ["platforms in [iOS]"]
    elif path == "two-rounds":
        assert rounds == 2 and len(report["rounds"]) == 2
    elif path == "budget-stop":
        assert rounds == 1 and report["stopReason"].startswith(BUDGET_STOP)
    elif path == "failed-source":
        assert "RetrieveFailed" in expected
        assert any(e["source"].startswith("sparse:") for e in response["errors"])
    else:
        assert expected == ["CacheCheck", "CacheHit", "Finalize", "CacheStore", "Respond"]
        assert response["cache"]["hit"] is True


def test_a_failing_finalize_fails_the_local_run_at_the_same_state(sfn, steps_over, monkeypatch):
    """GIVEN Finalize failing, THEN the execution fails at SearchFailed, and the local run
    raises SearchFailed with the step's error after the same states."""
    from agentic_search.pipeline.runner import SearchFailed

    _, _, faults = sfn
    faults.rules["FinalizeFunction"] = lambda e: True

    def failing(state, c):
        raise RuntimeError("injected fault in FinalizeFunction")

    monkeypatch.setitem(steps.FUNCTIONS, "FinalizeFunction", failing)
    request = {"query": "vector database", "limit": 3}
    out, history = execute(sfn, request)
    assert out["status"] == "FAILED"
    runner = LocalRunner(lambda _: steps_over.deps("tools"), 4)
    with pytest.raises(SearchFailed) as info:
        runner.run(SearchRequest.model_validate(request))
    assert (info.value.error, info.value.cause) == (
        "RuntimeError",
        "injected fault in FinalizeFunction",
    )
    assert entered(history)[-2:] == ["Finalize", "SearchFailed"]
