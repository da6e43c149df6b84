"""The real template deployed as far as an offline machine allows, against moto's server on
loopback:

1. ``sam package`` (SAM CLI of .venv-sam) of the ``sam build`` output uploads every function,
   layer and state machine definition into a moto S3 bucket;
2. aws-sam-translator expands the packaged template into plain CloudFormation, as
   CloudFormation's ``AWS::LanguageExtensions`` and ``AWS::Serverless-2016-10-31`` transforms do
   (moto runs no transforms: that is the step of ``make deploy`` that needs real AWS);
3. moto's CloudFormation creates the stack; the test then reads what was created through the
   services' own APIs: each function's runtime, handler, layers (in order), memory, timeout,
   environment and code from the packaged bucket; the stream event source mapping (partial batch
   responses, on-failure queue), the EventBridge rule's target (retries, dead-letter queue); the
   queues; both state machines with their definitions substituted, every Task naming a created
   function; every IAM policy scoped to the resources it names.

What moto cannot do, done or left out here in the open (docs/guides/deploy.md says the same):

* :data:`MOTO_CANNOT_CREATE`: resource types moto's CloudFormation does not implement; the test
  asserts these (and only these) are the resources missing from the created stack.
* ``DefinitionS3Location`` + ``DefinitionSubstitutions`` of a state machine: moto reads only
  ``DefinitionString``; the test gives it ``Fn::Sub`` of the uploaded definition with the
  substitutions, which is what CloudFormation does with them.
* ``Ref`` of an ``AWS::Events::EventBus`` (its name in CloudFormation) yields moto's object: the
  rule's ``EventBusName`` is given as ``Fn::GetAtt [bus, Name]``, the same value.
* moto's CloudFormation creates a function without its ``Layers`` and ``TracingConfig``, and a
  role without its ``ManagedPolicyArns``: the test checks that the layer versions were created
  (each from its packaged artifact) and reads those three properties from the expanded template
  (each function's layers are created layer versions, in the template's order).

The build is the one ``make validate`` left in .aws-sam/build when it is newer than
template.yaml, else one ``sam build`` for the session (minutes: the layers). Skipped, saying
so, when SAM CLI is not installed (``make validate`` installs it).
"""

from __future__ import annotations

import ast
import copy
import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from cfnlint.decode import cfn_yaml
from moto.server import ThreadedMotoServer
from samtranslator.translator.transform import transform
from support.paths import REPO
from support.template import (
    ALL_SET_PARAMETERS,
    ALLOWED_MANAGED_POLICIES,
    RESOURCE_STAR_ACTIONS,
    TEMPLATE,
    ManagedPolicies,
    plain,
    resolve_language_extensions,
)

SAM = REPO / ".venv-sam" / "bin" / "sam"
BUILD = REPO / ".aws-sam" / "build"
REGION, STACK, BUCKET = "us-east-1", "agentic-search-moto", "agentic-search-artifacts"
ACCOUNT = "123456789012"
PARAMETERS = {k: v for k, v in ALL_SET_PARAMETERS.items() if k != "EmbeddingModel"}  # local MiniLM
#: Resource types moto 5's CloudFormation cannot create (it records nothing for them).
MOTO_CANNOT_CREATE = {
    "AWS::ApiGatewayV2::Api",  # the HTTP API (routes, JWT/IAM auth) and its stage
    "AWS::ApiGatewayV2::Stage",
    "AWS::CloudWatch::Alarm",
    "AWS::Lambda::EventInvokeConfig",  # CatalogSync's async retries and on-failure queue
    "AWS::S3::BucketPolicy",
    "AWS::SQS::QueuePolicy",
}
pytestmark = pytest.mark.skipif(not SAM.is_file(), reason="no SAM CLI: run `make validate`")


