"""SearchApiFunction over Step Functions, and the cold-start secrets, with AWS mocked at its edge.

moto does not implement ``StartSyncExecution``, so the Step Functions client is a real boto3
client whose responses come from ``botocore.stub.Stubber`` (the request is still validated
against the service model). Secrets Manager is moto's (``mock_aws``), read through Powertools
``parameters`` as in a deployed function.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3
import pytest
from aws_lambda_powertools.utilities import parameters
from aws_lambda_powertools.utilities.parameters.exceptions import GetParameterError
from botocore.stub import ANY, Stubber
from moto import mock_aws
from support.aws import fake_credentials
from support.lambdas import load_event, load_function, use_runtime

from agentic_search.config import Settings
from agentic_search.wire import SearchRequest, SearchState
from agentic_search_cli.local_server import LocalContext
from agentic_search_lambda import runtime
from agentic_search_lambda.orchestrators import StepFunctionsOrchestrator
from agentic_search_lambda.settings import LambdaSettings

REGION = "us-east-1"
ACCOUNT = "123456789012"
STATE_MACHINE = f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:SearchStateMachine"
REQUEST_ID = load_event("search_api/post_search.json")["requestContext"]["requestId"]
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


@pytest.fixture()
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials and a region: nothing can reach a real AWS account."""
    fake_credentials(monkeypatch)


@pytest.fixture()
def sfn(aws_env) -> Iterator[tuple[Stubber, list[dict[str, Any]]]]:
    """The API wired to a StepFunctionsOrchestrator whose client is stubbed; yields the stubber
    and the StartSyncExecution requests as sent (after botocore built them)."""
    client = boto3.client("stepfunctions", region_name=REGION)
    sent: list[dict[str, Any]] = []
    client.meta.events.register(
        "provide-client-params.sfn.StartSyncExecution",
        lambda params, **_: sent.append(dict(params)),
    )
    stubber = Stubber(client)
    orchestrator = StepFunctionsOrchestrator(STATE_MACHINE, client, concurrency=6)
    rt = runtime.Runtime(Settings(), LambdaSettings(), orchestrator=orchestrator)
    with use_runtime(rt), stubber:
        yield stubber, sent
        stubber.assert_no_pending_responses()


def execution(status: str, **extra: Any) -> dict[str, Any]:
    """A StartSyncExecution response (HTTP 200 from Step Functions, whatever the status)."""
    return {
        "executionArn": f"arn:aws:states:{REGION}:{ACCOUNT}:express:SearchStateMachine:"
        f"{REQUEST_ID}:0a1b2c3d",
        "stateMachineArn": STATE_MACHINE,
        "name": REQUEST_ID,
        "startDate": T0,
        "stopDate": T0 + dt.timedelta(seconds=2),
        "status": status,
        **extra,
    }


def expect_start(stubber: Stubber, response: dict[str, Any]) -> None:
    stubber.add_response(
        "start_sync_execution",
        response,
        {"stateMachineArn": STATE_MACHINE, "name": REQUEST_ID, "input": ANY},
    )


def authorized_search(name: str) -> dict[str, Any]:
    """The recorded API Gateway event ``search_api/<name>`` (a verified caller's POST
    /search), its body aimed at the tools domain and named by the request id
    :func:`expect_start` checks."""
    event = load_event(f"search_api/{name}")
    event["body"] = json.dumps({**json.loads(event["body"]), "domain": "tools"})
    event["headers"]["content-length"] = str(len(event["body"]))
    event["requestContext"]["requestId"] = REQUEST_ID
    return event


def post_search() -> dict[str, Any]:
    """events/search_api/post_search.json through the deployed handler module."""
    handler = load_function("search_api").handler
    return handler(
        load_event("search_api/post_search.json"),
        LocalContext(aws_request_id="lambda-req-1"),
    )


# ----- StartSyncExecution -------------------------------------------------------------------------


