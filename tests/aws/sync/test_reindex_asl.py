"""statemachine/reindex.asl.json run by moto's Step Functions interpreter over a small JSONL
export in moto S3, with ReindexBatchFunction run in-process by its real handler (moto runs
Lambda code in Docker, which this machine lacks: ``LambdaFunction._invoke_lambda`` is the seam,
as in tests/statemachine/test_search_asl.py).

moto 5.2.5's interpreter lags the ASL in two places, bridged here and nowhere else:
* ``ReaderConfig.InputType: JSONL`` is unknown to it: the test teaches its ItemReader to split
  the object into lines (what Step Functions does);
* its grammar has no ``ItemBatcher``: the definition run here drops it, so each child gets one
  record; the batch shape ReindexBatch receives in AWS (``{"Items": [...], "BatchInput"}``) is
  replayed from events/sync/reindex_batch.json below.

GIVEN a JSONL export of catalog records, WHEN the reindex runs, THEN every record is in the
index with its payload, and a bad line fails its own batch only. (moto does not enforce
ToleratedFailurePercentage; tests/sync/test_sync_template.py checks the ASL declares it.)
"""

from __future__ import annotations

import copy
import io
import json
import zipfile
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.awslambda.models import LambdaFunction
from moto.stepfunctions.parser.asl.component.state.exec.state_map.item_reader import (
    item_reader_decl,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.item_reader.eval.resource_output_transformer.transformer_json import (  # noqa: E501
    ResourceOutputTransformerJson,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.item_reader.reader_config.input_type import (  # noqa: E501
    InputType,
)
from support import lambdas
from support.aws import REGION, FakeContext, wait_for_execution
from support.lambdas import invoke_serialized, load_function, runtime_over
from support.paths import REPO

from agentic_search.wire import INTERNAL_KEYS
from agentic_search_lambda import runtime as lambda_runtime

ASL = REPO / "statemachine" / "reindex.asl.json"


class _JsonlTransformer(ResourceOutputTransformerJson):
    """JSONL object -> the list of its lines' values, then moto's JSON item handling."""

    def _eval_body(self, env: Any) -> None:
        reader_config = env.stack.pop()
        text = env.stack.pop()
        items = [json.loads(line) for line in text.splitlines() if line.strip()]
        env.stack.append(json.dumps(items))
        env.stack.append(reader_config)
        super()._eval_body(env)


@pytest.fixture()
def moto_jsonl(monkeypatch: pytest.MonkeyPatch) -> None:
    original_init = InputType.__init__
    original_for = item_reader_decl.resource_output_transformer_for

    def init(self: InputType, input_type: str) -> None:
        if input_type == "JSONL":
            self.input_type_value = "JSONL"  # type: ignore[assignment]
        else:
            original_init(self, input_type)

    def transformer_for(input_type: InputType) -> Any:
        if input_type.input_type_value == "JSONL":
            return _JsonlTransformer()
        return original_for(input_type)

    monkeypatch.setattr(InputType, "__init__", init)
    monkeypatch.setattr(item_reader_decl, "resource_output_transformer_for", transformer_for)


def definition_for_moto(function_arn: str) -> str:
    asl = json.loads(ASL.read_text(encoding="utf-8"))
    asl["States"]["ReindexAll"].pop("ItemBatcher")
    text = json.dumps(asl).replace("${ReindexBatchFunctionArn}", function_arn)
    return text.replace("${CatalogExportBucketName}", "exports")


@pytest.fixture()
def reindex(moto_jsonl, aws, sync_engine, monkeypatch):
    """(stepfunctions client, state machine ARN, s3 client); ReindexBatch over sync_engine."""
    rt = runtime_over(sync_engine)
    monkeypatch.setattr(lambda_runtime, "_runtime", rt)
    module = load_function("reindex_batch")

    def invoke(self: LambdaFunction, event: Any = None) -> tuple[str, bool, str]:
        payload = json.loads(event) if isinstance(event, str | bytes) else event
        try:
            return json.dumps(invoke_serialized(module.handler, payload, FakeContext())), False, ""
        except Exception as exc:
            body = {"errorType": type(exc).__name__, "errorMessage": str(exc)}
            return json.dumps(body), True, ""

    monkeypatch.setattr(LambdaFunction, "_invoke_lambda", invoke)
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        iam = boto3.client("iam", region_name=REGION)
        role = iam.create_role(RoleName="reindex", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        code = io.BytesIO()
        with zipfile.ZipFile(code, "w") as zf:
            zf.writestr("app.py", "def handler(event, context):\n    return event\n")
        arn = boto3.client("lambda", region_name=REGION).create_function(
            FunctionName="reindex-batch",
            Runtime="python3.12",
            Role=role,
            Handler="app.handler",
            Code={"ZipFile": code.getvalue()},
        )["FunctionArn"]
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket="exports")
        sfn = boto3.client("stepfunctions", region_name=REGION)
        machine = sfn.create_state_machine(
            name="reindex", definition=definition_for_moto(arn), roleArn=role, type="STANDARD"
        )["stateMachineArn"]
        yield sfn, machine, s3


def run(sfn, machine: str, key: str) -> dict:
    ex = sfn.start_execution(
        stateMachineArn=machine, input=json.dumps({"bucket": "exports", "key": key})
    )["executionArn"]
    return wait_for_execution(sfn, ex)


def export(s3, key: str, lines: list[str]) -> None:
    s3.put_object(Bucket="exports", Key=key, Body="\n".join(lines).encode() + b"\n")


def test_the_reindex_puts_every_exported_record_in_the_index(reindex, sync_engine, catalog_records):
    sfn, machine, s3 = reindex
    records = copy.deepcopy(catalog_records[4:10])  # not yet in the index
    records[0]["price_monthly_usd"] = 999  # and one that differs from the bundled catalog
    export(s3, "exports/tools.jsonl", [json.dumps(r) for r in records])
    out = run(sfn, machine, "exports/tools.jsonl")
    assert out["status"] == "SUCCEEDED", out
    points = sync_engine.deps.store.retrieve_records(sync_engine.schema, [r["id"] for r in records])
    assert set(points) == {r["id"] for r in records}
    for r in records:
        payload = {k: v for k, v in points[r["id"]].payload.items() if k not in INTERNAL_KEYS}
        assert payload == sync_engine.schema.validate_record(r)


def test_a_bad_line_fails_its_batch_alone(reindex, sync_engine, catalog_records):
    sfn, machine, s3 = reindex
    exported = catalog_records[2:7]  # 2 already indexed, 3 new
    lines = [json.dumps(r) for r in exported]
    export(s3, "bad.jsonl", [*lines[:4], json.dumps({"id": "x-broken"}), *lines[4:]])
    out = run(sfn, machine, "bad.jsonl")
    # moto records ToleratedFailurePercentage but does not enforce it (in AWS, 1 failed batch
    # of 6 is over the 5 % tolerated and fails the run, which ReindexFailedAlarm reports);
    # what holds in both: the map run counts one failed batch, and the others applied.
    assert out["status"] in ("SUCCEEDED", "FAILED")
    [run_] = sfn.list_map_runs(executionArn=out["executionArn"])["mapRuns"]
    counts = sfn.describe_map_run(mapRunArn=run_["mapRunArn"])["itemCounts"]
    assert (counts["total"], counts["succeeded"], counts["failed"]) == (6, 5, 1)
    ids = [r["id"] for r in exported]
    assert len(sync_engine.deps.store.retrieve_records(sync_engine.schema, ids)) == 5


def test_the_batch_handler_takes_the_item_batcher_shape(aws, sync_engine, monkeypatch):

    monkeypatch.setattr(lambda_runtime, "_runtime", runtime_over(sync_engine))
    module = load_function("reindex_batch")
    out = module.handler(load_event("reindex_batch.json"), FakeContext())
    assert out["records"] == 2 and out["outcomes"] == {"applied": 2}
    bad = load_event("reindex_batch.json")
    bad["Items"].append({"id": "broken"})
    from agentic_search_lambda.reindex import ReindexBatchFailed

    with pytest.raises(ReindexBatchFailed, match="item 2"):
        module.handler(bad, FakeContext())


def load_event(name: str) -> dict:
    """A fresh copy of ``events/sync/<name>``."""
    return lambdas.load_event(f"sync/{name}")