def _sam_env(endpoint: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/tmp"),
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "SAM_CLI_TELEMETRY": "0",
        "SAM_CLI_ENABLE_LANGUAGE_EXTENSIONS": "1",
    }


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> Path:
    """A ``sam build`` of template.yaml: make validate's when current, else one for the session."""
    made = BUILD / "template.yaml"
    if made.is_file() and made.stat().st_mtime >= TEMPLATE.stat().st_mtime:
        return BUILD
    out = tmp_path_factory.mktemp("sam-build")
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "validate-template.sh")],
        env={**os.environ, "BUILD_DIR": str(out)},
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def client(service: str, url: str) -> Any:
    return boto3.client(
        service,
        endpoint_url=url,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def _for_moto(resources: dict[str, Any], s3: Any) -> None:
    """The two moto gaps of the module doc, filled the way CloudFormation fills them."""
    for res in resources.values():
        props = res.get("Properties", {})
        if res["Type"] == "AWS::StepFunctions::StateMachine":
            where = props.pop("DefinitionS3Location")
            text = s3.get_object(Bucket=where["Bucket"], Key=where["Key"])["Body"].read().decode()
            subs = props.pop("DefinitionSubstitutions", {})
            props["DefinitionString"] = {"Fn::Sub": [text, subs]}
        if res["Type"] == "AWS::Events::Rule" and "Ref" in (props.get("EventBusName") or {}):
            props["EventBusName"] = {"Fn::GetAtt": [props["EventBusName"]["Ref"], "Name"]}


@pytest.fixture(scope="module")
def deployed(built, moto_url, tmp_path_factory) -> dict[str, Any]:
    """The created stack: the expanded template, its parameters and physical ids by logical id."""
    s3 = client("s3", moto_url)
    s3.create_bucket(Bucket=BUCKET)
    packaged = tmp_path_factory.mktemp("package") / "packaged.yaml"
    done = subprocess.run(
        [
            *(str(SAM), "package", "--template-file", str(built / "template.yaml")),
            *("--s3-bucket", BUCKET, "--s3-prefix", "agentic-search", "--region", REGION),
            *("--output-template-file", str(packaged), "--no-progressbar"),
        ],
        env=_sam_env(moto_url),
        capture_output=True,
        text=True,
        check=False,
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    template = plain(cfn_yaml.load(str(packaged)))
    resolved, values = resolve_language_extensions(template, PARAMETERS)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AWS_DEFAULT_REGION", REGION)  # the translator's ARNs
        expanded = transform(copy.deepcopy(resolved), values, ManagedPolicies())
    _for_moto(expanded["Resources"], s3)
    cfn = client("cloudformation", moto_url)
    cfn.create_stack(
        StackName=STACK,
        TemplateBody=json.dumps(expanded),
        Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in PARAMETERS.items()],
        Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"],
    )
    [stack] = cfn.describe_stacks(StackName=STACK)["Stacks"]
    summaries = cfn.list_stack_resources(StackName=STACK)["StackResourceSummaries"]
    return {
        "status": stack["StackStatus"],
        "packaged": template,
        "resolved": resolved,
        "expanded": expanded,
        "values": values,
        "ids": {s["LogicalResourceId"]: s["PhysicalResourceId"] for s in summaries},
        "created": {s["LogicalResourceId"] for s in summaries if s["ResourceType"]},
    }


def source() -> dict[str, Any]:
    return plain(cfn_yaml.load(str(TEMPLATE)))


def test_the_stack_is_created_and_only_what_moto_cannot_create_is_missing(deployed):
    assert deployed["status"] == "CREATE_COMPLETE"
    resources = deployed["expanded"]["Resources"]
    missing = {name: r["Type"] for name, r in resources.items() if name not in deployed["created"]}
    assert set(missing.values()) == MOTO_CANNOT_CREATE, missing
    # sam package uploaded every code and definition location into the bucket
    for res in deployed["packaged"]["Resources"].values():
        for key in ("CodeUri", "ContentUri", "DefinitionUri"):
            where = res.get("Properties", {}).get(key)
            if isinstance(where, dict):  # a state machine's DefinitionUri: {Bucket, Key}
                where = f"s3://{where['Bucket']}/{where['Key']}"
            if where is not None:
                assert where.startswith(f"s3://{BUCKET}/agentic-search/"), res


def _expected_env(fn: dict[str, Any], globals_: dict[str, Any], d: dict) -> dict[str, str]:
    """The environment a function gets: Globals' variables and its own (conditions evaluated
    for the stack's parameters), each Ref resolved to the parameter or the created resource."""
    raw = {**globals_["Environment"]["Variables"], **fn.get("Environment", {}).get("Variables", {})}

    def value(node: Any) -> str:
        if isinstance(node, dict) and "Ref" in node:
            ref = node["Ref"]
            return str(d["values"][ref] if ref in d["values"] else d["ids"][ref])
        if isinstance(node, dict) and "Fn::Join" in node:
            sep, parts = node["Fn::Join"]
            return sep.join(value(x) for x in parts)
        assert isinstance(node, str | int), node
        return str(node)

    return {key: value(v) for key, v in raw.items()}


def test_every_function_is_created_as_the_template_declares_it(deployed, moto_url):
    lam, s3 = client("lambda", moto_url), client("s3", moto_url)
    template = deployed["resolved"]  # template.yaml as packaged, its conditions evaluated
    globals_ = template["Globals"]["Function"]
    expanded = deployed["expanded"]["Resources"]
    layers = created_layers(deployed, moto_url)
    functions = {
        n: r["Properties"]
        for n, r in template["Resources"].items()
        if r["Type"] == "AWS::Serverless::Function"
    }
    assert len(functions) == 15
    for name, fn in functions.items():
        got = lam.get_function(FunctionName=deployed["ids"][name])
        config = got["Configuration"]
        assert config["Runtime"] == globals_["Runtime"] == "python3.12", name
        assert config["Handler"] == fn["Handler"], name
        assert config["MemorySize"] == fn.get("MemorySize", globals_["MemorySize"]), name
        assert config["Timeout"] == fn.get("Timeout", globals_["Timeout"]), name
        assert expanded[name]["Properties"]["TracingConfig"] == {"Mode": "Active"}, name
        # the layers, in order: CoreLayer (Globals), then the function's own; each created
        want = [r["Ref"] for r in [*globals_["Layers"], *fn.get("Layers", [])]]
        refs = [r["Ref"] for r in expanded[name]["Properties"]["Layers"]]
        assert [r.rstrip("0123456789abcdef") for r in refs] == want, name
        assert set(refs) <= set(layers), name
        env = {k: str(v) for k, v in config["Environment"]["Variables"].items()}
        assert env == _expected_env(fn, globals_, deployed), name
        # the code is the packaged artifact of this function's built folder
        uri = deployed["packaged"]["Resources"][name]["Properties"]["CodeUri"]
        key = uri.removeprefix(f"s3://{BUCKET}/")
        assert s3.head_object(Bucket=BUCKET, Key=key)["ContentLength"] > 0, name
        assert config["CodeSize"] > 0, name


def created_layers(deployed: dict[str, Any], url: str) -> dict[str, dict[str, Any]]:
    """Logical id of each layer of the expanded template -> its created (first) version."""
    lam = client("lambda", url)
    listed = lam.list_layers()["Layers"]
    out = {}
    for name, res in deployed["expanded"]["Resources"].items():
        if res["Type"] == "AWS::Lambda::LayerVersion":
            [layer] = [x for x in listed if f"-{name}-" in x["LayerName"]]
            [version] = lam.list_layer_versions(LayerName=layer["LayerName"])["LayerVersions"]
            out[name] = version
    return out


def test_layers_are_created_for_python312_from_the_packaged_artifacts(deployed, moto_url):
    layers = [n for n, r in source()["Resources"].items() if r["Type"].endswith("LayerVersion")]
    assert sorted(layers) == [
        "CoreLayer",
        "EmbedLayer",
        "McpLayer",
        "MongoLayer",
        "OpenAiLayer",
        "QdrantLayer",  # created: this stack is VectorEngine=qdrant (UseQdrant)
    ]
    created = created_layers(deployed, moto_url)
    assert sorted(n.rstrip("0123456789abcdef") for n in created) == sorted(layers)
    for name, version in created.items():
        assert version["CompatibleRuntimes"] == ["python3.12"], name
        content = deployed["expanded"]["Resources"][name]["Properties"]["Content"]
        assert content["S3Bucket"] == BUCKET and content["S3Key"].startswith("agentic-search/")


def test_the_stream_mapping_reports_partial_batch_failures_to_its_dead_letter_queue(
    deployed, moto_url
):
    lam, sqs, ddb = (
        client("lambda", moto_url),
        client("sqs", moto_url),
        client("dynamodb", moto_url),
    )
    fn = deployed["ids"]["CatalogSyncFunction"]
    [mapping] = lam.list_event_source_mappings(FunctionName=fn)["EventSourceMappings"]
    table = ddb.describe_table(TableName=deployed["ids"]["CatalogTable"])["Table"]
    assert mapping["EventSourceArn"] == table["LatestStreamArn"]
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["BatchSize"] == 50
    assert mapping["StartingPosition"] == "TRIM_HORIZON"
    dlq_url = deployed["ids"]["CatalogSyncDLQ"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])
    expected = dlq_arn["Attributes"]["QueueArn"]
    assert mapping["DestinationConfig"]["OnFailure"]["Destination"] == expected
    for queue in ("CatalogSyncDLQ", "CatalogEventsDLQ"):  # dead-letter queues: 14 days, encrypted
        attrs = sqs.get_queue_attributes(QueueUrl=deployed["ids"][queue], AttributeNames=["All"])[
            "Attributes"
        ]
        assert attrs["MessageRetentionPeriod"] == "1209600", queue
        assert attrs.get("SqsManagedSseEnabled") == "true", queue


