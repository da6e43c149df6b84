"""`make seed`, `make smoke` and `make delete` (scripts/stack.py) against moto's server mode on
loopback: a CloudFormation stack in moto with the template's catalog table, export bucket and
reindex state machine and its output names, and a loopback HTTP API that checks each request's
SigV4 signature (IAM auth, service execute-api) and answers through the deployed API handler
over the session's index (the answer a deployed stack seeded with the bundled catalog gives)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from moto.server import ThreadedMotoServer
from support.lambdas import runtime_over, use_runtime
from support.paths import REPO, SCRIPTS

from agentic_search.pipeline.runner import LocalRunner
from agentic_search_cli.local_server import LocalContext, http_api_event
from agentic_search_lambda import api
from agentic_search_lambda.orchestrators import LocalOrchestrator

REGION = "us-east-1"
KEY, SECRET = "AKIDSTACKTEST", "stack-test-secret"
STACK = "agentic-search-test"
OUTPUTS_USED = {
    "CatalogTableName",
    "CatalogExportBucketName",
    "SnapshotBucketName",
    "ReindexStateMachineArn",
    "SearchApiUrl",
}


def signature_ok(method: str, url: str, headers: dict[str, str], body: bytes) -> bool:
    """Whether ``headers['authorization']`` is the SigV4 signature (execute-api, REGION) of
    this request under the test's credentials."""
    auth = headers.get("authorization", "")
    amz_date = headers.get("x-amz-date", "")
    if not auth.startswith("AWS4-HMAC-SHA256 ") or not amz_date:
        return False
    signed = auth.split("SignedHeaders=")[1].split(",")[0].split(";")
    request = AWSRequest(
        method=method,
        url=url,
        data=body,
        headers={h: headers[h] for h in signed if h in headers and h != "host"},
    )
    request.context["timestamp"] = amz_date
    signer = SigV4Auth(Credentials(KEY, SECRET), "execute-api", REGION)
    canonical = signer.canonical_request(request)
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    return auth.endswith(f"Signature={expected}")