def test_a_succeeded_execution_is_200_with_its_output_and_the_input_is_the_search_state(sfn):
    stubber, sent = sfn
    # GIVEN the state machine answers
    answer = {"query": "free code editor", "candidates": [{"id": "vs-code"}], "errors": []}
    expect_start(stubber, execution("SUCCEEDED", output=json.dumps(answer)))
    # WHEN POST /search arrives
    out = post_search()
    # THEN the response is the execution's output
    assert out["statusCode"] == 200
    assert json.loads(out["body"]) == answer
    # AND the execution was started once, named by the API request id, with a fresh SearchState
    assert len(sent) == 1
    state = json.loads(sent[0]["input"])
    assert set(state) - {"stageMs", "texts"} == {"request", "correlationId", "config", "caller"}
    assert state["caller"] == {"principals": []}  # no authorizer: anonymous
    assert not state.get("stageMs")
    assert state["request"] == {"query": "free code editor", "limit": 5, "domain": "tools"}
    assert state["correlationId"] == REQUEST_ID
    assert state["config"] == {"mapMaxConcurrency": 6}
    parsed = SearchState.model_validate(state)
    assert parsed.cache is None and parsed.executor is None and parsed.response is None


def test_the_execution_runs_as_the_jwt_callers_principals(sfn):
    stubber, sent = sfn
    expect_start(stubber, execution("SUCCEEDED", output=json.dumps({"candidates": []})))
    event = authorized_search("post_search_jwt_groups.json")
    out = load_function("search_api").handler(event, LocalContext(aws_request_id=REQUEST_ID))
    assert out["statusCode"] == 200, out["body"]
    # the claims named by ACCESS_CLAIMS (sub, groups, tenant), the array claim split
    assert json.loads(sent[0]["input"])["caller"] == {"principals": ["eng", "ops", "u-alice"]}


def test_the_execution_runs_as_the_iam_callers_role_and_its_tags(sfn):
    # GIVEN a SigV4-signed request (AuthMode=IAM) from a session of a role tagged with groups
    stubber, sent = sfn
    expect_start(stubber, execution("SUCCEEDED", output=json.dumps({"candidates": []})))
    event = authorized_search("post_search_iam_role.json")
    with mock_aws():
        iam = boto3.client("iam")
        iam.create_role(
            RoleName="search-readers",
            AssumeRolePolicyDocument='{"Version":"2012-10-17","Statement":[]}',
            Tags=[{"Key": "groups", "Value": "eng ops"}, {"Key": "owner", "Value": "x"}],
        )
        out = load_function("search_api").handler(event, LocalContext(aws_request_id=REQUEST_ID))
    assert out["statusCode"] == 200, out["body"]
    # THEN the execution runs as the role (not the session) and the ACCESS_IAM_TAGS values
    role = f"arn:aws:iam::{ACCOUNT}:role/search-readers"
    assert json.loads(sent[0]["input"])["caller"] == {"principals": sorted([role, "eng", "ops"])}


def test_a_failed_execution_is_502_naming_the_error(sfn):
    stubber, _ = sfn
    # GIVEN the execution ended in the SearchFailed state (still HTTP 200 from Step Functions)
    cause = "ValueError: this step needs the executor state (run PlanQuery first)"
    expect_start(stubber, execution("FAILED", error="SearchFailed", cause=cause))
    # WHEN POST /search arrives
    out = post_search()
    # THEN a 502 names the error and its cause
    assert out["statusCode"] == 502
    body = json.loads(out["body"])
    assert body["error"] == "SearchFailed"
    assert "run PlanQuery first" in body["message"]


def test_a_failed_execution_without_an_error_name_is_still_a_named_502(sfn):
    stubber, _ = sfn
    expect_start(stubber, execution("FAILED"))
    out = post_search()
    assert out["statusCode"] == 502
    assert json.loads(out["body"])["error"] == "ExecutionFailed"