def test_catalog_changed_events_reach_catalog_sync_with_retries_and_a_dead_letter_queue(
    deployed, moto_url
):
    events, sqs, lam = (
        client("events", moto_url),
        client("sqs", moto_url),
        client("lambda", moto_url),
    )
    bus = f"{STACK}-catalog"  # the template's Name (moto records no physical id for a bus)
    assert bus in {b["Name"] for b in events.list_event_buses()["EventBuses"]}
    rules = events.list_rules(EventBusName=bus)["Rules"]
    assert [json.loads(r["EventPattern"]) for r in rules] == [{"detail-type": ["catalog.changed"]}]
    [target] = events.list_targets_by_rule(Rule=rules[0]["Name"], EventBusName=bus)["Targets"]
    function = lam.get_function(FunctionName=deployed["ids"]["CatalogSyncFunction"])
    assert target["Arn"] == function["Configuration"]["FunctionArn"]
    assert target["RetryPolicy"] == {"MaximumRetryAttempts": 4, "MaximumEventAgeInSeconds": 3600}
    dlq = sqs.get_queue_attributes(
        QueueUrl=deployed["ids"]["CatalogEventsDLQ"], AttributeNames=["QueueArn"]
    )["Attributes"]["QueueArn"]
    assert target["DeadLetterConfig"] == {"Arn": dlq}


