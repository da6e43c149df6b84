"""template.yaml as the tests read it: its parameters, the SAM transform of it (what a
deployment would create) and helpers over the transformed resources."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

from samtranslator.translator.transform import transform

from support.paths import REPO

TEMPLATE = REPO / "template.yaml"
ASL = REPO / "layers" / "core" / "agentic_search" / "statemachine" / "search.asl.json"
CONTRACT = REPO / "docs" / "state-machine.md"
LAYER_REQUIREMENTS = REPO / "layers" / "core" / "requirements.txt"

REGION = "us-east-1"
ACCOUNT = "123456789012"
NO_VALUE = {"Ref": "AWS::NoValue"}

TRANSIENT_LAMBDA_ERRORS = {
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
}

# The graph of docs/state-machine.md. Task: (function, Next or None for End, Catch ResultPath,
# Catch Next). PrepareRound's Catch leads to Finalize with roundError (earlier rounds answer).
CONTRACT_TASKS: dict[str, tuple[str, str | None, str, str]] = {
    "CacheCheck": ("CacheCheckFunction", "CacheHit", "$.cacheError", "ExtractIntent"),
    "ExtractIntent": ("ExtractIntentFunction", "PlanQuery", "$.intentError", "ExtractIntentRules"),
    "ExtractIntentRules": ("ExtractIntentFunction", "PlanQuery", "$.error", "SearchFailed"),
    "PlanQuery": ("PlanQueryFunction", "PrepareRound", "$.planError", "PlanQueryRules"),
    "PlanQueryRules": ("PlanQueryFunction", "PrepareRound", "$.error", "SearchFailed"),
    "PrepareRound": ("PrepareRoundFunction", "RoundReady", "$.roundError", "Finalize"),
    "FuseRerank": ("FuseRerankFunction", "GradeRound", "$.fuseError", "Finalize"),
    "GradeRound": ("GradeRoundFunction", "Continue", "$.gradeError", "Finalize"),
    "Finalize": ("FinalizeFunction", "CacheStore", "$.error", "SearchFailed"),
    "CacheStore": ("CacheStoreFunction", "Respond", "$.cacheError", "Respond"),
}
CONTRACT_MAP_TASKS = {"Retrieve": ("RetrieveFunction", None, "$.error", "RetrieveFailed")}
# Choice: (boolean variable, Next when true, Default).
CONTRACT_CHOICES = {
    "CacheHit": ("$.cache.hit", "Finalize", "ExtractIntent"),
    "RoundReady": ("$.executor.continueSearch", "RetrieveAll", "Finalize"),
    "Continue": ("$.executor.continueSearch", "PrepareRound", "Finalize"),
}

# The functions behind HTTP API routes that search: POST /search and the rest, and /mcp.
API_FUNCTIONS = {"SearchApiFunction", "McpFunction"}
# The catalog sync subsystem; tests/sync/test_sync_template.py checks its resources and roles.
SYNC_FUNCTIONS = {
    "CatalogSyncFunction",
    "SyncRedriveFunction",
    "SyncApiFunction",
    "ReindexBatchFunction",
}
SYNC_ROLES = {f"{f}Role" for f in SYNC_FUNCTIONS} | {"ReindexStateMachineRole"}
SYNC_ROUTES = {
    "GET /sync/status",
    "GET /sync/failed",
    "GET /sync/pending",
    "GET /sync/tool/{id}",
    "POST /sync/retry/{id}",
    "POST /sync/retry-all",
}

# IAM: Resource "*" is allowed only for actions AWS gives no resource-level permission for.
RESOURCE_STAR_ACTIONS = {
    # CatalogSync's stream mapping: Lambda's DynamoDB event source calls ListStreams, which
    # takes no resource ARN (the stream reads themselves are granted on CatalogTable's stream).
    "dynamodb:ListStreams",
    # FuseRerank with RerankModel: Bedrock's Rerank action takes no resource ARN (the model is
    # granted by bedrock:InvokeModel on its foundation-model ARN; Bedrock user guide, "Permissions
    # for reranking").
    "bedrock:Rerank",
    # Step Functions' log delivery to CloudWatch Logs (SearchStateMachine Logging): the vended-log
    # delivery and resource-policy APIs are account-level (Step Functions developer guide, "IAM
    # policies for logging to CloudWatch Logs").
    "logs:CreateLogDelivery",
    "logs:GetLogDelivery",
    "logs:UpdateLogDelivery",
    "logs:DeleteLogDelivery",
    "logs:ListLogDeliveries",
    "logs:PutResourcePolicy",
    "logs:DescribeResourcePolicies",
    "logs:DescribeLogGroups",
}
# AWS managed policies SAM attaches by itself; both use Resource "*" for the same reason.
ALLOWED_MANAGED_POLICIES = {
    # Every function role SAM creates: logs:CreateLogGroup/CreateLogStream/PutLogEvents.
    "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
    # Tracing (functions: Active, state machine: Enabled): xray:PutTraceSegments,
    # PutTelemetryRecords and the sampling reads, which take no resource ARN. Powertools Metrics
    # writes EMF to the logs, so no cloudwatch:PutMetricData is needed anywhere.
    "arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess",
}

FAKE_SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:{}-AbCdEf"
SECRET_PARAMETERS = {
    # parameter -> (condition, environment variable)
    "QdrantApiKeySecretArn": ("HasQdrantApiKeySecret", "QDRANT_API_KEY_SECRET_ARN"),
    "MongoUriSecretArn": ("HasMongoUriSecret", "MONGODB_URI_SECRET_ARN"),
    "OpenAiKeySecretArn": ("HasOpenAiKeySecret", "OPENAI_API_KEY_SECRET_ARN"),
}
# Values every deployment must give (none: VectorEngine edge-s3 needs no server) plus every
# optional one set (the Qdrant server engine with its URL among them).
REQUIRED_PARAMETERS: dict[str, str] = {}
ALL_SET_PARAMETERS = {
    **REQUIRED_PARAMETERS,
    "VectorEngine": "qdrant",
    "QdrantUrl": "https://qdrant.example.com:6333",
    "EmbeddingModel": "text-embedding-3-small",
    **{name: FAKE_SECRET.format(name) for name in SECRET_PARAMETERS},
    "AuthMode": "JWT",
    "JwtIssuer": "https://issuer.example.com/",
    "JwtAudience": "search-api,search-web",
    "OpenAiBaseUrl": "https://llm.example.com/v1",
    "LlmModel": "gpt-4o-mini",
    "LlmProvider": "openai",
}


# ----- loading and resolving ----------------------------------------------------------------------


def placeholder(name: str) -> str:
    """A DefinitionSubstitutions placeholder as written in the ASL."""
    return "${" + name + "}"


def plain(node: Any) -> Any:
    """cfn-lint's nodes (str/dict/list subclasses carrying line marks) as plain JSON values."""
    return json.loads(json.dumps(node))


