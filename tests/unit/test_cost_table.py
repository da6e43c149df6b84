"""benchmarks/cost/cost.py: the command run on a small input (a two-function template, two
measured searches, a sync batch, a price list), every figure it prints recomputed here from
those inputs by the pricing rules its module doc states."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.paths import REPO

SPEC = importlib.util.spec_from_file_location(
    "benchmarks_cost", REPO / "benchmarks" / "cost" / "cost.py"
)
assert SPEC and SPEC.loader
cost = importlib.util.module_from_spec(SPEC)
sys.modules[SPEC.name] = cost  # dataclasses look their module up
SPEC.loader.exec_module(cost)

TEMPLATE = {
    "Globals": {
        "Function": {
            "MemorySize": 1024,
            "Architectures": ["x86_64"],
            "EphemeralStorage": {"Size": 2048},
        }
    },
    "Resources": {
        "RetrieveFunction": {
            "Type": "AWS::Serverless::Function",
            "Properties": {"MemorySize": 2048},
        },
        "FinalizeFunction": {
            "Type": "AWS::Serverless::Function",
            "Properties": {"MemorySize": 512, "Architectures": ["arm64"]},
        },
        "SearchApiFunction": {"Type": "AWS::Serverless::Function", "Properties": {}},
        "CatalogSyncFunction": {"Type": "AWS::Serverless::Function", "Properties": {}},
        "Alarm": {"Type": "AWS::CloudWatch::Alarm", "Properties": {}},
        "QdrantAlarm": {
            "Type": "AWS::CloudWatch::Alarm",
            "Condition": "UseQdrant",
            "Properties": {},
        },
    },
}
ONE_ROUND = [
    {"function": "RetrieveFunction", "ms": 120.4},
    {"function": "RetrieveFunction", "ms": 80.0},
    {"function": "FinalizeFunction", "ms": 33.0},
]
THREE_ROUND = [
    *ONE_ROUND,
    {"function": "RetrieveFunction", "ms": 250.0},
    {"function": "FinalizeFunction", "ms": 10.2},
]
REQUESTS = {
    "s3:GetObject": 2,
    "s3:PutObject": 1,
    "dynamodb:RRU": 7.0,
    "dynamodb:WRU": 46.0,
    "dynamodb:RRU@snapshot-pointers": 6.0,
}
MEASURED = {
    "archive_bytes": 3_000_000,
    "points": 1000,
    "dense_dims_per_point": 1536,
    "status_table_bytes": 500_000,
    "search": {
        "queries": {
            "short": {"rounds": [1], "wall_s": 0.3, "invocations": ONE_ROUND, "requests": REQUESTS},
            "long": {
                "rounds": [3],
                "wall_s": 0.9,
                "invocations": THREE_ROUND,
                "requests": REQUESTS,
            },
        }
    },
    "sync": {"load_before": 3.0, "modify-1": {"handler_s": 1.2345, "requests": REQUESTS}},
}
PRICES = json.loads((REPO / "benchmarks" / "cost" / "prices.json").read_text(encoding="utf-8"))


def lam(ms: float, memory: int, arch: str = "x86_64", tmp_mb: int = 2048) -> float:
    p = PRICES["lambda"]
    s = math.ceil(ms) / 1000  # 1 ms granularity
    return (
        p["request"]
        + s * memory / 1024 * p["gb_second"][arch]
        + s * (tmp_mb - 512) / 1024 * p["ephemeral_gb_second"]
    )


def express(ms: float) -> float:
    p = PRICES["step_functions_express"]
    return p["request"] + math.ceil(ms / 100) * 0.1 * 64 / 1024 * p["gb_second"]


def requests(engine: str) -> float:
    s3 = 2 * PRICES["s3"]["get_class_request"] + PRICES["s3"]["put_class_request"]
    ddb = PRICES["dynamodb_on_demand"]
    rru = 7.0 - (6.0 if engine == "qdrant" else 0.0)
    return (
        (s3 if engine == "edge-s3" else 0.0)
        + rru * ddb["read_request_unit"]
        + 46.0 * ddb["write_request_unit"]
    )


def expected_search(invocations: list[dict[str, Any]], engine: str) -> float:
    memory = {"RetrieveFunction": (2048, "x86_64"), "FinalizeFunction": (512, "arm64")}
    steps = sum(lam(i["ms"], *memory[i["function"]]) for i in invocations)
    # the Map: consecutive Retrieve invocations count once, the longest
    duration = max(120.4, 80.0) + 33.0 + (250.0 + 10.2 if len(invocations) > 3 else 0.0)
    fixed = PRICES["api_gateway_http"]["request"] + PRICES["xray"]["trace_recorded"]
    return steps + lam(duration, 1024) + express(duration) + fixed + requests(engine)


@pytest.fixture()
def inputs(tmp_path: Path) -> dict[str, Path]:
    files = {
        "template": tmp_path / "template.yaml",
        "measured": tmp_path / "measured.json",
        "prices": tmp_path / "prices.json",
    }
    files["template"].write_text(yaml.safe_dump(TEMPLATE), encoding="utf-8")
    files["measured"].write_text(json.dumps(MEASURED), encoding="utf-8")
    files["prices"].write_text(json.dumps(PRICES), encoding="utf-8")
    return files


def run(inputs: dict[str, Path], capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    args = [f"--{k}={v}" for k, v in inputs.items()]
    assert cost.main([*args, *extra]) == 0
    return capsys.readouterr().out


def test_the_json_line_items_are_the_pricing_rules_applied_to_the_inputs(inputs, capsys):
    rep = json.loads(run(inputs, capsys, "--json"))
    one, three = rep["per_1000_searches"]["one-round"], rep["per_1000_searches"]["three-round"]
    assert (one["query"], three["query"]) == ("short", "long")
    for engine in ("edge-s3", "qdrant"):
        assert one[engine]["total"] == pytest.approx(1000 * expected_search(ONE_ROUND, engine))
        assert three[engine]["total"] == pytest.approx(1000 * expected_search(THREE_ROUND, engine))
    assert one["edge-s3"]["execution_ms"] == pytest.approx(153.4)
    # idle: edge-s3 stores the snapshot; qdrant runs the smallest host that holds 1,000 x 1,536
    # float32 x 1.5 + 0.5 GiB, and one more alarm (its condition holds)
    hours = PRICES["hours_per_month"]
    alarm = PRICES["cloudwatch"]["alarm_month"]
    status = 500_000 / 1e9 * PRICES["dynamodb_on_demand"]["storage_gb_month"]
    snapshot = 3_000_000 / 1e9 * PRICES["s3"]["storage_gb_month"]
    assert rep["idle_month"]["edge-s3"]["total"] == pytest.approx(alarm + status + snapshot)
    hosts = PRICES["qdrant_hosts"]
    need = 1000 * 1536 * 4 * hosts["memory_factor"] / 2**30 + hosts["process_overhead_gib"]
    smallest = min(
        (h for h in hosts["instances"] if h["memory_gib"] >= need), key=lambda h: h["memory_gib"]
    )
    host = smallest["hourly"] * hours + hosts["volume_gb"] * hosts["volume_gb_month"]
    assert rep["idle_month"]["qdrant"]["total"] == pytest.approx(2 * alarm + status + host)
    os_ = PRICES["opensearch_serverless"]
    floor = rep["opensearch_serverless_kb_idle_month"]
    assert floor["redundant"] == pytest.approx(os_["min_ocu_redundant"] * os_["ocu_hour"] * hours)
    assert floor["dev_test"] == pytest.approx(os_["min_ocu_dev_test"] * os_["ocu_hour"] * hours)
    # a sync batch: CatalogSync's invocation (1,235 ms billed) and its requests
    batch = rep["per_sync_batch"]["modify-1"]
    assert batch["total"] == pytest.approx(lam(1234.5, 1024) + requests("edge-s3"))


def test_the_printed_table_carries_the_same_figures(inputs, capsys):
    rep = json.loads(run(inputs, capsys, "--json"))
    text = run(inputs, capsys)
    one = rep["per_1000_searches"]["one-round"]
    assert f"${one['edge-s3']['total']:.4f} | ${one['qdrant']['total']:.4f}" in text
    assert f"${rep['idle_month']['edge-s3']['total']:.2f}" in text
    assert f"${rep['opensearch_serverless_kb_idle_month']['redundant']:.2f}" in text
    assert PRICES["as_of"] in text


def test_cpu_scale_stretches_each_step_by_its_share_of_a_vcpu(inputs, capsys):
    plain = json.loads(run(inputs, capsys, "--json"))["per_1000_searches"]["one-round"]
    scaled = json.loads(run(inputs, capsys, "--json", "--cpu-scale"))["per_1000_searches"]
    full = PRICES["lambda"]["full_vcpu_mb"]
    # Retrieve (2048 MB) is not stretched; Finalize (512 MB) by 1769 / 512
    assert scaled["one-round"]["edge-s3"]["execution_ms"] == pytest.approx(
        120.4 + 33.0 * full / 512
    )
    assert scaled["one-round"]["edge-s3"]["total"] > plain["edge-s3"]["total"]


def test_a_catalog_larger_than_every_listed_host_is_refused():
    with pytest.raises(ValueError, match="no listed Qdrant host"):
        cost.qdrant_host(10**9, 1536, PRICES)