def test_api_gateway_may_invoke_search_api_function_for_every_route_and_the_default_one(
    deployed, moto_url
):
    # issue 25 finding 10: a wrong method of a known path (POST /sync/status) or an unknown
    # path reaches SearchApiFunction through the HTTP API's $default route (its handler answers
    # 405 with Allow, or 404); the API itself is not created by moto, its route permissions are
    resources = deployed["expanded"]["Resources"]
    body = resources["SearchApi"]["Properties"]["Body"]
    default = body["paths"]["/$default"]["x-amazon-apigateway-any-method"]
    assert default["isDefaultRoute"] is True
    assert (
        "${SearchApiFunction.Arn}" in default["x-amazon-apigateway-integration"]["uri"]["Fn::Sub"]
    )
    lam = client("lambda", moto_url)
    function = deployed["ids"]["SearchApiFunction"]
    policy = json.loads(lam.get_policy(FunctionName=function)["Policy"])
    granted = {
        st["Sid"]: st
        for st in policy["Statement"]
        if st["Principal"] == {"Service": "apigateway.amazonaws.com"}
        and st["Action"] == "lambda:InvokeFunction"
    }
    permissions = {
        n
        for n, r in resources.items()
        if r["Type"] == "AWS::Lambda::Permission"
        and r["Properties"]["FunctionName"] == {"Ref": "SearchApiFunction"}
    }
    assert "SearchApiFunctionFallbackPermission" in permissions
    assert permissions <= deployed["created"]
    assert len(granted) == len(permissions), granted  # one statement per route, the default's too