def functions_of(resources: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        name: r["Properties"]
        for name, r in resources.items()
        if r["Type"] == "AWS::Serverless::Function"
    }


def parameter_values(template: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Parameter values as CloudFormation hands them to a transform: defaults, then overrides;
    CommaDelimitedList values as lists."""
    values: dict[str, Any] = {}
    for name, spec in template["Parameters"].items():
        value = overrides.get(name, spec.get("Default"))
        if value is None:
            raise KeyError(f"parameter {name} has no default: give it in overrides")
        if spec["Type"] == "CommaDelimitedList" and isinstance(value, str):
            value = value.split(",")
        values[name] = value if isinstance(value, list) else str(value)
    return values


def evaluate_condition(expr: Any, conditions: dict[str, Any], values: dict[str, Any]) -> Any:
    if isinstance(expr, dict) and len(expr) == 1:
        ((fn, arg),) = expr.items()
        if fn == "Ref":
            return values[arg]
        if fn == "Condition":
            return evaluate_condition(conditions[arg], conditions, values)
        if fn == "Fn::Equals":
            left = evaluate_condition(arg[0], conditions, values)
            return left == evaluate_condition(arg[1], conditions, values)
        if fn == "Fn::Not":
            return not evaluate_condition(arg[0], conditions, values)
        if fn == "Fn::And":
            return all(evaluate_condition(a, conditions, values) for a in arg)
        if fn == "Fn::Or":
            return any(evaluate_condition(a, conditions, values) for a in arg)
        raise AssertionError(f"condition function {fn} not handled by this test")
    return expr


def resolve_language_extensions(
    template: dict[str, Any], overrides: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """What AWS::LanguageExtensions does to this template before the SAM transform: evaluate the
    conditions, replace each Fn::If by its branch and drop AWS::NoValue. Returns the template
    (SAM transform only) and the parameter values."""
    values = parameter_values(template, overrides)
    raw = template.get("Conditions", {})
    conditions = {name: bool(evaluate_condition(expr, raw, values)) for name, expr in raw.items()}
    gone = object()

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if node == NO_VALUE:
                return gone
            if list(node) == ["Fn::If"]:
                name, when_true, when_false = node["Fn::If"]
                return walk(when_true if conditions[name] else when_false)
            out = {k: walk(v) for k, v in node.items()}
            return {k: v for k, v in out.items() if v is not gone}
        if isinstance(node, list):
            return [v for v in (walk(i) for i in node) if v is not gone]
        return node

    resolved = walk(copy.deepcopy(template))
    assert resolved["Transform"] == ["AWS::LanguageExtensions", "AWS::Serverless-2016-10-31"]
    resolved["Transform"] = "AWS::Serverless-2016-10-31"
    resolved["Conditions"] = raw
    return resolved, values


class ManagedPolicies:
    """The SAM translator's managed-policy lookup (an IAM ListPolicies call) without AWS."""

    def load(self) -> dict[str, str]:
        return {
            "AWSLambdaBasicExecutionRole": (
                "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"
            ),
            "AWSXrayWriteOnlyAccess": "arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess",
        }


def sam_transform(template: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """The CloudFormation template a deployment with these parameter values would create.
    Local code locations become S3 URIs (what `sam package` does) and the ASL file is inlined."""
    resolved, values = resolve_language_extensions(template, overrides)
    for resource in resolved["Resources"].values():
        props = resource.get("Properties", {})
        if "CodeUri" in props:
            props["CodeUri"] = "s3://artifacts/function.zip"
        if "ContentUri" in props:
            props["ContentUri"] = "s3://artifacts/layer.zip"
        if "DefinitionUri" in props:
            with (REPO / props.pop("DefinitionUri")).open(encoding="utf-8") as fh:
                props["Definition"] = json.load(fh)
    return transform(resolved, values, ManagedPolicies())


def statements(deployed: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, resource in deployed["Resources"].items():
        props = resource.get("Properties", {})
        if resource["Type"] == "AWS::IAM::Role":
            for policy in props.get("Policies", []):
                for statement in policy["PolicyDocument"]["Statement"]:
                    yield f"{name}/{policy['PolicyName']}", statement
        elif resource["Type"] in {"AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"}:
            for statement in props["PolicyDocument"]["Statement"]:
                yield name, statement


def joined_lists(expr: Any, values: dict[str, Any]) -> Any:
    """``expr`` with each ``Fn::Join`` of a list parameter replaced by its value (the one
    function of the Rules that :func:`evaluate_condition` does not handle)."""
    if isinstance(expr, dict):
        if list(expr) == ["Fn::Join"]:
            sep, ref = expr["Fn::Join"]
            return sep.join(values[ref["Ref"]])
        return {k: joined_lists(v, values) for k, v in expr.items()}
    if isinstance(expr, list):
        return [joined_lists(v, values) for v in expr]
    return expr


def failed_assertions(template: dict[str, Any], overrides: dict[str, Any]) -> list[str]:
    """The AssertDescription of every Rules assertion that fails for these parameter values
    (a rule whose RuleCondition holds checks its assertions, as CloudFormation does)."""
    values = parameter_values(template, {**REQUIRED_PARAMETERS, **overrides})
    failed = []
    for rule in template["Rules"].values():
        condition = joined_lists(rule.get("RuleCondition", True), values)
        if not evaluate_condition(condition, {}, values):
            continue
        for assertion in rule["Assertions"]:
            if not evaluate_condition(joined_lists(assertion["Assert"], values), {}, values):
                failed.append(" ".join(assertion["AssertDescription"].split()))
    return failed


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]
