"""The catalog sync's part of template.yaml and statemachine/reindex.asl.json: failure paths on
every asynchronous edge (partial batch responses, bisect, on-failure destination, rule DLQ and
retry policy), 14-day DLQs with an alarm each, TTL and point-in-time recovery on the tables,
least-privilege roles (checked on the roles the SAM transform creates), and a bounded
Distributed Map over JSONL.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from support.paths import REPO
from support.template import (
    ALL_SET_PARAMETERS,
    REGION,
    SYNC_FUNCTIONS,
    TEMPLATE,
    TRANSIENT_LAMBDA_ERRORS,
    as_list,
    plain,
    sam_transform,
    statements,
)

REINDEX_ASL = REPO / "statemachine" / "reindex.asl.json"
SYNC_TABLES = {"SyncStatusTable", "SyncIdempotencyTable"}
DLQS = {"CatalogSyncDLQ", "CatalogEventsDLQ"}


@pytest.fixture(scope="module")
def resources() -> dict[str, Any]:
    from cfnlint.decode import cfn_yaml

    return plain(cfn_yaml.load(str(TEMPLATE)))["Resources"]


@pytest.fixture(scope="module")
def deployed(resources) -> dict[str, Any]:
    from cfnlint.decode import cfn_yaml

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AWS_DEFAULT_REGION", REGION)
        return sam_transform(plain(cfn_yaml.load(str(TEMPLATE))), ALL_SET_PARAMETERS)


@pytest.fixture(scope="module")
def reindex_asl() -> dict[str, Any]:
    return json.loads(REINDEX_ASL.read_text(encoding="utf-8"))


def test_the_catalog_table_streams_new_and_old_images_and_is_kept(resources):
    table = resources["CatalogTable"]
    assert table["DeletionPolicy"] == table["UpdateReplacePolicy"] == "Retain"
    props = table["Properties"]
    assert props["StreamSpecification"] == {"StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}


def test_sync_tables_expire_transient_items_and_have_point_in_time_recovery(resources):
    ttl = {"SyncStatusTable": "expiresAt", "SyncIdempotencyTable": "expiration"}
    for name, attribute in ttl.items():
        props = resources[name]["Properties"]
        assert props["TimeToLiveSpecification"] == {"AttributeName": attribute, "Enabled": True}
        assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
        assert props["SSESpecification"] == {"SSEEnabled": True}
    [gsi] = resources["SyncStatusTable"]["Properties"]["GlobalSecondaryIndexes"]
    assert gsi["IndexName"] == "byStatus"
    assert [k["AttributeName"] for k in gsi["KeySchema"]] == ["statusKey", "recordId"]


def test_the_stream_mapping_reports_partial_failures_bisects_and_dead_letters(resources):
    esm = resources["CatalogStreamMapping"]["Properties"]
    assert esm["FunctionName"] == {"Ref": "CatalogSyncFunction"}
    assert esm["EventSourceArn"] == {"Fn::GetAtt": ["CatalogTable", "StreamArn"]}
    assert esm["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert esm["BisectBatchOnFunctionError"] is True
    assert 0 <= esm["MaximumRetryAttempts"] <= 5
    assert esm["ParallelizationFactor"] == 1  # per-record order within a shard
    assert esm["DestinationConfig"]["OnFailure"]["Destination"] == {
        "Fn::GetAtt": ["CatalogSyncDLQ", "Arn"]
    }


def test_catalog_events_have_a_retry_policy_a_rule_dlq_and_an_async_failure_destination(
    resources,
):
    fn = resources["CatalogSyncFunction"]["Properties"]
    rule = fn["Events"]["CatalogChanged"]
    assert rule["Type"] == "EventBridgeRule"
    props = rule["Properties"]
    assert props["EventBusName"] == {"Ref": "CatalogEventBus"}
    assert props["Pattern"] == {"detail-type": ["catalog.changed"]}
    assert props["DeadLetterConfig"] == {"Arn": {"Fn::GetAtt": ["CatalogEventsDLQ", "Arn"]}}
    assert props["RetryPolicy"]["MaximumRetryAttempts"] >= 1
    on_failure = fn["EventInvokeConfig"]["DestinationConfig"]["OnFailure"]
    assert on_failure == {"Type": "SQS", "Destination": {"Fn::GetAtt": ["CatalogSyncDLQ", "Arn"]}}
    policy = resources["CatalogEventsDLQPolicy"]["Properties"]["PolicyDocument"]
    [statement] = policy["Statement"]
    assert statement["Principal"] == {"Service": "events.amazonaws.com"}
    assert statement["Condition"]["ArnEquals"]["aws:SourceArn"] == {
        "Fn::GetAtt": ["CatalogSyncFunctionCatalogChanged", "Arn"]
    }


def test_dlqs_keep_messages_14_days_and_each_has_an_alarm(resources):
    alarmed = set()
    for r in resources.values():
        if r["Type"] == "AWS::CloudWatch::Alarm" and r["Properties"]["Namespace"] == "AWS/SQS":
            props = r["Properties"]
            assert props["MetricName"] == "ApproximateNumberOfMessagesVisible"
            [dim] = props["Dimensions"]
            alarmed.add(dim["Value"]["Fn::GetAtt"][0])
            assert props["AlarmActions"] == [{"Ref": "AlarmTopic"}]
    assert alarmed == DLQS
    for name in DLQS:
        props = resources[name]["Properties"]
        assert props["MessageRetentionPeriod"] == 1209600
        assert props["SqsManagedSseEnabled"] is True


def test_the_redrive_runs_on_a_schedule_one_at_a_time_over_both_dlqs(resources):
    fn = resources["SyncRedriveFunction"]["Properties"]
    [event] = fn["Events"].values()
    assert event["Type"] == "Schedule" and event["Properties"]["Schedule"] == "rate(1 minute)"
    assert fn["ReservedConcurrentExecutions"] == 1
    urls = fn["Environment"]["Variables"]["SYNC_DLQ_URLS"]
    assert urls == {"Fn::Join": [",", [{"Ref": "CatalogSyncDLQ"}, {"Ref": "CatalogEventsDLQ"}]]}


def test_sync_routes_are_served_by_their_own_function(resources):
    fn = resources["SyncApiFunction"]["Properties"]
    routes = {(e["Properties"]["Method"], e["Properties"]["Path"]) for e in fn["Events"].values()}
    assert routes == {
        ("GET", "/sync/status"),
        ("GET", "/sync/failed"),
        ("GET", "/sync/pending"),
        ("GET", "/sync/tool/{id}"),
        ("POST", "/sync/retry/{id}"),
        ("POST", "/sync/retry-all"),
    }
    assert fn["Policies"] == [{"DynamoDBCrudPolicy": {"TableName": {"Ref": "SyncStatusTable"}}}]


def _refs(resource: Any) -> set[str]:
    """Logical ids a policy resource expression names."""
    text = json.dumps(resource)
    refs = re.findall(r'"Ref": "(\w+)"', text) + re.findall(r'"Fn::GetAtt": \["(\w+)"', text)
    return set(refs) | set(re.findall(r"\$\{([A-Z]\w+)(?:\.Arn)?\}", text))


def test_sync_roles_reach_only_their_own_tables_queues_stream_and_state_machine(deployed):
    allowed = {
        "CatalogSyncFunctionRole": SYNC_TABLES
        | {"PlanCacheTable", "CatalogTable", "CatalogSyncDLQ"},
        "SyncRedriveFunctionRole": {"SyncStatusTable", "PlanCacheTable", "CatalogTable"} | DLQS,
        "SyncApiFunctionRole": {"SyncStatusTable"},
        "ReindexBatchFunctionRole": {"PlanCacheTable"},
        "ReindexStateMachineRole": {"ReindexBatchFunction", "CatalogExportBucket"},
    }
    seen = set()
    for where, statement in statements(deployed):
        role = where.split("/")[0]
        if role not in allowed:
            continue
        seen.add(role)
        actions = set(as_list(statement["Action"]))
        if actions == {"secretsmanager:GetSecretValue"}:
            continue
        for resource in as_list(statement["Resource"]):
            if resource == "*":
                assert actions <= {"dynamodb:ListStreams"} or all(
                    a.startswith("logs:") for a in actions
                ), (role, actions)
                continue
            names = _refs(resource)
            if role == "ReindexStateMachineRole" and any(a.startswith("states:") for a in actions):
                assert "-reindex" in json.dumps(resource), resource  # its own executions only
                continue
            assert names and names <= allowed[role], (role, actions, resource)
        if "PlanCacheTable" in json.dumps(statement["Resource"]):
            assert actions == {"dynamodb:UpdateItem"}, (role, actions)  # the version bump only
    assert seen == set(allowed)
    assert {f"{f}Role" for f in SYNC_FUNCTIONS} <= seen


def test_reindex_is_a_bounded_distributed_map_over_jsonl(reindex_asl, resources):
    m = reindex_asl["States"][reindex_asl["StartAt"]]
    assert m["Type"] == "Map"
    assert m["ItemProcessor"]["ProcessorConfig"] == {
        "Mode": "DISTRIBUTED",
        "ExecutionType": "STANDARD",
    }
    assert m["ItemReader"]["Resource"] == "arn:aws:states:::s3:getObject"
    assert m["ItemReader"]["ReaderConfig"]["InputType"] == "JSONL"
    assert 1 <= m["ItemBatcher"]["MaxItemsPerBatch"] <= 1000
    assert 1 <= m["MaxConcurrency"] <= 100
    assert 0 < m["ToleratedFailurePercentage"] < 100
    assert m["ResultWriter"]["Resource"] == "arn:aws:states:::s3:putObject"
    assert m["Catch"][0]["Next"] == "ReindexFailed"
    [task] = m["ItemProcessor"]["States"].values()
    assert task["Parameters"]["FunctionName"] == "${ReindexBatchFunctionArn}"
    transient = [r for r in task["Retry"] if set(r["ErrorEquals"]) >= TRANSIENT_LAMBDA_ERRORS]
    assert transient and transient[0]["JitterStrategy"] == "FULL"
    sm = resources["ReindexStateMachine"]["Properties"]
    assert sm["Type"] == "STANDARD"
    assert sm["DefinitionUri"] == "statemachine/reindex.asl.json"
    placeholders = set(re.findall(r"\$\{(\w+)\}", REINDEX_ASL.read_text(encoding="utf-8")))
    assert placeholders == set(sm["DefinitionSubstitutions"])