def api_server(engine: Any) -> tuple[ThreadingHTTPServer, str]:
    """A loopback HTTP API: 403 unless SigV4-signed with the test's key, else the API handler."""
    lock = threading.Lock()

    class Api(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            url = f"http://{headers['host']}{self.path}"
            if not signature_ok("POST", url, headers, body):
                status, out = 403, {"message": "Forbidden"}
            else:
                with lock:  # one search at a time over the local Qdrant client
                    status, out = self.search(body)
            data = json.dumps(out).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def search(self, body: bytes) -> tuple[int, Any]:
            runner = LocalRunner(lambda _: engine.deps)
            try:
                with use_runtime(runtime_over(engine, orchestrator=LocalOrchestrator(runner))):
                    event = http_api_event(
                        "POST", self.path, {"content-type": "application/json"}, body
                    )
                    result = api.handler(event, LocalContext(aws_request_id="smoke"))
            finally:
                runner.close()
            return result["statusCode"], json.loads(result["body"])

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def fake_stack_template(api_url: str) -> dict[str, Any]:
    """The template's resources the scripts touch, under the template's output names."""
    definition = {"StartAt": "Done", "States": {"Done": {"Type": "Pass", "End": True}}}
    return {
        "Resources": {
            "CatalogTable": {
                "Type": "AWS::DynamoDB::Table",
                "Properties": {
                    "BillingMode": "PAY_PER_REQUEST",
                    "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
                    "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
                    "StreamSpecification": {"StreamViewType": "NEW_AND_OLD_IMAGES"},
                },
            },
            "CatalogExportBucket": {
                "Type": "AWS::S3::Bucket",
            },
            "SnapshotBucket": {
                "Type": "AWS::S3::Bucket",
            },
            "ReindexStateMachine": {
                "Type": "AWS::StepFunctions::StateMachine",
                "Properties": {
                    "RoleArn": "arn:aws:iam::123456789012:role/reindex",
                    "DefinitionString": json.dumps(definition),
                },
            },
        },
        "Outputs": {
            "CatalogTableName": {"Value": {"Ref": "CatalogTable"}},
            "CatalogExportBucketName": {"Value": {"Ref": "CatalogExportBucket"}},
            "SnapshotBucketName": {"Value": {"Ref": "SnapshotBucket"}},
            "ReindexStateMachineArn": {"Value": {"Ref": "ReindexStateMachine"}},
            "SearchApiUrl": {"Value": api_url},
        },
    }


@pytest.fixture(scope="module")
def aws_env() -> Iterator[dict[str, str]]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {
        "AWS_ENDPOINT_URL": f"http://{host}:{port}",
        "AWS_ACCESS_KEY_ID": KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
    }
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        mp.delenv("AWS_PROFILE", raising=False)
        mp.delenv("AWS_SESSION_TOKEN", raising=False)
        yield env
    server.stop()


@pytest.fixture(scope="module")
def stack(aws_env, tools_engine) -> Iterator[dict[str, str]]:
    server, url = api_server(tools_engine)
    cfn = boto3.client("cloudformation")
    cfn.create_stack(StackName=STACK, TemplateBody=json.dumps(fake_stack_template(url)))
    [described] = cfn.describe_stacks(StackName=STACK)["Stacks"]
    yield {o["OutputKey"]: o["OutputValue"] for o in described["Outputs"]}
    server.shutdown()
    server.server_close()


def run(
    *args: str, env: dict[str, str] | None = None, unset: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """``scripts/stack.py ARGS`` as the Makefile runs it, in a fresh process (with ``env`` set
    and the variables ``unset`` removed)."""
    environ = {k: v for k, v in {**os.environ, **(env or {})}.items() if k not in unset}
    return subprocess.run(
        [sys.executable, str(SCRIPTS / "stack.py"), *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=300,
        check=False,
    )


def test_the_scripts_read_outputs_the_template_declares_and_make_runs_them():
    template = yaml.load((REPO / "template.yaml").read_text(), Loader=yaml.BaseLoader)
    assert set(template["Outputs"]) >= OUTPUTS_USED
    makefile = (REPO / "Makefile").read_text()
    for target in ("seed", "smoke", "delete"):
        assert f"scripts/stack.py {target} --stack-name $(STACK)" in makefile


def test_seed_through_the_catalog_table_writes_every_bundled_record(stack):
    done = run("seed", "--stack-name", STACK)
    assert done.returncode == 0, done.stderr
    table = boto3.resource("dynamodb").Table(stack["CatalogTableName"])
    items = table.scan()["Items"]
    bundled = Path(REPO / "layers/core/agentic_search/data/tools.jsonl").read_text()
    ids = {json.loads(x)["id"] for x in bundled.splitlines() if x.strip()}
    assert {i["id"] for i in items} == ids
    cursor = table.get_item(Key={"id": "cursor"})["Item"]
    assert cursor["name"] == "Cursor" and cursor["functionality"]


def test_seed_through_the_export_uploads_and_starts_the_reindex(stack, tmp_path):
    jsonl = tmp_path / "two.jsonl"
    jsonl.write_text('{"id": "a", "name": "A", "price": 1.5}\n{"id": "b", "name": "B"}\n')
    done = run("seed", "--stack-name", STACK, "--via", "export", "--jsonl", str(jsonl))
    assert done.returncode == 0, done.stderr
    body = boto3.client("s3").get_object(
        Bucket=stack["CatalogExportBucketName"], Key="seed/two.jsonl"
    )["Body"]
    assert body.read().decode() == jsonl.read_text()
    [execution] = boto3.client("stepfunctions").list_executions(
        stateMachineArn=stack["ReindexStateMachineArn"]
    )["executions"]
    started = boto3.client("stepfunctions").describe_execution(
        executionArn=execution["executionArn"]
    )
    assert json.loads(started["input"]) == {
        "bucket": stack["CatalogExportBucketName"],
        "key": "seed/two.jsonl",
    }
    assert run("seed", "--stack-name", STACK, "--jsonl", str(tmp_path / "none")).returncode == 2


def test_smoke_passes_on_the_known_answer_and_fails_otherwise(stack):
    # a signed search for the known comparison finds both named tools in the top 5
    done = run("smoke", "--stack-name", STACK)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("PASS") and "pinecone" in done.stdout
    # an answer that is not there fails the smoke test
    missing = run("smoke", "--stack-name", STACK, "--expect", "no-such-tool")
    assert missing.returncode == 1 and "missing: ['no-such-tool']" in missing.stdout
    # a request signed with other credentials is refused by the API (IAM auth)
    forged = run("smoke", "--stack-name", STACK, env={"AWS_SECRET_ACCESS_KEY": "wrong"})
    assert forged.returncode == 1 and "HTTP 403" in forged.stdout
    assert run("smoke", "--stack-name", "no-such-stack").returncode == 2


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    """The single stderr line of a failed run (no traceback)."""
    assert "Traceback" not in done.stderr, done.stderr[-1500:]
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: ")
    return line


REGIONS = ("AWS_REGION", "AWS_DEFAULT_REGION")


def test_the_region_is_samconfigs_unless_aws_region_or_region_says_otherwise(stack):
    # issue 25 finding 8: with neither AWS_REGION nor AWS_DEFAULT_REGION, boto3 raised
    # NoRegionError (a traceback) although samconfig.toml names the region make deploy used
    config = (REPO / "samconfig.toml").read_text()
    assert f'region = "{REGION}"' in config  # the stack fixture's region
    done = run("smoke", "--stack-name", STACK, unset=REGIONS)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("PASS")
    # AWS_REGION (which boto3 itself ignores) and --region override it: no such stack there
    by_env = run("smoke", "--stack-name", STACK, env={"AWS_REGION": "eu-west-1"}, unset=REGIONS[1:])
    by_flag = run("smoke", "--stack-name", STACK, "--region", "eu-west-1", unset=REGIONS)
    for other in (by_env, by_flag):
        assert other.returncode == 2, other.stdout + other.stderr
        assert f"stack '{STACK}' in eu-west-1" in one_line_error(other)


def test_missing_credentials_and_an_unreachable_endpoint_are_one_line_exit_2(aws_env, tmp_path):
    # issue 25 finding 8: NoCredentialsError and EndpointConnectionError were tracebacks
    nothing = str(tmp_path / "none")
    no_credentials = run(
        "seed",
        "--stack-name",
        STACK,
        env={
            "AWS_SHARED_CREDENTIALS_FILE": nothing,
            "AWS_CONFIG_FILE": nothing,
            "AWS_EC2_METADATA_DISABLED": "true",
        },
        unset=("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
    )
    assert no_credentials.returncode == 2
    assert one_line_error(no_credentials).startswith("error: no AWS credentials")
    closed = run(
        "delete",
        "--stack-name",
        STACK,
        env={"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_MAX_ATTEMPTS": "1"},
    )
    assert closed.returncode == 2
    assert one_line_error(closed).startswith("error: could not reach AWS")


def api_stack(name: str, api_url: str) -> None:
    """A stack in moto whose SearchApiUrl output is ``api_url``."""
    template = {
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {"SearchApiUrl": {"Value": api_url}},
    }
    boto3.client("cloudformation").create_stack(StackName=name, TemplateBody=json.dumps(template))


def test_smoke_says_could_not_reach_in_one_line_exit_2_and_a_non_json_error_is_a_failed_check(
    aws_env,
):
    # issue 31 section 2: an unreachable API was a 40-line URLError traceback, exit 1 (like a
    # failed check), and a non-JSON error body crashed the same way
    api_stack("api-unreachable", "http://127.0.0.1:9/")
    unreachable = run("smoke", "--stack-name", "api-unreachable")
    assert unreachable.returncode == 2
    line = one_line_error(unreachable)
    assert line.startswith("error: could not reach http://127.0.0.1:9/search")

    class Gateway(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            data = b"<html><body>502 Bad Gateway</body></html>"
            self.send_response(502)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Gateway)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        api_stack("api-html", f"http://127.0.0.1:{server.server_address[1]}/")
        html = run("smoke", "--stack-name", "api-html")
    finally:
        server.shutdown()
        server.server_close()
    assert html.returncode == 1, html.stderr[-1500:]
    assert "Traceback" not in html.stderr
    assert html.stdout.startswith("FAIL ") and "HTTP 502" in html.stdout
    assert "502 Bad Gateway" in html.stdout


def test_delete_empties_the_export_and_snapshot_buckets_then_deletes_the_stack(stack):
    s3 = boto3.client("s3")
    bucket, snapshots = stack["CatalogExportBucketName"], stack["SnapshotBucketName"]
    s3.put_object(Bucket=bucket, Key="more.jsonl", Body=b"{}")
    s3.put_object(Bucket=snapshots, Key="snapshots/tools/v0000000001-a.tar.gz", Body=b"x")
    count = 0
    for b in (bucket, snapshots):
        held = s3.list_object_versions(Bucket=b)
        count += len(held.get("Versions", [])) + len(held.get("DeleteMarkers", []))
    assert count >= 2
    done = run("delete", "--stack-name", STACK)
    assert done.returncode == 0, done.stderr
    # every version and marker was deleted first (CloudFormation refuses a non-empty bucket)
    assert f"emptied the buckets ({count} objects)" in done.stdout
    cfn = boto3.client("cloudformation")
    with pytest.raises(cfn.exceptions.ClientError):
        cfn.describe_stacks(StackName=STACK)
    with pytest.raises(s3.exceptions.ClientError):
        s3.head_bucket(Bucket=bucket)
