"""What a search costs: dollars per 1,000 searches and per idle month, for ``VectorEngine=edge-s3``
and ``qdrant`` (with the smallest host its collection needs), beside the idle floor of a Bedrock
Knowledge Base on OpenSearch Serverless.

Inputs, each a file: the template (each function's ``MemorySize``, ``Architectures`` and
``EphemeralStorage``, Globals' when it has none; its CloudWatch alarms), the measurements of
``measure.py`` (per-function durations of each measured search, in order; the S3 and DynamoDB
requests and request units per search and per sync batch; the snapshot's size, the catalog's
points and dimensions) and the list prices of ``prices.json`` (each with its source and date).

Per search: every Lambda invocation (request + GB-seconds of its measured duration, rounded up
to the billing granularity, at its memory and architecture, + the ephemeral storage above the
free 512 MB), the SearchApi function that waits for the execution (its duration: the
execution's), the Express execution (request + its duration, rounded up to 100 ms, over the
sequential states: a Map's Retrieve invocations count once, the longest; at one 64 MB memory
chunk), the HTTP API request, the S3 requests by class, DynamoDB's request units and an X-Ray
trace. ``qdrant``: the same Lambda, Step Functions and API work (the measured durations are
the Edge engine's), without the snapshot's S3 requests and pointer reads. Idle month: what
bills while nobody searches: the alarms, the stored snapshot (edge-s3), the sync status table,
the Qdrant host (qdrant), the OpenSearch Serverless collection's minimum OCUs.

``--cpu-scale``: durations multiplied by max(1, full_vcpu_mb / memory) (Lambda gives a function
CPU in proportion to its memory, one vCPU at 1,769 MB), a pessimistic bound for CPU-bound steps;
off by default, since the measured durations come from a shared machine already.

    python benchmarks/cost/cost.py                       # the table (benchmarks/cost/*.json)
    python benchmarks/cost/cost.py --json                # every line item
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from built_sizes import _CfnLoader, engine_conditions  # noqa: E402

SNAPSHOT_TABLE = "snapshot-pointers"  # measure.py's name for the template's SnapshotTable
GIB = 2**30


@dataclass(frozen=True)
class FunctionConfig:
    """A function's billing shape from the template: memory (MB), architecture, ``/tmp`` (MB)."""

    memory_mb: int
    architecture: str
    ephemeral_mb: int


