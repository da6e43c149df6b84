"""template.yaml's VectorEngine (edge-s3, the default, or qdrant): with edge-s3 no QdrantUrl is
needed; the functions that open the index read the snapshot bucket's ``snapshots/*`` and the
pointer item and nothing more, the three sync writers also publish (put, tag, list under the
prefix) and hold the lease (put, delete, condition check on the table), no other role touches
either; retired snapshots expire by the bucket's lifecycle rule on the very tag the adapter
writes; with qdrant none of this is granted and QdrantUrl is required."""

from __future__ import annotations

import re
from typing import Any

import pytest
from support.template import (
    ALL_SET_PARAMETERS,
    REQUIRED_PARAMETERS,
    as_list,
    failed_assertions,
    sam_transform,
    statements,
)

from agentic_search.adapters.s3_snapshots import PREFIX, RETIRED_TAG

READERS = {
    "ExtractIntentFunction",
    "RetrieveFunction",
    "FuseRerankFunction",
    "FinalizeFunction",
    "McpFunction",  # get_record and compare read records
}
WRITERS = {"CatalogSyncFunction", "SyncRedriveFunction", "ReindexBatchFunction"}
OBJECTS = {"Fn::Sub": "${SnapshotBucket.Arn}/snapshots/*"}
TABLE = {"Fn::GetAtt": ["SnapshotTable", "Arn"]}
BUCKET = {"Fn::GetAtt": ["SnapshotBucket", "Arn"]}
READ = {("s3:GetObject", str(OBJECTS)), ("dynamodb:GetItem", str(TABLE))}
WRITE = {
    *(("s3:" + a, str(OBJECTS)) for a in ("GetObject", "PutObject", "PutObjectTagging")),
    ("s3:AbortMultipartUpload", str(OBJECTS)),
    ("s3:ListBucket", str(BUCKET)),
    *(("dynamodb:" + a, str(TABLE)) for a in ("GetItem", "PutItem", "DeleteItem")),
    ("dynamodb:ConditionCheckItem", str(TABLE)),
}


def snapshot_grants(deployed: dict[str, Any]) -> dict[str, set[tuple[str, str]]]:
    """Role -> (action, resource) of every statement naming the snapshot bucket or table."""
    out: dict[str, set[tuple[str, str]]] = {}
    for where, statement in statements(deployed):
        resources = as_list(statement["Resource"])
        if not any("Snapshot" in str(r) for r in resources):
            continue
        role = where.split("/")[0]
        for action in as_list(statement["Action"]):
            for resource in resources:
                out.setdefault(role, set()).add((action, str(resource)))
        if "s3:ListBucket" in as_list(statement["Action"]):
            assert statement["Condition"] == {"StringLike": {"s3:prefix": f"{PREFIX}*"}}
    return out


def environment(deployed: dict[str, Any], function: str) -> dict[str, Any]:
    return deployed["Resources"][function]["Properties"]["Environment"]["Variables"]


def test_edge_s3_is_the_default_and_needs_no_qdrant_url(template, region):
    assert REQUIRED_PARAMETERS == {}
    assert failed_assertions(template, {}) == []
    deployed = sam_transform(template, {})
    for fn in READERS | WRITERS:
        env = environment(deployed, fn)
        assert env["VECTOR_STORE"] == "edge-s3" and "QDRANT_URL" not in env, fn
        assert env["SNAPSHOT_BUCKET"] == {"Ref": "SnapshotBucket"}, fn
        assert env["SNAPSHOT_TABLE"] == {"Ref": "SnapshotTable"}, fn
        assert env.get("SNAPSHOT_ROLE") == ("writer" if fn in WRITERS else None), fn
        storage = deployed["Resources"][fn]["Properties"]["EphemeralStorage"]["Size"]
        assert storage >= 2048, fn


def test_readers_read_writers_publish_and_no_other_role_touches_the_snapshots(template, region):
    grants = snapshot_grants(sam_transform(template, {}))
    assert set(grants) == {f"{f}Role" for f in READERS | WRITERS}
    for fn in READERS:
        assert grants[f"{fn}Role"] == READ, fn
    for fn in WRITERS:
        assert grants[f"{fn}Role"] == WRITE, fn


def test_the_qdrant_engine_grants_nothing_on_snapshots_and_needs_its_url(template, region):
    deployed = sam_transform(template, ALL_SET_PARAMETERS)
    assert snapshot_grants(deployed) == {}
    env = environment(deployed, "RetrieveFunction")
    assert env["QDRANT_URL"] == {"Ref": "QdrantUrl"} and "VECTOR_STORE" not in env
    failed = failed_assertions(template, {"VectorEngine": "qdrant"})
    assert any("VectorEngine qdrant needs QdrantUrl" in f for f in failed), failed
    failed = failed_assertions(template, {"QdrantUrl": "https://qdrant.example.com"})
    assert any("QdrantUrl is used only with VectorEngine qdrant" in f for f in failed), failed