def test_an_emulator_on_aws_endpoint_url_is_reached_without_the_sync_host_prefix(
    aws_env, monkeypatch
):
    # issue 31 section 2: botocore prefixed StartSyncExecution's host with "sync-", so an
    # emulator on http://127.0.0.1:PORT was called at sync-127.0.0.1 (no such host)
    answer = {"query": "free code editor", "candidates": [{"id": "vs-code"}], "errors": []}
    seen: list[tuple[str, str]] = []

    class Emulator(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            seen.append((self.headers["host"], self.headers["x-amz-target"]))
            data = json.dumps(
                {
                    "executionArn": f"{STATE_MACHINE}:run",
                    "startDate": 1767225600,
                    "stopDate": 1767225602,
                    "status": "SUCCEEDED",
                    "output": json.dumps(answer),
                }
            ).encode()
            self.send_response(200)
            self.send_header("content-type", "application/x-amz-json-1.0")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Emulator)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        orchestrator = StepFunctionsOrchestrator(STATE_MACHINE)  # the client of a cold start
        out = orchestrator.search(SearchRequest(query="free code editor"), REQUEST_ID)
    finally:
        server.shutdown()
        server.server_close()
    assert out == answer
    assert seen == [(endpoint.removeprefix("http://"), "AWSStepFunctions.StartSyncExecution")]


def test_a_timed_out_execution_is_504(sfn):
    stubber, _ = sfn
    # GIVEN the express execution ran past its timeout
    expect_start(stubber, execution("TIMED_OUT"))
    # WHEN POST /search arrives
    out = post_search()
    # THEN a 504 says so
    assert out["statusCode"] == 504
    body = json.loads(out["body"])
    assert body["error"] == "ExecutionTimedOut"
    assert "TIMED_OUT" in body["message"]


def test_an_invalid_request_never_starts_an_execution(sfn):
    _, sent = sfn
    out = load_function("search_api").handler(
        load_event("search_api/post_search_invalid_limit.json"), LocalContext()
    )
    assert out["statusCode"] == 422
    assert sent == []  # and the stubber has no response queued: a call would have raised


# ----- secrets at cold start ----------------------------------------------------------------------


SECRET_ARN_VARS = (
    "QDRANT_API_KEY_SECRET_ARN",
    "MONGODB_URI_SECRET_ARN",
    "OPENAI_API_KEY_SECRET_ARN",
)


@pytest.fixture()
def fresh_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A container's settings read anew, without any secret ARN from the outer environment."""
    for var in SECRET_ARN_VARS:
        monkeypatch.delenv(var, raising=False)
    parameters.clear_caches()
    yield
    parameters.clear_caches()


def test_a_secret_arn_in_the_environment_puts_the_secret_in_the_settings(
    aws_env, fresh_settings, monkeypatch
):
    with mock_aws():
        sm = boto3.client("secretsmanager", region_name=REGION)
        qdrant = sm.create_secret(Name="search/qdrant-api-key", SecretString="qd-s3cr3t")["ARN"]
        mongo = sm.create_secret(Name="search/mongodb-uri", SecretString="mongodb://u:p@h/db")
        # GIVEN the template passed the secrets' ARNs (never their values)
        monkeypatch.setenv("QDRANT_API_KEY_SECRET_ARN", qdrant)
        monkeypatch.setenv("MONGODB_URI_SECRET_ARN", mongo["ARN"])
        # WHEN the function's settings are read at cold start
        settings = runtime.Runtime().settings
    # THEN they hold the secret values, and the value is nowhere in the environment
    assert settings.qdrant_api_key is not None
    assert settings.qdrant_api_key.get_secret_value() == "qd-s3cr3t"
    assert settings.mongodb_uri is not None
    assert settings.mongodb_uri.get_secret_value() == "mongodb://u:p@h/db"
    assert settings.openai_api_key is None
    assert "qd-s3cr3t" not in repr(settings)


def test_without_secret_arns_nothing_is_fetched(fresh_settings, monkeypatch, tmp_path):
    # GIVEN no AWS at all (no credentials, no region, no config) and an empty ARN variable
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("OPENAI_API_KEY_SECRET_ARN", "")
    # WHEN the secrets are resolved and the settings read
    overrides = runtime.resolve_secrets(LambdaSettings())
    settings = runtime.Runtime().settings
    # THEN nothing was asked of Secrets Manager (it could not have answered) and no secret is set
    assert overrides == {}
    assert settings.qdrant_api_key is None and settings.openai_api_key is None


def test_a_secret_that_cannot_be_read_fails_the_cold_start_loudly(aws_env, fresh_settings):
    with mock_aws():
        arn = f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:search/missing-AbCdEf"
        with pytest.raises(GetParameterError):
            runtime.resolve_secrets(LambdaSettings(qdrant_api_key_secret_arn=arn))