def load_template(path: Path) -> dict[str, Any]:
    """The template as plain data (CloudFormation's short tags kept as ``{"Ref": ...}``)."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_CfnLoader)


def function_configs(template: dict[str, Any]) -> dict[str, FunctionConfig]:
    """Function logical id -> its :class:`FunctionConfig` (its own properties, else Globals')."""
    glob = template.get("Globals", {}).get("Function", {})
    out = {}
    for name, res in template.get("Resources", {}).items():
        if res.get("Type") != "AWS::Serverless::Function":
            continue
        props = res.get("Properties", {})
        arch = props.get("Architectures", glob.get("Architectures", ["x86_64"]))[0]
        storage = props.get("EphemeralStorage", glob.get("EphemeralStorage", {"Size": 512}))
        out[name] = FunctionConfig(
            int(props.get("MemorySize", glob.get("MemorySize", 128))), arch, int(storage["Size"])
        )
    return out


def alarm_count(template: dict[str, Any], engine: str) -> int:
    """The template's CloudWatch alarms a stack of ``engine`` creates (an alarm under another
    condition than the engine's counts: it may be created)."""
    conditions = engine_conditions(engine)
    return sum(
        1
        for res in template.get("Resources", {}).values()
        if res.get("Type") == "AWS::CloudWatch::Alarm"
        and conditions.get(res.get("Condition", ""), True)
    )


def lambda_cost(ms: float, config: FunctionConfig, prices: dict[str, Any]) -> float:
    """One invocation of ``ms`` milliseconds: request + compute + ephemeral storage (USD)."""
    p = prices["lambda"]
    step = p["billing_granularity_ms"]
    seconds = math.ceil(ms / step) * step / 1000
    compute = seconds * config.memory_mb / 1024 * p["gb_second"][config.architecture]
    extra_gb = max(0, config.ephemeral_mb - p["ephemeral_free_mb"]) / 1024
    return p["request"] + compute + seconds * extra_gb * p["ephemeral_gb_second"]


def execution_ms(invocations: list[dict[str, Any]]) -> float:
    """The Express execution's duration from its invocations in order: a run of consecutive
    RetrieveFunction invocations is one Map state (its items run in parallel: the longest)."""
    total, run = 0.0, 0.0
    for inv in invocations:
        if inv["function"] == "RetrieveFunction":
            run = max(run, inv["ms"])
            continue
        total += run + inv["ms"]
        run = 0.0
    return total + run


def express_cost(ms: float, prices: dict[str, Any]) -> float:
    """One Express execution of ``ms`` ms: request + duration at one memory chunk (USD)."""
    p = prices["step_functions_express"]
    step = p["billing_granularity_ms"]
    seconds = math.ceil(ms / step) * step / 1000
    return p["request"] + seconds * p["memory_chunk_mb"] / 1024 * p["gb_second"]


def request_cost(requests: dict[str, float], prices: dict[str, Any], engine: str) -> dict:
    """S3 and DynamoDB charges of measured requests (USD), by service; ``qdrant`` leaves out
    the snapshot's: every S3 request and the snapshot table's request units."""
    s3p, ddb = prices["s3"], prices["dynamodb_on_demand"]
    s3 = 0.0
    if engine == "edge-s3":
        for op in s3p["put_class"]:
            s3 += requests.get(f"s3:{op}", 0) * s3p["put_class_request"]
        for op in s3p["get_class"]:
            s3 += requests.get(f"s3:{op}", 0) * s3p["get_class_request"]
    rru, wru = requests.get("dynamodb:RRU", 0.0), requests.get("dynamodb:WRU", 0.0)
    if engine == "qdrant":
        rru -= requests.get(f"dynamodb:RRU@{SNAPSHOT_TABLE}", 0.0)
        wru -= requests.get(f"dynamodb:WRU@{SNAPSHOT_TABLE}", 0.0)
    dynamo = rru * ddb["read_request_unit"] + wru * ddb["write_request_unit"]
    return {"s3": s3, "dynamodb": dynamo}


def search_cost(
    search: dict[str, Any],
    configs: dict[str, FunctionConfig],
    prices: dict[str, Any],
    engine: str,
    cpu_scale: bool = False,
) -> dict[str, float]:
    """Line items (USD) of one measured search (``measured["search"]["queries"][q]``)."""
    full = prices["lambda"]["full_vcpu_mb"]
    invocations = []
    for inv in search["invocations"]:
        config = configs[inv["function"]]
        scale = max(1.0, full / config.memory_mb) if cpu_scale else 1.0
        invocations.append({"function": inv["function"], "ms": inv["ms"] * scale})
    steps = sum(lambda_cost(i["ms"], configs[i["function"]], prices) for i in invocations)
    duration = execution_ms(invocations)
    api_function = lambda_cost(duration, configs["SearchApiFunction"], prices)
    requests = request_cost(search["requests"], prices, engine)
    out = {
        "lambda_steps": steps,
        "lambda_search_api": api_function,
        "step_functions": express_cost(duration, prices),
        "api_gateway": prices["api_gateway_http"]["request"],
        "s3": requests["s3"],
        "dynamodb": requests["dynamodb"],
        "xray": prices["xray"]["trace_recorded"] * prices["xray"]["traces_per_search"],
    }
    out["total"] = sum(out.values())
    out["execution_ms"] = duration
    out["invocations"] = len(invocations)
    return out


def qdrant_host(points: int, dims: int, prices: dict[str, Any]) -> dict[str, Any]:
    """The smallest host of ``prices["qdrant_hosts"]`` whose memory holds ``points`` vectors
    of ``dims`` float32 dimensions in all (Qdrant's capacity planning: vectors × dims × 4 B ×
    1.5) plus the process's overhead, and its month (instance + volume, USD).

    Raises:
        ValueError: when no listed host is large enough.
    """
    q = prices["qdrant_hosts"]
    need = points * dims * 4 * q["memory_factor"] / GIB + q["process_overhead_gib"]
    for host in sorted(q["instances"], key=lambda h: h["memory_gib"]):
        if host["memory_gib"] >= need:
            month = (
                host["hourly"] * prices["hours_per_month"] + q["volume_gb"] * q["volume_gb_month"]
            )
            return {
                "name": host["name"],
                "memory_gib": host["memory_gib"],
                "need_gib": need,
                "month": month,
            }
    raise ValueError(f"no listed Qdrant host has {need:.1f} GiB of memory")


def idle_month(
    engine: str, measured: dict[str, Any], template: dict[str, Any], prices: dict[str, Any]
) -> dict[str, float]:
    """Line items (USD) of a month with no search and no sync."""
    gb = 1e9  # AWS storage prices are per GB (10**9 bytes)
    out = {
        "alarms": alarm_count(template, engine) * prices["cloudwatch"]["alarm_month"],
        "dynamodb_storage": measured["status_table_bytes"]
        / gb
        * prices["dynamodb_on_demand"]["storage_gb_month"],
    }
    if engine == "edge-s3":
        out["s3_snapshot"] = measured["archive_bytes"] / gb * prices["s3"]["storage_gb_month"]
    else:
        host = qdrant_host(measured["points"], measured["dense_dims_per_point"], prices)
        out[f"qdrant_host ({host['name']})"] = host["month"]
    out["total"] = sum(out.values())
    return out


def opensearch_floor(prices: dict[str, Any]) -> dict[str, float]:
    """The idle month of an OpenSearch Serverless vector collection at its minimum OCUs (USD):
    redundant (production) and dev/test."""
    p = prices["opensearch_serverless"]
    hours = prices["hours_per_month"]
    return {
        "redundant": p["min_ocu_redundant"] * p["ocu_hour"] * hours,
        "dev_test": p["min_ocu_dev_test"] * p["ocu_hour"] * hours,
    }


def sync_cost(
    batch: dict[str, Any], configs: dict[str, FunctionConfig], prices: dict[str, Any]
) -> dict[str, float]:
    """Line items (USD) of one measured stream batch (CatalogSync's invocation, its requests)."""
    fn = lambda_cost(batch["handler_s"] * 1000, configs["CatalogSyncFunction"], prices)
    requests = request_cost(batch["requests"], prices, "edge-s3")
    out = {"lambda": fn, **requests}
    out["total"] = sum(out.values())
    return out


def _search_kinds(measured: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """'one-round' and 'three-round' (or the most rounds measured) -> (query, measurement)."""
    queries = measured["search"]["queries"]
    by_rounds = sorted(queries.items(), key=lambda kv: (max(kv[1]["rounds"]), kv[1]["wall_s"]))
    one = next((kv for kv in by_rounds if max(kv[1]["rounds"]) == 1), by_rounds[0])
    most = by_rounds[-1]
    rounds = max(most[1]["rounds"])
    name = {1: "one-round", 2: "two-round", 3: "three-round"}.get(rounds, f"{rounds}-round")
    return {"one-round": one, name: most}


def report(
    template: dict[str, Any],
    measured: dict[str, Any],
    prices: dict[str, Any],
    cpu_scale: bool = False,
) -> dict[str, Any]:
    """Every figure of the table: per 1,000 searches by kind and engine, per idle month by
    engine, the OpenSearch floor, per sync batch."""
    configs = function_configs(template)
    out: dict[str, Any] = {"prices_as_of": prices["as_of"], "region": prices["region"]}
    out["per_1000_searches"] = {}
    for kind, (query, search) in _search_kinds(measured).items():
        row = {"query": query, "rounds": search["rounds"]}
        for engine in ("edge-s3", "qdrant"):
            items = search_cost(search, configs, prices, engine, cpu_scale)
            row[engine] = {
                k: v * 1000 if k not in ("execution_ms", "invocations") else v
                for k, v in items.items()
            }
        out["per_1000_searches"][kind] = row
    out["idle_month"] = {
        engine: idle_month(engine, measured, template, prices) for engine in ("edge-s3", "qdrant")
    }
    out["opensearch_serverless_kb_idle_month"] = opensearch_floor(prices)
    out["per_sync_batch"] = {
        kind: sync_cost(batch, configs, prices)
        for kind, batch in measured["sync"].items()
        if isinstance(batch, dict)
    }
    return out


def table(rep: dict[str, Any]) -> str:
    """The report as a markdown table (dollars)."""
    lines = [
        f"List prices of {rep['prices_as_of']}, {rep['region']} (benchmarks/cost/prices.json).",
        "",
        "| | edge-s3 | qdrant | Bedrock KB on OpenSearch Serverless |",
        "|---|---:|---:|---:|",
    ]
    for kind, row in rep["per_1000_searches"].items():
        lines.append(
            f"| per 1,000 {kind} searches | ${row['edge-s3']['total']:.4f} | "
            f"${row['qdrant']['total']:.4f} | (not measured) |"
        )
    idle = rep["idle_month"]
    floor = rep["opensearch_serverless_kb_idle_month"]
    host = next(k for k in idle["qdrant"] if k.startswith("qdrant_host"))
    lines.append(
        f"| per month idle | ${idle['edge-s3']['total']:.2f} | ${idle['qdrant']['total']:.2f} "
        f"(of which {host.split('(')[1].rstrip(')')} ${idle['qdrant'][host]:.2f}) | "
        f"${floor['redundant']:.2f} (dev/test ${floor['dev_test']:.2f}) |"
    )
    lines.append("")
    for kind, batch in rep["per_sync_batch"].items():
        lines.append(f"* sync batch {kind}: ${batch['total']:.6f} (edge-s3)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the table (or ``--json``: every line item)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--template", type=Path, default=ROOT / "template.yaml")
    parser.add_argument("--measured", type=Path, default=HERE / "measured.json")
    parser.add_argument("--prices", type=Path, default=HERE / "prices.json")
    parser.add_argument("--cpu-scale", action="store_true", help="see the module doc")
    parser.add_argument("--json", action="store_true", help="every line item, as JSON")
    args = parser.parse_args(argv)
    rep = report(
        load_template(args.template),
        json.loads(args.measured.read_text(encoding="utf-8")),
        json.loads(args.prices.read_text(encoding="utf-8")),
        args.cpu_scale,
    )
    print(json.dumps(rep, indent=1) if args.json else table(rep))
    return 0


if __name__ == "__main__":
    sys.exit(main())