def test_retired_snapshots_expire_by_the_tag_the_writer_puts_on_them(template):
    bucket = template["Resources"]["SnapshotBucket"]["Properties"]
    rules = {r["Id"]: r for r in bucket["LifecycleConfiguration"]["Rules"]}
    expire = rules["ExpireRetiredSnapshots"]
    assert expire["Status"] == "Enabled" and expire["ExpirationInDays"] == 1
    assert expire["TagFilters"] == [RETIRED_TAG]
    abort = rules["AbortIncompleteSnapshotUploads"]["AbortIncompleteMultipartUpload"]
    assert abort == {"DaysAfterInitiation": 1}
    assert bucket["PublicAccessBlockConfiguration"]["BlockPublicPolicy"] is True
    policy = template["Resources"]["SnapshotBucketPolicy"]["Properties"]["PolicyDocument"]
    [tls] = policy["Statement"]
    assert tls["Effect"] == "Deny" and tls["Condition"] == {"Bool": {"aws:SecureTransport": False}}


# ----- RerankModel (Bedrock Rerank in FuseRerank) ----------------------------------------------

RERANK_ARN = "arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/${RerankModel}"


def rerank_grants(deployed: dict[str, Any]) -> dict[str, list[tuple[list[str], list[Any]]]]:
    """Role -> (actions, resources) of every statement with a bedrock action that is not an
    embedding or LLM grant (those name BedrockEmbeddingModel or LlmModelId)."""
    out: dict[str, list[tuple[list[str], list[Any]]]] = {}
    for where, statement in statements(deployed):
        actions = as_list(statement["Action"])
        resources = as_list(statement["Resource"])
        if not any(a.startswith("bedrock:") for a in actions):
            continue
        if any("EmbeddingModel" in str(r) or "LlmModelId" in str(r) for r in resources):
            continue
        out.setdefault(where.split("/")[0], []).append((actions, resources))
    return out


@pytest.mark.parametrize("model", ["amazon.rerank-v1:0", "cohere.rerank-v3-5:0"])
def test_rerank_model_grants_fuse_rerank_that_model_and_names_it_to_the_cache_key(
    template, region, model
):
    deployed = sam_transform(template, {"RerankModel": model})
    grants = rerank_grants(deployed)
    assert grants == {
        "FuseRerankFunctionRole": [
            (["bedrock:InvokeModel"], [{"Fn::Sub": RERANK_ARN}]),
            (["bedrock:Rerank"], ["*"]),
        ]
    }
    for fn in ("FuseRerankFunction", "CacheCheckFunction", "PlanQueryFunction"):
        assert environment(deployed, fn)["BEDROCK_RERANK_MODEL"] == {"Ref": "RerankModel"}, fn
    assert "BEDROCK_RERANK_MODEL" not in environment(deployed, "RetrieveFunction")


@pytest.mark.parametrize(
    ("region_name", "partition"),
    [("us-east-1", "aws"), ("cn-north-1", "aws-cn"), ("us-gov-west-1", "aws-us-gov")],
)
@pytest.mark.parametrize("model", ["amazon.rerank-v1:0", "cohere.rerank-v3-5:0"])
def test_the_rerank_grant_is_the_arn_the_adapter_sends_and_rerank_alone_is_on_star(
    template, region, model, region_name, partition
):
    # The model is scoped where IAM can scope it: bedrock:InvokeModel on the one foundation-model
    # ARN, the very modelArn the adapter puts in its Rerank request (any other model is refused).
    # bedrock:Rerank itself has no resource type in the Service Authorization Reference
    # ("Actions defined by Amazon Bedrock": Rerank lists none, and no condition key), so a
    # statement naming the model's ARN would never match the request and Rerank would be
    # denied; it is granted on "*" in a statement of its own, with no other action.
    from agentic_search.adapters.bedrock_rerank import model_arn

    deployed = sam_transform(template, {"RerankModel": model})
    [(invoke, [scoped]), (rerank, star)] = rerank_grants(deployed)["FuseRerankFunctionRole"]
    assert invoke == ["bedrock:InvokeModel"] and rerank == ["bedrock:Rerank"] and star == ["*"]
    values = {"AWS::Partition": partition, "AWS::Region": region_name, "RerankModel": model}
    resolved = re.sub(r"\$\{([^}]+)\}", lambda m: values[m.group(1)], scoped["Fn::Sub"])
    assert resolved == model_arn(model, region_name)


def test_no_rerank_model_grants_no_rerank(template, region):
    assert template["Parameters"]["RerankModel"]["Default"] == ""
    deployed = sam_transform(template, {})
    assert rerank_grants(deployed) == {}
    assert "BEDROCK_RERANK_MODEL" not in environment(deployed, "FuseRerankFunction")


def test_reindex_batches_waiting_for_the_lease_are_retried_by_the_map():
    # the Distributed Map runs batches in parallel; each writes under the one lease, so a batch
    # that waited past SNAPSHOT_LEASE_WAIT_S fails with SnapshotBusy (Lambda's errorType is the
    # exception's class name) and the Map tries it again, instead of counting it failed
    import json

    from support.paths import REPO

    from agentic_search.ports import SnapshotBusy

    asl = json.loads((REPO / "statemachine" / "reindex.asl.json").read_text())
    [state] = [s for s in asl["States"].values() if s["Type"] == "Map"]
    task = state["ItemProcessor"]["States"]["ReindexBatch"]
    [busy] = [r for r in task["Retry"] if r["ErrorEquals"] == [SnapshotBusy.__name__]]
    assert busy["MaxAttempts"] >= 10 and busy["MaxDelaySeconds"] <= 60
