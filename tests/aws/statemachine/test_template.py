"""template.yaml and the search ASL (layers/core/agentic_search/statemachine/search.asl.json)
against docs/state-machine.md (the contract).

Nothing here asserts that a file merely exists: the template is parsed with cfn-lint's loader,
linted by cfn-lint, transformed by the SAM translator (aws-sam-translator, the library behind
`sam validate` and CloudFormation's SAM transform) into the IAM roles, API body and permissions a
deployment would create, and the ASL is parsed by moto's Step Functions interpreter (the ASL
grammar of LocalStack's engine). Executing the state machine is tested elsewhere.

The template declares ``AWS::LanguageExtensions`` before the SAM transform so that ``AuthMode``
can choose the HTTP API's ``Auth`` block with ``Fn::If``; :func:`resolve_language_extensions`
does what that transform does for this template (conditions from parameter values, ``Fn::If``,
``AWS::NoValue``) before the SAM translator runs.
"""

from __future__ import annotations

import ast
import copy
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from cfnlint.api import lint_file
from cfnlint.decode import cfn_yaml
from moto import mock_aws
from support.paths import REPO
from support.template import (
    ACCOUNT,
    ALL_SET_PARAMETERS,
    ALLOWED_MANAGED_POLICIES,
    API_FUNCTIONS,
    ASL,
    CONTRACT,
    CONTRACT_CHOICES,
    CONTRACT_MAP_TASKS,
    CONTRACT_TASKS,
    FAKE_SECRET,
    LAYER_REQUIREMENTS,
    NO_VALUE,
    REGION,
    REQUIRED_PARAMETERS,
    RESOURCE_STAR_ACTIONS,
    SECRET_PARAMETERS,
    SYNC_FUNCTIONS,
    SYNC_ROLES,
    SYNC_ROUTES,
    TEMPLATE,
    TRANSIENT_LAMBDA_ERRORS,
    as_list,
    functions_of,
    placeholder,
    plain,
    resolve_language_extensions,
    sam_transform,
    statements,
)


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return plain(cfn_yaml.load(str(TEMPLATE)))


@pytest.fixture(scope="module")
def asl() -> dict[str, Any]:
    with ASL.open(encoding="utf-8") as fh:
        return json.load(fh)


@pytest.fixture(scope="module")
def resources(template: dict[str, Any]) -> dict[str, Any]:
    return template["Resources"]


@pytest.fixture(scope="module")
def region() -> Iterator[str]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AWS_DEFAULT_REGION", REGION)
        yield REGION


@pytest.fixture(scope="module")
def deployed_default(template: dict[str, Any], region: str) -> dict[str, Any]:
    """Only the required parameters given: AuthMode IAM, no secrets."""
    return sam_transform(template, REQUIRED_PARAMETERS)


@pytest.fixture(scope="module")
def deployed_all_set(template: dict[str, Any], region: str) -> dict[str, Any]:
    """Every optional parameter given: AuthMode JWT, all three secrets."""
    return sam_transform(template, ALL_SET_PARAMETERS)


def _states_in_scope(states: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], dict]]:
    """(name, state, sibling states) for every state, Map item processors included."""
    for name, state in states.items():
        yield name, state, states
        if state["Type"] == "Map":
            yield from _states_in_scope(state["ItemProcessor"]["States"])


def _tasks(asl: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n: s for n, s, _ in _states_in_scope(asl["States"]) if s["Type"] == "Task"}


def _contract_table() -> list[tuple[list[str], str, str]]:
    """The "Functions" table of docs/state-machine.md: (states, function, code dir)."""
    rows = []
    for line in CONTRACT.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\|\s*([^|]+?)\s*\|\s*(\w+Function)\s*\|\s*(functions/\w+)\s*\|", line)
        if m:
            states = [re.sub(r"\s*\(.*\)$", "", s.strip()) for s in m.group(1).split(",")]
            rows.append((states, m.group(2), m.group(3)))
    return rows


# ----- the ASL ------------------------------------------------------------------------------------


def test_every_task_is_a_plain_lambda_invoke_passing_the_whole_state(asl):
    # GIVEN the ASL's Task states, WHEN their integration is read,
    # THEN each calls one function with the whole input and returns the function's payload
    # (an Express machine cannot use .sync or .waitForTaskToken integrations).
    tasks = _tasks(asl)
    assert tasks
    for name, task in tasks.items():
        assert task["Resource"] == "arn:aws:states:::lambda:invoke", name
        assert set(task["Parameters"]) == {"FunctionName", "Payload.$"}, name
        assert re.fullmatch(r"\$\{\w+FunctionArn\}", task["Parameters"]["FunctionName"]), name
        assert task["Parameters"]["Payload.$"] == "$", name
        assert task.get("OutputPath") == "$.Payload", name


def test_every_task_retries_transient_lambda_errors_with_backoff_and_jitter(asl):
    for name, task in _tasks(asl).items():
        retriers = [
            r for r in task.get("Retry", []) if set(r["ErrorEquals"]) >= TRANSIENT_LAMBDA_ERRORS
        ]
        assert len(retriers) == 1, f"{name}: no Retry on the transient Lambda errors"
        r = retriers[0]
        assert r["BackoffRate"] == 2, name
        assert r["JitterStrategy"] == "FULL", name
        assert r["IntervalSeconds"] >= 1 and 2 <= r["MaxAttempts"] <= 5, name
        assert r["IntervalSeconds"] <= r["MaxDelaySeconds"] <= 10, name
        # never retry everything: a failed LLM call must reach its Catch quickly
        assert "States.ALL" not in r["ErrorEquals"], name


def test_every_task_catches_everything_into_a_named_state_of_its_scope(asl):
    for name, state, siblings in _states_in_scope(asl["States"]):
        if state["Type"] != "Task":
            continue
        catches = state.get("Catch", [])
        assert [c["ErrorEquals"] for c in catches] == [["States.ALL"]], name
        assert catches[0]["Next"] in siblings, f"{name}: Catch -> {catches[0]['Next']}"
        assert catches[0]["ResultPath"].startswith("$."), f"{name}: Catch keeps the state"