def test_api_gateway_may_invoke_mcp_function_on_mcp_and_it_runs_with_the_mcp_sdk_layer(
    deployed, moto_url
):
    # /mcp (any method) reaches McpFunction, with its own permission; the function is created
    # with CoreLayer then McpLayer, the search state machine's ARN and its packaged code
    resources = deployed["expanded"]["Resources"]
    body = resources["SearchApi"]["Properties"]["Body"]
    route = body["paths"]["/mcp"]["x-amazon-apigateway-any-method"]
    assert "${McpFunction.Arn}" in route["x-amazon-apigateway-integration"]["uri"]["Fn::Sub"]
    lam = client("lambda", moto_url)
    function = deployed["ids"]["McpFunction"]
    policy = json.loads(lam.get_policy(FunctionName=function)["Policy"])
    [granted] = [
        st
        for st in policy["Statement"]
        if st["Principal"] == {"Service": "apigateway.amazonaws.com"}
        and st["Action"] == "lambda:InvokeFunction"
    ]
    assert "/mcp" in json.dumps(granted["Condition"])
    config = lam.get_function(FunctionName=function)["Configuration"]
    assert config["Handler"] == "app.handler" and config["Runtime"] == "python3.12"
    machine = deployed["ids"]["SearchStateMachine"]
    assert config["Environment"]["Variables"]["STATE_MACHINE_ARN"] == machine
    refs = [r["Ref"] for r in resources["McpFunction"]["Properties"]["Layers"]]
    # (this stack is VectorEngine=qdrant: QdrantLayer comes with Globals' CoreLayer)
    assert [r.rstrip("0123456789abcdef") for r in refs] == ["CoreLayer", "QdrantLayer", "McpLayer"]
    assert set(refs) <= set(created_layers(deployed, moto_url))


TASK_FUNCTION = re.compile(r"^arn:aws:lambda:[^:]+:\d+:function:([^:]+)")