def test_the_graph_is_the_contracts(asl):
    states = asl["States"]
    inner = states["RetrieveAll"]["ItemProcessor"]["States"]
    for scope, expected in ((states, CONTRACT_TASKS), (inner, CONTRACT_MAP_TASKS)):
        for name, (function, nxt, catch_path, catch_next) in expected.items():
            task = scope[name]
            assert task["Parameters"]["FunctionName"] == placeholder(f"{function}Arn"), name
            if nxt is None:
                assert task.get("End") is True and "Next" not in task, name
            else:
                assert task["Next"] == nxt, name
            assert (task["Catch"][0]["ResultPath"], task["Catch"][0]["Next"]) == (
                catch_path,
                catch_next,
            ), name
    for name, (variable, when_true, default) in CONTRACT_CHOICES.items():
        choice = states[name]
        assert choice["Type"] == "Choice", name
        assert choice["Default"] == default, name
        [rule] = choice["Choices"]
        assert rule["Next"] == when_true, name
        tests = rule.get("And", [rule])
        assert {"Variable": variable, "BooleanEquals": True} in tests, name
        assert {"Variable": variable, "IsPresent": True} in tests, name
    assert asl["StartAt"] == "CacheCheck"
    assert states["RetrieveAll"]["Next"] == "FuseRerank"
    assert states["Respond"] == {**states["Respond"], "Type": "Pass", "OutputPath": "$.response"}
    assert states["Respond"].get("End") is True
    # Everything else is accounted for: no state the contract does not name.
    named = set(CONTRACT_TASKS) | set(CONTRACT_CHOICES) | {"RetrieveAll", "Respond", "SearchFailed"}
    assert set(states) == named
    assert set(inner) == {"Retrieve", "RetrieveFailed"}


def test_every_state_is_reachable_and_every_path_ends(asl):
    def targets(state: dict[str, Any]) -> set[str]:
        out = {state[k] for k in ("Next", "Default") if k in state}
        out |= {c["Next"] for c in state.get("Choices", [])}
        out |= {c["Next"] for c in state.get("Catch", [])}
        return out

    def check(scope: dict[str, Any], start: str) -> None:
        seen, todo = set(), [start]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            state = scope[name]  # KeyError = a transition to a state that does not exist
            ends = state.get("End") is True or state["Type"] in {"Fail", "Succeed"}
            assert ends or targets(state), f"{name} neither ends nor goes anywhere"
            todo.extend(targets(state))
        assert seen == set(scope), f"unreachable: {set(scope) - seen}"

    check(asl["States"], asl["StartAt"])
    processor = asl["States"]["RetrieveAll"]["ItemProcessor"]
    check(processor["States"], processor["StartAt"])


def test_failures_end_in_search_failed_with_the_error_name(asl):
    failed = asl["States"]["SearchFailed"]
    assert failed["Type"] == "Fail"
    assert failed["ErrorPath"] == "$.error.Error" and failed["CausePath"] == "$.error.Cause"
    for name, state, _ in _states_in_scope(asl["States"]):
        for catch in state.get("Catch", []):
            if catch["Next"] == "SearchFailed":
                assert catch["ResultPath"] == "$.error", name


def test_the_map_runs_one_retrieve_per_sub_query_and_turns_a_failure_into_a_result(asl):
    m = asl["States"]["RetrieveAll"]
    assert m["Type"] == "Map"
    assert m["ItemsPath"] == "$.round.subQueries"
    assert m["ItemSelector"] == {
        "domain.$": "$.request.domain",
        "subQuery.$": "$$.Map.Item.Value",
        "correlationId.$": "$.correlationId",
        "caller.$": "$.caller",  # who asks: each source reads only what it may read
        "texts.$": "$.texts",  # what the sub-query's "$texts[i]" refer to
    }
    assert m["MaxConcurrencyPath"] == "$.config.mapMaxConcurrency" and "MaxConcurrency" not in m
    assert m["ResultPath"] == "$.round.results"
    assert m["ItemProcessor"]["ProcessorConfig"] == {"Mode": "INLINE"}  # Express: inline only
    failed = m["ItemProcessor"]["States"]["RetrieveFailed"]
    assert failed["Type"] == "Pass" and failed.get("End") is True
    # {"name": <subQuery.name>, "hits": [],
    #  "error": {"source": <subQuery.name>, "error": <Error>, "message": <Cause>}}
    assert failed["Parameters"] == {
        "name.$": "$.subQuery.name",
        "hits": [],
        "error": {
            "source.$": "$.subQuery.name",
            "error.$": "$.error.Error",
            "message.$": "$.error.Cause",
        },
    }


def test_the_search_stops_before_the_http_api_gives_up(asl, resources):
    # HTTP API integrations time out at 30 s; the state machine must end (TIMED_OUT) first so
    # SearchApiFunction can answer with the error rather than be cut off.
    api_fn = resources["SearchApiFunction"]["Properties"]
    assert asl["TimeoutSeconds"] < api_fn["Timeout"] <= 30
    search = api_fn["Events"]["Search"]["Properties"]
    assert search["TimeoutInMillis"] <= 30_000


def test_moto_step_functions_accepts_the_asl_with_substitutions_applied(asl, resources):
    # GIVEN the ASL with each ${XxxFunctionArn} replaced the way CloudFormation does,
    # WHEN moto's Step Functions engine parses it (CreateStateMachine, EXPRESS),
    # THEN it is accepted (a grammar error raises InvalidDefinition).
    subs = resources["SearchStateMachine"]["Properties"]["DefinitionSubstitutions"]
    text = ASL.read_text(encoding="utf-8")
    for key, value in subs.items():
        function = value["Fn::GetAtt"][0]
        arn = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{function}"
        text = text.replace(placeholder(key), arn)
    assert "${" not in text
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        sfn = boto3.client("stepfunctions", region_name=REGION)
        created = sfn.create_state_machine(
            name="search",
            definition=text,
            roleArn=f"arn:aws:iam::{ACCOUNT}:role/search-state-machine",
            type="EXPRESS",
        )
        described = sfn.describe_state_machine(stateMachineArn=created["stateMachineArn"])
        assert described["type"] == "EXPRESS"
        assert json.loads(described["definition"])["StartAt"] == "CacheCheck"


# ----- template: state machine and functions ------------------------------------------------------


def test_definition_substitutions_and_asl_placeholders_match_both_ways(asl, resources):
    props = resources["SearchStateMachine"]["Properties"]
    placeholders = set(re.findall(r"\$\{(\w+)\}", ASL.read_text(encoding="utf-8")))
    subs = props["DefinitionSubstitutions"]
    assert placeholders == set(subs)
    functions = functions_of(resources)
    for key, value in subs.items():
        # XxxFunctionArn -> !GetAtt XxxFunction.Arn, a function of this template
        assert value == {"Fn::GetAtt": [key.removesuffix("Arn"), "Arn"]}, key
        assert key.removesuffix("Arn") in functions, key
    # ... and the state machine may invoke exactly those functions.
    invokable = [
        p["LambdaInvokePolicy"]["FunctionName"]["Ref"]
        for p in props["Policies"]
        if "LambdaInvokePolicy" in p
    ]
    assert sorted(invokable) == sorted(k.removesuffix("Arn") for k in subs)
    assert "Definition" not in props and "DefinitionString" not in props
    assert props["DefinitionUri"] == "layers/core/agentic_search/statemachine/search.asl.json"


def test_state_machine_is_express_logs_errors_without_data_and_is_traced(resources):
    sm = resources["SearchStateMachine"]
    props = sm["Properties"]
    assert sm["Type"] == "AWS::Serverless::StateMachine"
    assert props["Type"] == "EXPRESS"
    logging = props["Logging"]
    assert logging["Level"] == "ERROR"
    assert logging["IncludeExecutionData"] is False
    [destination] = logging["Destinations"]
    group = destination["CloudWatchLogsLogGroup"]["LogGroupArn"]["Fn::GetAtt"][0]
    assert resources[group]["Type"] == "AWS::Logs::LogGroup"
    assert resources[group]["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}
    assert props["Tracing"] == {"Enabled": True}


def test_every_function_of_the_contract_is_in_the_template(resources, asl):
    rows = _contract_table()
    assert len(rows) == 9, rows
    functions = functions_of(resources)
    tasks = _tasks(asl)
    for states, function, code in rows:
        props = functions[function]
        assert props["CodeUri"].rstrip("/") == code, function
        assert props["Handler"] == "app.handler", function
        for state in states:
            assert tasks[state]["Parameters"]["FunctionName"] == placeholder(f"{function}Arn"), (
                state
            )
    api = functions["SearchApiFunction"]
    assert (api["CodeUri"].rstrip("/"), api["Handler"]) == ("functions/search_api", "app.handler")
    assert set(functions) == {f for _, f, _ in rows} | API_FUNCTIONS | SYNC_FUNCTIONS


def test_every_code_uri_has_an_app_module(resources):
    if not (REPO / "functions").is_dir():
        pytest.skip("functions/ is not written yet (sam build checks this too)")
    for name, props in functions_of(resources).items():
        module, _, attr = props["Handler"].rpartition(".")
        app = REPO / props["CodeUri"] / f"{module}.py"
        assert app.is_file(), f"{name}: {app} missing"
        tree = ast.parse(app.read_text(encoding="utf-8"))
        bound = set()
        for node in tree.body:  # a module-level def, assignment or import binds the handler
            if isinstance(node, ast.FunctionDef):
                bound.add(node.name)
            elif isinstance(node, ast.Assign):
                bound |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            elif isinstance(node, ast.ImportFrom | ast.Import):
                bound |= {a.asname or a.name for a in node.names}
        assert attr in bound, f"{name}: {app} binds no {attr!r}"


def test_globals_python312_tracing_powertools_and_app_settings(template):
    fn = template["Globals"]["Function"]
    assert fn["Runtime"] == "python3.12"  # Amazon Linux 2023: onnxruntime loads
    assert fn["Tracing"] == "Active"
    # CoreLayer for every function, QdrantLayer too with VectorEngine qdrant
    assert fn["Layers"] == [
        {"Ref": "CoreLayer"},
        {"Fn::If": ["UseQdrant", {"Ref": "QdrantLayer"}, NO_VALUE]},
    ]
    env = fn["Environment"]["Variables"]
    assert env["POWERTOOLS_SERVICE_NAME"] == "agentic-search"
    assert env["POWERTOOLS_METRICS_NAMESPACE"]
    assert env["POWERTOOLS_LOG_LEVEL"] == {"Ref": "LogLevel"}
    assert env["QDRANT_URL"] == {"Fn::If": ["UseQdrant", {"Ref": "QdrantUrl"}, NO_VALUE]}
    assert env["VECTOR_STORE"] == {"Fn::If": ["UseEdgeS3", "edge-s3", NO_VALUE]}
    assert env["SNAPSHOT_BUCKET"] == {"Fn::If": ["UseEdgeS3", {"Ref": "SnapshotBucket"}, NO_VALUE]}
    assert template["Parameters"]["VectorEngine"]["Default"] == "edge-s3"
    assert template["Parameters"]["QdrantUrl"]["Default"] == ""
    assert env["COLLECTION_PREFIX"] == {"Ref": "CollectionPrefix"}
    assert env["MAX_ROUNDS"] == {"Ref": "MaxRounds"}
    assert env["AGENTIC_SEARCH_HOME"] == "/tmp/agentic-search"
    log_group = fn["LoggingConfig"]["LogGroup"]["Ref"]
    assert template["Resources"][log_group]["Properties"]["RetentionInDays"] == {
        "Ref": "LogRetentionDays"
    }
    params = template["Parameters"]
    assert (params["MaxRounds"]["Default"], params["MaxRounds"]["MinValue"]) == (3, 1)
    assert params["MaxRounds"]["MaxValue"] == 5
    assert params["MapMaxConcurrency"]["Default"] == 8
    assert (params["MapMaxConcurrency"]["MinValue"], params["MapMaxConcurrency"]["MaxValue"]) == (
        1,
        40,
    )


EMBEDDING_FUNCTIONS = {
    "RetrieveFunction",
    "FuseRerankFunction",
    "CatalogSyncFunction",
    "SyncRedriveFunction",
    "ReindexBatchFunction",
}


LAYER_FOLDERS = {
    "CoreLayer": "layers/core",
    "EmbedLayer": "layers/embed",
    "OpenAiLayer": "layers/openai",
    "MongoLayer": "layers/mongo",
    "McpLayer": "layers/mcp",
    "QdrantLayer": "layers/qdrant",
}


def _pinned(folder: str) -> set[str]:
    text = (REPO / folder / "requirements.txt").read_text()
    return {
        re.split(r"[\s<>=!~\[;]", line, maxsplit=1)[0].lower()
        for line in text.splitlines()
        if line.strip() and not line.startswith("#")
    }


def test_six_layers_for_python312_built_by_their_makefiles_without_boto3(resources):
    for name, folder in LAYER_FOLDERS.items():
        layer = resources[name]
        assert layer["Type"] == "AWS::Serverless::LayerVersion"
        assert layer["Properties"]["ContentUri"].rstrip("/") == folder
        assert layer["Properties"]["CompatibleRuntimes"] == ["python3.12"]
        assert layer["Metadata"]["BuildMethod"] == "makefile"
        makefile = (REPO / folder / "Makefile").read_text()
        assert f"build-{name}:" in makefile
        assert "--no-deps" in makefile  # the lock file is the whole layer
    names = _pinned("layers/core")
    assert LAYER_REQUIREMENTS == REPO / "layers/core/requirements.txt"
    assert {"pydantic", "pydantic-settings", "qdrant-edge-py", "aws-lambda-powertools"} <= names
    # the Qdrant server's client and its gRPC / HTTP stack are QdrantLayer's, not every function's
    assert not names & {"qdrant-client", "grpcio", "protobuf", "httpx", "h2"}
    assert {"qdrant-client", "grpcio", "protobuf", "httpx"} <= _pinned("layers/qdrant")
    assert "aws-xray-sdk" in names  # Powertools' tracer extra
    assert not names & {"boto3", "botocore", "python-dateutil", "six"}  # the runtime's
    assert not names & {"fastembed", "onnxruntime", "tokenizers"}  # the embed layer's
    assert not names & {"openai", "pymongo", "dnspython"}  # their own layers'
    assert "openai" in _pinned("layers/openai")
    assert {"pymongo", "dnspython"} == _pinned("layers/mongo")
    assert "mcp" in _pinned("layers/mcp") and not _pinned("layers/mcp") & names
    assert "mcp" not in names  # (only McpFunction imports the SDK)


def test_the_qdrant_layer_exists_and_is_attached_only_with_vector_engine_qdrant(template, region):
    layer = template["Resources"]["QdrantLayer"]
    assert layer["Condition"] == "UseQdrant"
    assert {"Fn::If": ["UseQdrant", {"Ref": "QdrantLayer"}, {"Ref": "AWS::NoValue"}]} in template[
        "Globals"
    ]["Function"]["Layers"]
    for engine, params in (
        ("edge-s3", {}),
        ("qdrant", {"VectorEngine": "qdrant", "QdrantUrl": "https://q.example.com:6333"}),
    ):
        resolved, _ = resolve_language_extensions(copy.deepcopy(template), params)
        [core, *rest] = resolved["Globals"]["Function"]["Layers"]
        assert core == {"Ref": "CoreLayer"}, engine
        assert rest == ([{"Ref": "QdrantLayer"}] if engine == "qdrant" else []), engine
        env = resolved["Globals"]["Function"]["Environment"]["Variables"]
        assert ("QDRANT_URL" in env) == (engine == "qdrant"), engine  # every function, or none


def test_only_the_functions_that_embed_get_the_embed_layer(resources):
    for name, props in functions_of(resources).items():
        own = props.get("Layers", [])
        assert (name in EMBEDDING_FUNCTIONS) == ({"Ref": "EmbedLayer"} in own), name
        if name in EMBEDDING_FUNCTIONS:
            assert own[0] == {"Ref": "EmbedLayer"}, name


def test_the_openai_and_mongo_layers_go_exactly_to_the_functions_given_their_secret(resources):
    for name, props in functions_of(resources).items():
        own = props.get("Layers", [])
        env = (props.get("Environment") or {}).get("Variables", {})
        assert ("OPENAI_API_KEY_SECRET_ARN" in env) == ({"Ref": "OpenAiLayer"} in own), name
        assert ("MONGODB_URI_SECRET_ARN" in env) == ({"Ref": "MongoLayer"} in own), name
    with_mongo = {
        n
        for n, p in functions_of(resources).items()
        if {"Ref": "MongoLayer"} in p.get("Layers", [])
    }
    assert with_mongo == {"RetrieveFunction", "FuseRerankFunction"}


def test_search_api_function_starts_only_this_state_machine(resources):
    props = resources["SearchApiFunction"]["Properties"]
    env = props["Environment"]["Variables"]
    assert env["STATE_MACHINE_ARN"] == {"Ref": "SearchStateMachine"}  # Ref is the ARN
    assert env["MAP_MAX_CONCURRENCY"] == {"Ref": "MapMaxConcurrency"}
    policy, caller_tags = props["Policies"]
    [statement] = policy["Statement"]
    assert [st["Sid"] for st in caller_tags["Statement"]] == ["ReadCallerTags"]
    assert statement["Effect"] == "Allow"
    assert statement["Action"] in ("states:StartSyncExecution", ["states:StartSyncExecution"])
    assert statement["Resource"] == {"Ref": "SearchStateMachine"}
    events = [
        e["Properties"]
        for e in props["Events"].values()
        if e["Type"] == "HttpApi" and e["Properties"]["ApiId"] == {"Ref": "SearchApi"}
    ]
    routes = {(e["Method"].upper(), e["Path"]) for e in events if "Path" in e}
    assert routes == {("POST", "/search"), ("GET", "/health"), ("GET", "/openapi.json")} | {
        ("GET", p) for p in ("/", "/ui/app.js", "/ui/app.css", "/domains")
    }
    # AND the $default route (no Path, no Method): what no route matches reaches the handler
    [default] = [e for e in events if "Path" not in e]
    assert "Method" not in default and default["PayloadFormatVersion"] == "2.0"


def test_mcp_function_serves_mcp_with_the_mcp_layer_and_starts_only_this_state_machine(
    resources,
):
    props = resources["McpFunction"]["Properties"]
    assert (props["CodeUri"].rstrip("/"), props["Handler"]) == ("functions/mcp_api", "app.handler")
    env = props["Environment"]["Variables"]
    assert env["STATE_MACHINE_ARN"] == {"Ref": "SearchStateMachine"}
    assert "QDRANT_API_KEY_SECRET_ARN" in env  # get_record and compare read Qdrant
    [statement] = props["Policies"][0]["Statement"]
    assert statement["Action"] in ("states:StartSyncExecution", ["states:StartSyncExecution"])
    assert statement["Resource"] == {"Ref": "SearchStateMachine"}
    [event] = props["Events"].values()
    assert event["Type"] == "HttpApi" and event["Properties"]["ApiId"] == {"Ref": "SearchApi"}
    assert (event["Properties"]["Path"], event["Properties"]["Method"]) == ("/mcp", "ANY")
    assert event["Properties"]["PayloadFormatVersion"] == "2.0"
    with_mcp = {
        n for n, p in functions_of(resources).items() if {"Ref": "McpLayer"} in p.get("Layers", [])
    }
    assert with_mcp == {"McpFunction"}
    assert props["Layers"] == [{"Ref": "McpLayer"}]


def test_only_search_api_function_takes_the_default_route(resources):
    # issue 25 finding 10: without a $default route, API Gateway answered a wrong method of a
    # known path (POST /sync/status, GET /search) with its own bare 404 before any handler;
    # the handler answers 405 with Allow (tests/aws/lambda/test_handlers_replay.py)
    defaults = [
        name
        for name, p in functions_of(resources).items()
        for e in (p.get("Events") or {}).values()
        if e["Type"] == "HttpApi" and "Path" not in e["Properties"]
    ]
    assert defaults == ["SearchApiFunction"]


# ----- template: HTTP API -------------------------------------------------------------------------


def test_http_api_auth_is_on_by_default_and_selectable(template, resources):
    mode = template["Parameters"]["AuthMode"]
    assert mode["Default"] == "IAM" and set(mode["AllowedValues"]) == {"IAM", "JWT"}
    assert template["Conditions"]["UseJwtAuth"] == {"Fn::Equals": [{"Ref": "AuthMode"}, "JWT"]}
    condition, jwt, iam = resources["SearchApi"]["Properties"]["Auth"]["Fn::If"]
    assert condition == "UseJwtAuth"
    assert iam == {"EnableIamAuthorizer": True, "DefaultAuthorizer": "AWS_IAM"}
    assert jwt["DefaultAuthorizer"] in jwt["Authorizers"]
    config = jwt["Authorizers"][jwt["DefaultAuthorizer"]]["JwtConfiguration"]
    assert config == {"issuer": {"Ref": "JwtIssuer"}, "audience": {"Ref": "JwtAudience"}}
    # The claims read as the caller's principals (issue 44) are a parameter, with the default
    # the functions' own settings have
    from agentic_search_lambda.settings import LambdaSettings

    claims = template["Parameters"]["AccessClaims"]
    assert claims["Default"].split(",") == LambdaSettings.model_fields["access_claims"].get_default(
        call_default_factory=True
    )
    tags = template["Parameters"]["AccessIamTags"]
    assert tags["Default"].split(",") == LambdaSettings.model_fields["access_iam_tags"].get_default(
        call_default_factory=True
    )
    for fn in ("SearchApiFunction", "McpFunction"):
        props = resources[fn]["Properties"]
        env = props["Environment"]["Variables"]
        assert env["ACCESS_CLAIMS"] == {"Ref": "AccessClaims"}, fn
        assert env["ACCESS_IAM_TAGS"] == {"Ref": "AccessIamTags"}, fn
        # the tags are read in this account only, and nothing else of IAM
        statements = [
            st for pol in props["Policies"] if isinstance(pol, dict)
            for st in pol.get("Statement", []) if st.get("Sid") == "ReadCallerTags"
        ]  # fmt: skip
        assert len(statements) == 1, fn
        assert sorted(statements[0]["Action"]) == ["iam:ListRoleTags", "iam:ListUserTags"]
        assert all("${AWS::AccountId}" in r["Fn::Sub"] for r in statements[0]["Resource"])
    # No event opts out of the default authorizer.
    for event in resources["SearchApiFunction"]["Properties"]["Events"].values():
        assert "Auth" not in event["Properties"]


#: The $default route as the SAM transform writes it into the HTTP API's OpenAPI body.
DEFAULT_ROUTE = "X-AMAZON-APIGATEWAY-ANY-METHOD /$default"
#: McpFunction's route: any method (POST the exchanges; the handler answers another 405).
MCP_ROUTE = "X-AMAZON-APIGATEWAY-ANY-METHOD /mcp"


def _api_routes(deployed: dict[str, Any]) -> dict[str, Any]:
    body = deployed["Resources"]["SearchApi"]["Properties"]["Body"]
    return {f"{m.upper()} {p}": op for p, ops in body["paths"].items() for m, op in ops.items()}


def test_deployed_routes_require_iam_by_default_and_jwt_when_chosen(
    deployed_default, deployed_all_set
):
    # GIVEN the SAM transform with the defaults, THEN every route is SigV4 (IAM) authorised.
    routes = _api_routes(deployed_default)
    assert set(routes) == {"POST /search", "GET /health", "GET /openapi.json"} | SYNC_ROUTES | {
        "GET /",
        "GET /ui/app.js",
        "GET /ui/app.css",
        "GET /domains",
        DEFAULT_ROUTE,
        MCP_ROUTE,
    }
    mcp = routes[MCP_ROUTE]["x-amazon-apigateway-integration"]["uri"]["Fn::Sub"]
    assert "${McpFunction.Arn}" in mcp
    # the $default route: any method, SearchApiFunction's handler (405 with Allow, or 404)
    default = routes[DEFAULT_ROUTE]
    assert default["isDefaultRoute"] is True
    uri = default["x-amazon-apigateway-integration"]["uri"]["Fn::Sub"]
    assert "${SearchApiFunction.Arn}" in uri
    for key, op in routes.items():
        assert op["security"] == [{"AWS_IAM": []}], key
    # GIVEN AuthMode JWT, THEN every route uses the JWT authorizer on the configured issuer.
    body = deployed_all_set["Resources"]["SearchApi"]["Properties"]["Body"]
    for key, op in _api_routes(deployed_all_set).items():
        assert op["security"] == [{"JwtAuthorizer": []}], key
    authorizer = body["components"]["securitySchemes"]["JwtAuthorizer"]
    assert authorizer["x-amazon-apigateway-authorizer"]["type"] == "jwt"
    assert authorizer["x-amazon-apigateway-authorizer"]["jwtConfiguration"] == {
        "issuer": {"Ref": "JwtIssuer"},
        "audience": {"Ref": "JwtAudience"},
    }


def test_jwt_mode_cannot_be_deployed_without_issuer_and_audience(template):
    rule = template["Rules"]["JwtNeedsIssuerAndAudience"]
    assert rule["RuleCondition"] == {"Fn::Equals": [{"Ref": "AuthMode"}, "JWT"]}
    asserted = json.dumps(rule["Assertions"])
    assert "JwtIssuer" in asserted and "JwtAudience" in asserted


def test_http_api_cors_throttling_and_access_logs_are_explicit(
    template, resources, deployed_default
):
    props = resources["SearchApi"]["Properties"]
    assert props["FailOnWarnings"] is True
    cors = props["CorsConfiguration"]
    assert set(cors["AllowMethods"]) == {"GET", "POST", "OPTIONS"}
    assert "*" not in cors["AllowHeaders"]
    assert cors["AllowOrigins"] == {"Ref": "CorsAllowOrigins"}
    origins = template["Parameters"]["CorsAllowOrigins"]
    assert origins["Type"] == "CommaDelimitedList"  # AllowedPattern applies to each origin
    for origin in origins["Default"].split(","):
        assert re.fullmatch(origins["AllowedPattern"], origin)
    for bad in ("*", "https://*.example.com", "null"):
        assert not re.fullmatch(origins["AllowedPattern"], bad), bad
    deployed_cors = deployed_default["Resources"]["SearchApi"]["Properties"]["Body"][
        "x-amazon-apigateway-cors"
    ]
    assert deployed_cors["allowOrigins"] == ["https://localhost:3000"]
    assert set(deployed_cors["allowMethods"]) == {"GET", "POST", "OPTIONS"}
    throttle = props["DefaultRouteSettings"]
    assert throttle["ThrottlingBurstLimit"] == {"Ref": "ApiThrottleBurstLimit"}
    assert throttle["ThrottlingRateLimit"] == {"Ref": "ApiThrottleRateLimit"}
    logs = props["AccessLogSettings"]
    group = logs["DestinationArn"]["Fn::GetAtt"][0]
    assert resources[group]["Type"] == "AWS::Logs::LogGroup"
    assert resources[group]["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}
    fields = json.loads(logs["Format"])
    assert {"requestId", "status", "routeKey", "integrationError"} <= set(fields)
    stage = next(
        r["Properties"]
        for r in deployed_default["Resources"].values()
        if r["Type"] == "AWS::ApiGatewayV2::Stage"
    )
    assert stage["DefaultRouteSettings"] == throttle and stage["AccessLogSettings"] == logs


# ----- template: data, secrets, IAM ---------------------------------------------------------------


def test_plan_cache_table_expires_items_and_has_point_in_time_recovery(resources):
    table = resources["PlanCacheTable"]
    props = table["Properties"]
    assert table["Type"] == "AWS::DynamoDB::Table"
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert props["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
    assert props["AttributeDefinitions"] == [{"AttributeName": "pk", "AttributeType": "S"}]
    assert props["TimeToLiveSpecification"] == {"AttributeName": "expiresAt", "Enabled": True}
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert props["SSESpecification"]["SSEEnabled"] is True
    functions = functions_of(resources)
    table_ref = {"TableName": {"Ref": "PlanCacheTable"}}
    assert functions["CacheCheckFunction"]["Policies"] == [{"DynamoDBReadPolicy": table_ref}]
    assert functions["CacheStoreFunction"]["Policies"] in (
        [{"DynamoDBWritePolicy": table_ref}],
        [{"DynamoDBCrudPolicy": table_ref}],
    )
    # ExtractIntent reads the plan cache, PlanQuery writes it (the LLM path's intent + plan)
    assert {"DynamoDBReadPolicy": table_ref} in functions["ExtractIntentFunction"]["Policies"]
    assert {"DynamoDBWritePolicy": table_ref} in functions["PlanQueryFunction"]["Policies"]
    users = {n for n, p in functions.items() if "CACHE_TABLE" in json.dumps(p)}
    # the sync writers bump the catalog version kept in the same table
    sync_writers = SYNC_FUNCTIONS - {"SyncApiFunction"}
    assert (
        users
        == {
            "CacheCheckFunction",
            "CacheStoreFunction",
            "ExtractIntentFunction",
            "PlanQueryFunction",
        }
        | sync_writers
    )
    for name in users:
        assert functions[name]["Environment"]["Variables"]["CACHE_TABLE"] == {
            "Ref": "PlanCacheTable"
        }


def test_secrets_reach_functions_as_arns_with_read_access_to_exactly_that_secret(
    template, resources
):
    params, conditions = template["Parameters"], template["Conditions"]
    for name, (condition, env_name) in SECRET_PARAMETERS.items():
        assert params[name]["Default"] == ""
        assert re.fullmatch(params[name]["AllowedPattern"], FAKE_SECRET.format("x"))
        assert not re.fullmatch(params[name]["AllowedPattern"], "sk-plain-secret-value")
        assert conditions[condition] == {"Fn::Not": [{"Fn::Equals": [{"Ref": name}, ""]}]}
        users = 0
        for function, props in functions_of(resources).items():
            env = props.get("Environment", {}).get("Variables", {})
            policies = [
                p
                for p in props.get("Policies", [])
                if "AWSSecretsManagerGetSecretValuePolicy" in json.dumps(p)
            ]
            expected_policy = {
                "Fn::If": [
                    condition,
                    {"AWSSecretsManagerGetSecretValuePolicy": {"SecretArn": {"Ref": name}}},
                    NO_VALUE,
                ]
            }
            if env_name in env:
                users += 1
                assert env[env_name] == {"Fn::If": [condition, {"Ref": name}, NO_VALUE]}, function
                assert expected_policy in policies, f"{function} reads {env_name} without access"
            else:
                assert expected_policy not in policies, f"{function} may read {name} needlessly"
        assert users, name
    # Every secrets policy of every function is one of those above.
    for function, props in functions_of(resources).items():
        for p in props.get("Policies", []):
            if "secretsmanager" in json.dumps(p).lower() or "SecretsManager" in json.dumps(p):
                cond, body, _ = p["Fn::If"]
                ref = body["AWSSecretsManagerGetSecretValuePolicy"]["SecretArn"]["Ref"]
                assert SECRET_PARAMETERS[ref][0] == cond, function


SECRET_VALUE_PATTERNS = [
    re.compile(r"AKIA[0-9A-Z]{16}"),  # AWS access key id
    re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"),  # OpenAI-style key
    re.compile(r"mongodb(\+srv)?://[^/\s:@]+:[^@\s]+@"),  # URI with a password
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),  # JWT
    re.compile(r"^(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9+/_=-]{32,}$"),  # long random token
]
SECRET_NAME = re.compile(r"(KEY|SECRET|PASSWORD|TOKEN|CREDENTIAL|MONGODB_URI)", re.I)


def _literals(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _literals(value)
    elif isinstance(node, list):
        for value in node:
            yield from _literals(value)


def test_no_environment_variable_or_parameter_carries_a_secret(template, resources):
    envs = {"Globals": template["Globals"]["Function"]["Environment"]["Variables"]}
    for name, props in functions_of(resources).items():
        envs[name] = props.get("Environment", {}).get("Variables", {})
    for owner, env in envs.items():
        for var, value in env.items():
            for literal in _literals(value):
                for pattern in SECRET_VALUE_PATTERNS:
                    assert not pattern.search(literal), f"{owner}.{var} looks like a secret"
            if SECRET_NAME.search(var):
                # a secret-ish setting is only ever the ARN of a Secrets Manager secret
                assert var.endswith("_SECRET_ARN"), f"{owner}.{var}"
                refs = re.findall(r'"Ref": "(\w+)"', json.dumps(value))
                assert refs and all(r.endswith("SecretArn") for r in refs), f"{owner}.{var}"
    for name, spec in template["Parameters"].items():
        if re.search(r"(?i)(key|password|token|secret|credential|uri)$", name):
            pytest.fail(f"parameter {name} would carry a secret value; pass a *SecretArn")
        assert "NoEcho" not in spec, name  # nothing to hide: no parameter is a secret
    for literal in _literals(template):
        for pattern in SECRET_VALUE_PATTERNS[:5]:
            assert not pattern.search(literal), literal


@pytest.mark.parametrize("deployment", ["deployed_default", "deployed_all_set"])
def test_iam_is_least_privilege_in_the_deployed_roles(deployment, request):
    # GIVEN the roles the SAM transform creates (policy templates expanded),
    # THEN no statement allows every action, and "*" resources appear only for actions AWS offers
    # no resource-level permission for; managed policies are only the two SAM attaches.
    deployed = request.getfixturevalue(deployment)
    stmts = list(statements(deployed))
    assert stmts
    for where, statement in stmts:
        assert statement["Effect"] == "Allow", where
        assert "NotAction" not in statement and "NotResource" not in statement, where
        actions = as_list(statement["Action"])
        for action in actions:
            assert action != "*" and not action.endswith(":*"), f"{where}: {action}"
        resources = as_list(statement["Resource"])
        if "*" in resources:
            assert set(actions) <= RESOURCE_STAR_ACTIONS, f"{where}: {actions} on *"
    roles = {n: r for n, r in deployed["Resources"].items() if r["Type"] == "AWS::IAM::Role"}
    for name, role in roles.items():
        managed = set(role["Properties"].get("ManagedPolicyArns", []))
        assert managed <= ALLOWED_MANAGED_POLICIES, f"{name}: {managed}"
    secret_reads = [s for _, s in stmts if "secretsmanager:GetSecretValue" in as_list(s["Action"])]
    # one per (function, secret ARN variable) pair when the secrets are given; none when unset
    pairs = sum(
        var.endswith("_SECRET_ARN")
        for r in deployed["Resources"].values()
        if r["Type"] == "AWS::Lambda::Function"
        for var in r["Properties"].get("Environment", {}).get("Variables", {})
    )
    assert len(secret_reads) == pairs
    if deployment == "deployed_default":
        assert pairs == 0
    else:
        assert pairs >= len(SECRET_PARAMETERS)
    for statement in secret_reads:
        assert set(as_list(statement["Action"])) == {"secretsmanager:GetSecretValue"}
        [resource] = as_list(statement["Resource"])
        assert resource["Fn::Sub"][1]["secretArn"]["Ref"] in SECRET_PARAMETERS


def test_every_function_role_gets_only_its_own_grants(deployed_all_set):
    resources = deployed_all_set["Resources"]
    invoked = set()
    for where, statement in statements(deployed_all_set):
        role = where.split("/")[0]
        actions = set(as_list(statement["Action"]))
        if role in SYNC_ROLES:
            continue  # tests/sync/test_sync_template.py
        if role == "SearchStateMachineRole":
            if actions == {"lambda:InvokeFunction"}:
                [resource] = as_list(statement["Resource"])
                invoked.add(resource["Fn::Sub"][1]["functionName"]["Ref"])
            else:
                assert actions <= RESOURCE_STAR_ACTIONS, actions
        elif any(a.startswith("states:") for a in actions):
            assert role in {"SearchApiFunctionRole", "McpFunctionRole"}, role
            assert statement["Resource"] == {"Ref": "SearchStateMachine"}
        elif actions == {"iam:ListRoleTags", "iam:ListUserTags"}:
            assert role in {"SearchApiFunctionRole", "McpFunctionRole"}, role
            for resource in as_list(statement["Resource"]):
                assert resource["Fn::Sub"].endswith((":role/*", ":user/*")), resource
        elif any(a.startswith("dynamodb:") for a in actions):
            assert role in {
                "CacheCheckFunctionRole",
                "CacheStoreFunctionRole",
                "ExtractIntentFunctionRole",
                "PlanQueryFunctionRole",
            }, role
            for resource in as_list(statement["Resource"]):
                assert resource["Fn::Sub"][1]["tableName"] == {"Ref": "PlanCacheTable"}
            if role in ("CacheCheckFunctionRole", "ExtractIntentFunctionRole"):
                assert not {a for a in actions if re.search(r"Put|Update|Delete|Write", a)}
        else:
            assert actions == {"secretsmanager:GetSecretValue"}, (role, actions)
    step_functions = (
        {n for n, r in resources.items() if r["Type"] == "AWS::Lambda::Function"}
        - API_FUNCTIONS
        - SYNC_FUNCTIONS
    )
    assert invoked == step_functions


def test_iam_review_findings(deployed_all_set, template, resources):
    """The IAM and secrets review as figures (``IAM_OUT=path`` writes them as JSON): per role,
    its statements' actions and resources; the wildcard findings and why each is allowed."""
    roles: dict[str, list[dict[str, Any]]] = {}
    star_actions: set[str] = set()
    for where, statement in statements(deployed_all_set):
        role = where.split("/")[0]
        actions = sorted(as_list(statement["Action"]))
        res = as_list(statement["Resource"])
        roles.setdefault(role, []).append({"actions": actions, "resources": json.dumps(res)})
        if "*" in res:
            star_actions |= set(actions)
    wildcard_actions = [
        a
        for stmts in roles.values()
        for st in stmts
        for a in st["actions"]
        if a == "*" or a.endswith(":*")
    ]
    findings = {
        "roles": len(roles),
        "statements": sum(len(v) for v in roles.values()),
        "wildcard_actions": wildcard_actions,
        "resource_star_actions": sorted(star_actions),
        "resource_star_justification": "account-level log-delivery APIs (no resource ARN)",
        "managed_policies": sorted(ALLOWED_MANAGED_POLICIES),
        "secrets": "ARNs only, read at cold start through Powertools parameters",
        "auth_default": template["Parameters"]["AuthMode"]["Default"],
        "cors_origins_default": template["Parameters"]["CorsAllowOrigins"]["Default"],
        "throttle_default": {
            "burst": template["Parameters"]["ApiThrottleBurstLimit"]["Default"],
            "rate": template["Parameters"]["ApiThrottleRateLimit"]["Default"],
        },
        "per_role": roles,
    }
    out = os.environ.get("IAM_OUT")
    if out:
        Path(out).write_text(json.dumps(findings, indent=2) + "\n")
    assert wildcard_actions == []
    assert star_actions <= RESOURCE_STAR_ACTIONS
    assert findings["auth_default"] in {"IAM", "JWT"}
    assert "*" not in str(findings["cors_origins_default"]).split(",")


# ----- template: alarms, outputs, lint ------------------------------------------------------------


def test_alarms_watch_api_5xx_state_machine_failures_and_throttles(resources):
    alarms = {
        (p["Namespace"], p["MetricName"], json.dumps(p["Dimensions"], sort_keys=True))
        for r in resources.values()
        if r["Type"] == "AWS::CloudWatch::Alarm"
        for p in [r["Properties"]]
    }

    def dims(name: str, ref: str) -> str:
        return json.dumps([{"Name": name, "Value": {"Ref": ref}}], sort_keys=True)

    expected = {
        ("AWS/ApiGateway", "5xx", dims("ApiId", "SearchApi")),
        ("AWS/States", "ExecutionsFailed", dims("StateMachineArn", "SearchStateMachine")),
        ("AWS/States", "ExecutionsTimedOut", dims("StateMachineArn", "SearchStateMachine")),
        ("AWS/States", "ExecutionThrottled", dims("StateMachineArn", "SearchStateMachine")),
        ("AWS/Lambda", "Errors", dims("FunctionName", "SearchApiFunction")),
        ("AWS/Lambda", "Throttles", dims("FunctionName", "SearchApiFunction")),
    }
    assert expected <= alarms
    for name, r in resources.items():
        if r["Type"] == "AWS::CloudWatch::Alarm":
            assert r["Properties"]["AlarmActions"] == [{"Ref": "AlarmTopic"}], name
            assert r["Properties"]["TreatMissingData"] == "notBreaching", name
    assert resources["AlarmTopic"]["Type"] == "AWS::SNS::Topic"


def test_outputs_give_the_api_url_state_machine_and_table(template):
    outputs = template["Outputs"]
    assert "${SearchApi}.execute-api" in outputs["SearchApiUrl"]["Value"]["Fn::Sub"]
    assert outputs["SearchStateMachineArn"]["Value"] == {"Ref": "SearchStateMachine"}
    assert outputs["PlanCacheTableName"]["Value"] == {"Ref": "PlanCacheTable"}


def test_cfn_lint_reports_nothing(region):
    matches = lint_file(TEMPLATE, {"regions": [REGION]})
    assert [str(m) for m in matches] == []


def test_an_empty_embedding_model_deploys_the_local_minilm(deployed_default, deployed_all_set):
    # GIVEN no EmbeddingModel, THEN no function gets EMBEDDING_MODEL (the embed layer's MiniLM,
    # the CLI's default); given one, every function gets it (the OpenAI-compatible API)
    def envs(deployed):
        return {
            n: r["Properties"].get("Environment", {}).get("Variables", {})
            for n, r in deployed["Resources"].items()
            if r["Type"] == "AWS::Lambda::Function"
        }

    assert envs(deployed_default)
    assert all("EMBEDDING_MODEL" not in env for env in envs(deployed_default).values())
    assert all(
        env["EMBEDDING_MODEL"] == {"Ref": "EmbeddingModel"}
        for env in envs(deployed_all_set).values()
    )