def _tasks(states: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for state in states.values():
        if state["Type"] == "Task":
            yield state
        inner = state.get("ItemProcessor") or state.get("Iterator") or {}
        for branch in [inner, *state.get("Branches", [])]:
            yield from _tasks(branch.get("States", {}))


def test_both_state_machines_have_their_definitions_substituted_with_created_functions(
    deployed, moto_url
):
    sfn, lam = client("stepfunctions", moto_url), client("lambda", moto_url)
    created = {
        lam.get_function(FunctionName=deployed["ids"][n])["Configuration"]["FunctionArn"]
        for n, r in deployed["expanded"]["Resources"].items()
        if r["Type"] == "AWS::Lambda::Function"
    }
    for name in ("SearchStateMachine", "ReindexStateMachine"):
        described = sfn.describe_state_machine(stateMachineArn=deployed["ids"][name])
        assert "${" not in described["definition"], name
        definition = json.loads(described["definition"])
        lambda_tasks = [
            t
            for t in _tasks(definition["States"])
            if t["Resource"].startswith("arn:aws:states:::lambda")
        ]
        assert lambda_tasks, name
        for task in lambda_tasks:
            target = task["Parameters"]["FunctionName"]
            assert TASK_FUNCTION.match(target) and target in created, (name, target)


def test_the_deployed_search_graph_hands_each_retrieve_the_states_caller(deployed, moto_url):
    # the caller the API set from the JWT claims reaches every Map item (each source filters
    # by it): the deployed definition's ItemSelector passes it on
    sfn = client("stepfunctions", moto_url)
    described = sfn.describe_state_machine(stateMachineArn=deployed["ids"]["SearchStateMachine"])
    maps = [s for s in json.loads(described["definition"])["States"].values() if s["Type"] == "Map"]
    assert maps and all(m["ItemSelector"].get("caller.$") == "$.caller" for m in maps)


ARN = re.compile(r"^arn:aws:([a-z0-9-]+):[^:]*:[^:]*:(.+)$")


#: A SigV4 caller's role or user, whose tags are its principals (ACCESS_IAM_TAGS).
CALLER_TAGS = re.compile(r"^arn:aws:iam::\d{12}:(role|user)/\*$")


def test_iam_policies_name_created_resources_and_use_star_only_where_no_resource_exists(
    deployed, moto_url
):
    iam = client("iam", moto_url)
    # ARNs a policy may name: the created resources', and those the parameters give (secrets)
    arns = _created_arns(deployed, moto_url) | {
        v for v in deployed["values"].values() if isinstance(v, str) and v.startswith("arn:")
    }
    roles = [
        n for n, r in deployed["expanded"]["Resources"].items() if r["Type"] == "AWS::IAM::Role"
    ]
    assert len(roles) >= 16
    checked = 0
    for name in roles:
        role = deployed["ids"][name]
        for policy_name in iam.list_role_policies(RoleName=role)["PolicyNames"]:
            document = iam.get_role_policy(RoleName=role, PolicyName=policy_name)["PolicyDocument"]
            if isinstance(document, str):  # moto keeps the Python repr of what it was given
                document = ast.literal_eval(document)
            statements = document["Statement"]
            for st in statements if isinstance(statements, list) else [statements]:
                actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
                resources = st["Resource"] if isinstance(st["Resource"], list) else [st["Resource"]]
                for resource in resources:
                    checked += 1
                    if resource == "*":
                        assert set(actions) <= RESOURCE_STAR_ACTIONS, (name, actions)
                        continue
                    if CALLER_TAGS.match(resource):
                        # the callers' roles and users are not the stack's: their tags are
                        # read in this account, and only read
                        assert set(actions) <= {"iam:ListRoleTags", "iam:ListUserTags"}, name
                        assert resource.split(":")[4] in {a.split(":")[4] for a in arns}, name
                        continue
                    assert names_a_created_resource(resource, arns), (name, resource)
        managed = deployed["expanded"]["Resources"][name]["Properties"].get("ManagedPolicyArns", [])
        assert set(managed) <= ALLOWED_MANAGED_POLICIES, (name, managed)
    assert checked > 30


def names_a_created_resource(resource: str, arns: set[str]) -> bool:
    """Whether ``resource`` is one of ``arns``, a part of one (``table/x/index/*``,
    ``bucket/prefix/*``, ``log-group:x:*``) or one by a trailing wildcard (``function:x*``, the
    function's versions); a wildcard over every resource of a kind (``function:*``) is not."""
    prefix = resource.removesuffix("*")
    return any(
        resource == a
        or resource.startswith((f"{a}/", f"{a}:"))
        or (resource.endswith("*") and prefix[-1] not in ":/" and a.startswith(prefix))
        for a in arns
    )


def _created_arns(deployed: dict[str, Any], url: str) -> set[str]:
    """The ARNs of the created tables (and streams), queues, buckets, functions, state machines,
    log groups and the event bus."""
    ddb, sqs, lam = client("dynamodb", url), client("sqs", url), client("lambda", url)
    out = set()
    for name, res in deployed["expanded"]["Resources"].items():
        pid, kind = deployed["ids"].get(name), res["Type"]
        if pid is None:
            continue
        if kind == "AWS::DynamoDB::Table":
            table = ddb.describe_table(TableName=pid)["Table"]
            out |= {table["TableArn"], table.get("LatestStreamArn", table["TableArn"])}
        elif kind == "AWS::SQS::Queue":
            attrs = sqs.get_queue_attributes(QueueUrl=pid, AttributeNames=["QueueArn"])
            out.add(attrs["Attributes"]["QueueArn"])
        elif kind == "AWS::S3::Bucket":
            out.add(f"arn:aws:s3:::{pid}")
        elif kind == "AWS::Lambda::Function":
            out.add(lam.get_function(FunctionName=pid)["Configuration"]["FunctionArn"])
        elif kind == "AWS::StepFunctions::StateMachine":  # and its executions'
            out |= {pid, pid.replace(":stateMachine:", ":execution:")}
        elif kind == "AWS::Logs::LogGroup":
            out.add(
                pid
                if pid.startswith("arn:")
                else f"arn:aws:logs:{REGION}:123456789012:log-group:{pid}"
            )
        elif kind == "AWS::Events::EventBus":
            out.add(f"arn:aws:events:{REGION}:{ACCOUNT}:event-bus/{STACK}-catalog")
    return out
