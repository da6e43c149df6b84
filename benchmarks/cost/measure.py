"""What a search and a sync batch use in the deployed shape (``VectorEngine=edge-s3``), measured
in moto: per-function durations, invocations, and the S3 and DynamoDB requests, written to the
JSON file ``cost.py`` prices.

The stack is the one of ``tests/aws/sync/test_edge_s3.py``: S3 and DynamoDB are moto in this
process (the snapshot bucket; the snapshot, sync status, idempotency and plan cache tables);
the writer is CatalogSync's handler over a container runtime with ``SNAPSHOT_ROLE=writer``,
the reader SearchApi's handler over a reader runtime whose search walks the search ASL
in-process (``LocalRunner(wire=True)``: every Task's input and output cross JSON, as in
Lambda). The real MiniLM embeds; the real Edge engine writes and reads the shards.

1. **Seed**: ``--records`` records (the bundled catalog's, under new ids past its 284) through
   stream batches of ``--seed-batch``.
2. **Publish latency** (the sync path: stream batch -> shard write -> snapshot upload ->
   pointer move): ``--runs`` stream batches of each size in ``--batches`` of payload-only
   changes (a new price: nothing to embed), and of one new record (embedded); for each, the
   handler's wall time and, inside it, the publish (flush, pack, upload, pointer transaction);
   the S3 and DynamoDB requests per batch (counted by a botocore ``before-call`` hook on every
   client).
3. **Searches**: each query of ``--queries`` ``--runs`` times through the HTTP API handler,
   the plan cache emptied before each run (every run a miss), the pointer's re-check interval
   passed before each (so the reader looks at the pointer every time, as at low traffic); for
   each Task function its wall time per invocation; the requests per search.

Speed figures depend on the machine's load: the load average before and after each part is
written with it (``uptime``); medians of ``--runs``.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/cost/measure.py --out benchmarks/cost/measured.json
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
REGION = "us-east-1"
BUCKET = "agentic-search-snapshots"
QUERIES = (
    "free code editor",
    "compare cursor and zed for python released after 2020",
    "AI code completion tools that work locally under $20 a month like copilot",
    "open source alternatives to github copilot and tabnine released after 2021 with a free plan",
)


def _credentials() -> None:
    for var, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
    }.items():
        os.environ[var] = value
    os.environ.pop("AWS_PROFILE", None)


def _ddb_item_bytes(item: dict[str, Any]) -> int:
    """An item's size as DynamoDB bills it, approximated from above by its typed JSON."""
    return len(json.dumps(item, separators=(",", ":")).encode())


def _write_units(item: dict[str, Any], extra: dict[str, Any] | None = None) -> float:
    size = _ddb_item_bytes(item) + (_ddb_item_bytes(extra) if extra else 0)
    return float(max(1, -(-size // 1024)))


def ddb_units(operation: str, body: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """Table -> (read, write) request units a DynamoDB request consumes, from its request
    body: a read one unit per key (half without ``ConsistentRead``; items under 4 KB, as every
    item read here is), a write one unit per started KB of the item written (at least one),
    a transaction twice that."""
    out: dict[str, tuple[float, float]] = {}

    def add(table: str, reads: float = 0.0, writes: float = 0.0) -> None:
        r, w = out.get(table, (0.0, 0.0))
        out[table] = (r + reads, w + writes)

    table = body.get("TableName", "?")
    if operation in ("GetItem", "Query", "Scan"):
        add(table, reads=1.0 if body.get("ConsistentRead") else 0.5)
    elif operation == "BatchGetItem":
        for name, spec in body.get("RequestItems", {}).items():
            unit = 1.0 if spec.get("ConsistentRead") else 0.5
            add(name, reads=len(spec.get("Keys", [])) * unit)
    elif operation in ("PutItem", "UpdateItem", "DeleteItem"):
        item = body.get("Item") or body.get("Key") or {}
        add(table, writes=_write_units(item, body.get("ExpressionAttributeValues")))
    elif operation == "BatchWriteItem":
        for name, requests in body.get("RequestItems", {}).items():
            for r in requests:
                put, delete = r.get("PutRequest") or {}, r.get("DeleteRequest") or {}
                item = put.get("Item") or delete.get("Key") or {}
                add(name, writes=_write_units(item))
    elif operation == "TransactWriteItems":
        for entry in body.get("TransactItems", []):
            for spec in entry.values():
                item = spec.get("Item") or spec.get("Key") or {}
                add(spec.get("TableName", "?"), writes=2 * _write_units(item))
    return out


class RequestCounter:
    """Counts every AWS API call made by clients of boto3's default session, by
    ``service:Operation`` (a botocore ``before-call`` handler, registered before any client is
    made: a client copies its session's handlers when it is created), and DynamoDB's read and
    write request units (``dynamodb:RRU``, ``dynamodb:WRU``: :func:`ddb_units`), also by
    table (``dynamodb:GetItem@<table>``, ``dynamodb:RRU@<table>``...)."""

    def __init__(self) -> None:
        import boto3

        boto3.setup_default_session(region_name=REGION)
        self.calls: Counter[str] = Counter()
        boto3.DEFAULT_SESSION.events.register("before-call", self._count)

    def _count(self, model: Any, params: dict[str, Any], **_: Any) -> None:
        service = model.service_model.service_name
        self.calls[f"{service}:{model.name}"] += 1
        if service == "dynamodb" and params.get("body"):
            for table, (reads, writes) in ddb_units(model.name, json.loads(params["body"])).items():
                self.calls[f"dynamodb:{model.name}@{table}"] += 1
                self.calls["dynamodb:RRU"] += reads
                self.calls["dynamodb:WRU"] += writes
                self.calls[f"dynamodb:RRU@{table}"] += reads
                self.calls[f"dynamodb:WRU@{table}"] += writes

    @contextmanager
    def window(self) -> Iterator[Counter[str]]:
        """The calls made inside the block (filled in when it ends)."""
        before = copy.copy(self.calls)
        got: Counter[str] = Counter()
        try:
            yield got
        finally:
            got.update({k: v - before.get(k, 0) for k, v in self.calls.items()})
            for k in [k for k, v in got.items() if not v]:
                del got[k]


def _function(directory: str) -> Any:
    path = ROOT / "functions" / directory / "app.py"
    spec = importlib.util.spec_from_file_location(f"fn_{directory}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _event(rel: str) -> dict[str, Any]:
    return json.loads((ROOT / "events" / rel).read_text(encoding="utf-8"))


class Context:
    """The parts of a Lambda context Powertools reads."""

    function_name = "CatalogSyncFunction"
    function_version = "$LATEST"
    invoked_function_arn = f"arn:aws:lambda:{REGION}:123456789012:function:CatalogSync"
    memory_limit_in_mb = 2048
    aws_request_id = "00000000-0000-0000-0000-000000000000"
    log_group_name = "/aws/lambda/bench"
    log_stream_name = "bench"

    def get_remaining_time_in_millis(self) -> int:
        return 300_000


def stream_batch(records: list[dict], first_seq: int, name: str) -> dict:
    """One DynamoDB stream batch of ``name`` (INSERT / MODIFY) events for ``records``."""
    from boto3.dynamodb.types import TypeSerializer

    [template] = _event("sync/stream_insert.json")["Records"]
    ser, out = TypeSerializer(), []
    for n, record in enumerate(records):
        item = copy.deepcopy(template)
        ddb = item["dynamodb"]
        plain = json.loads(json.dumps(record), parse_float=Decimal)
        ddb["Keys"] = {"id": {"S": record["id"]}}
        ddb["SequenceNumber"] = f"{first_seq + n:021d}"
        ddb["NewImage"] = {k: ser.serialize(v) for k, v in plain.items() if v is not None}
        item["eventID"] = f"evt-{first_seq + n}"
        item["eventName"] = name
        out.append(item)
    return {"Records": out}


def _table(ddb: Any, name: str, key: str = "pk") -> str:
    ddb.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"}],
        KeySchema=[{"AttributeName": key, "KeyType": "HASH"}],
    )
    return name


def _status_table(ddb: Any, name: str = "sync-status") -> str:
    ddb.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "statusKey", "AttributeType": "S"},
            {"AttributeName": "recordId", "AttributeType": "S"},
        ],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "byStatus",
                "KeySchema": [
                    {"AttributeName": "statusKey", "KeyType": "HASH"},
                    {"AttributeName": "recordId", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
    )
    return name


class Stack:
    """The moto bucket and tables, a writer runtime and a reader runtime over them."""

    def __init__(self, tmp: Path) -> None:
        import boto3

        from agentic_search.adapters.sync_status import DynamoDBSyncStatus
        from agentic_search_lambda.settings import LambdaSettings

        self.tmp = tmp
        self.s3 = boto3.client("s3")
        self.s3.create_bucket(Bucket=BUCKET)
        self.ddb = boto3.client("dynamodb")
        self.snapshots = _table(self.ddb, "snapshot-pointers")
        self.cache = _table(self.ddb, "plan-cache")
        self.status = DynamoDBSyncStatus(_status_table(self.ddb), client=self.ddb)
        self.lambda_settings = LambdaSettings(
            idempotency_table=_table(self.ddb, "sync-idempotency", key="id")
        )
        self.runtimes: list[Any] = []

    def settings(self, role: str, name: str) -> Any:
        """A function's settings as the template gives them (edge-s3, the DynamoDB cache),
        its own home (its own /tmp)."""
        from agentic_search.config import Settings

        return Settings(
            agentic_search_home=self.tmp / name,
            vector_store="edge-s3",
            snapshot_role=role,
            snapshot_bucket=BUCKET,
            snapshot_table=self.snapshots,
            cache_backend="dynamodb",
            cache_table=self.cache,
        )

    def runtime(self, role: str) -> Any:
        """A container runtime of ``role`` with its own home (its own /tmp)."""
        from agentic_search.pipeline.runner import LocalRunner
        from agentic_search.wiring import DomainRegistry
        from agentic_search_lambda.handlers import fresh
        from agentic_search_lambda.orchestrators import LocalOrchestrator
        from agentic_search_lambda.runtime import Runtime

        settings = self.settings(role, role)
        registry = DomainRegistry(settings)
        orchestrator = None
        if role == "reader":
            orchestrator = LocalOrchestrator(LocalRunner(fresh, 1, wire=True))
        rt = Runtime(
            settings,
            self.lambda_settings,
            deps=registry,
            orchestrator=orchestrator,
            sync_status=self.status,
        )
        self.runtimes.append(rt)
        return rt

    def empty_cache(self) -> None:
        for page in self.ddb.get_paginator("scan").paginate(TableName=self.cache):
            for item in page["Items"]:
                self.ddb.delete_item(TableName=self.cache, Key={"pk": item["pk"]})

    def close(self) -> None:
        for rt in self.runtimes:
            rt.deps.close()


@contextmanager
def _use(rt: Any) -> Iterator[None]:
    from agentic_search_lambda import runtime

    runtime.use(rt)
    try:
        yield
    finally:
        runtime.use(None)


class PublishTimer:
    """Wall time of each ``PublishedEdgeStore.publish`` (the flush, pack, upload and pointer
    move), recorded while installed."""

    def __init__(self) -> None:
        from agentic_search.adapters.edge.published import PublishedEdgeStore

        self.cls = PublishedEdgeStore
        self.original = PublishedEdgeStore.publish
        self.seconds: list[float] = []
        timer = self

        def publish(store: Any, *args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return timer.original(store, *args, **kwargs)
            finally:
                timer.seconds.append(time.perf_counter() - t)

        PublishedEdgeStore.publish = publish  # type: ignore[method-assign]

    def close(self) -> None:
        self.cls.publish = self.original  # type: ignore[method-assign]


class Containers:
    """One "container" per Task function: while installed, the walk's ``call_function`` (in
    Lambda one invocation of that function) runs each function on its own dependencies (its
    own registry, home, snapshot copy and process caches, as separate Lambda containers
    have), refreshed before each invocation as ``handlers.fresh`` does, the pointer's
    re-check interval passed first (every invocation looks at the pointer, as at low
    traffic); it records each invocation's wall time, in order."""

    def __init__(self, settings_for: Callable[[str], Any]) -> None:
        from agentic_search.pipeline import runner
        from agentic_search.sync.published import refresh_published
        from agentic_search.wiring import DomainRegistry

        self.module = runner
        self.original = runner.call_function
        self.registries: dict[str, Any] = {}
        self.calls: list[tuple[str, float]] = []
        me = self

        def deps_of(function: str) -> Any:
            if function not in me.registries:
                me.registries[function] = DomainRegistry(settings_for(function))
            deps = me.registries[function]("tools")
            if deps.built("store"):
                _expire(deps.store)
            refresh_published(deps)
            return deps

        def call_function(function: str, payload: Any, _deps: Any) -> Any:
            t = time.perf_counter()
            try:
                return me.original(function, payload, lambda _domain: deps_of(function))
            finally:
                me.calls.append((function, (time.perf_counter() - t) * 1000))

        runner.call_function = call_function

    def cold(self) -> None:
        """Forget what earlier searches left in each container's caches (query vectors,
        records read back, token counts), as ``eval`` does before timing a search."""
        for registry in self.registries.values():
            deps = registry("tools")
            deps.caches.clear_query_vectors()
            deps.caches.clear_token_counts()
            if deps.built("store"):
                deps.store.clear_record_cache()

    def close(self) -> None:
        self.module.call_function = self.original
        for registry in self.registries.values():
            registry.close()


def _records(n: int) -> list[dict]:
    from agentic_search.logic.schema import load_schema
    from agentic_search.sync.files import bundled_catalog_path, read_catalog

    base = read_catalog(bundled_catalog_path(), load_schema("tools")).records
    out = []
    for i in range(n):
        r = dict(base[i % len(base)])
        if i >= len(base):
            r["id"] = f"{r['id']}-{i}"
            r["name"] = f"{r['name']} {i}"
        out.append(r)
    return out


def _loadavg() -> float:
    """The 1-minute load average."""
    return round(os.getloadavg()[0], 2)


def _sync(handler: Any, rt: Any, event: dict) -> dict:
    with _use(rt):
        out = handler(event, Context())
    assert out == {"batchItemFailures": []}, out
    return out


def measure_sync(
    stack: Stack,
    counter: RequestCounter,
    writer: Any,
    records: list[dict],
    batches: list[int],
    runs: int,
) -> dict[str, Any]:
    """Publish latency and requests per stream batch (see the module doc, part 2)."""
    handler = _function("catalog_sync").handler
    timer = PublishTimer()
    seq = 10_000_000
    out: dict[str, Any] = {"load_before": _loadavg()}
    try:
        kinds = [(f"modify-{n}", n) for n in batches] + [("insert-1", 1)]
        for kind, n in kinds:
            walls, publishes, requests = [], [], []
            for run in range(runs):
                if kind.startswith("insert"):
                    new = dict(records[run], id=f"bench-new-{run}", name=f"Benchnew {run}")
                    batch, name = [new], "INSERT"
                else:
                    price = 1 + run + n / 1000
                    batch = [dict(r, price_monthly_usd=price) for r in records[:n]]
                    name = "MODIFY"
                event = stream_batch(batch, seq, name)
                seq += len(batch)
                timer.seconds.clear()
                with counter.window() as calls:
                    t = time.perf_counter()
                    _sync(handler, writer, event)
                    walls.append(time.perf_counter() - t)
                assert len(timer.seconds) == 1, timer.seconds  # one publish per batch
                publishes.append(timer.seconds[0])
                requests.append(dict(calls))
            out[kind] = {
                "changes": n,
                "handler_s": round(statistics.median(walls), 3),
                "publish_s": round(statistics.median(publishes), 3),
                "handler_s_all": [round(x, 3) for x in walls],
                "publish_s_all": [round(x, 3) for x in publishes],
                "requests": _median_requests(requests),
                "runs": runs,
            }
            print(json.dumps({kind: out[kind]}), flush=True)
    finally:
        timer.close()
    out["load_after"] = _loadavg()
    return out


def _table_bytes(ddb: Any, table: str) -> int:
    """A table's items' size (:func:`_ddb_item_bytes` summed over a scan)."""
    total = 0
    for page in ddb.get_paginator("scan").paginate(TableName=table):
        total += sum(_ddb_item_bytes(item) for item in page["Items"])
    return total


def _median_requests(runs: list[dict[str, int]]) -> dict[str, float]:
    """Per operation, the median over the runs of its count (0 in a run without it)."""
    ops = sorted({op for r in runs for op in r})
    return {op: statistics.median(r.get(op, 0) for r in runs) for op in ops}


def _expire(store: Any) -> None:
    """Make the store's next refresh look at the pointer (its re-check interval passed)."""
    for opened in getattr(store, "_opened", {}).values():
        opened.checked_at -= store.recheck_s + 1


def measure_searches(
    stack: Stack, counter: RequestCounter, reader: Any, queries: list[str], runs: int
) -> dict[str, Any]:
    """Per-function durations and requests per search (see the module doc, part 3)."""
    handler = _function("search_api").handler
    containers = Containers(lambda function: stack.settings("reader", f"reader-{function}"))
    out: dict[str, Any] = {"load_before": _loadavg(), "queries": {}}
    try:
        event = _event("search_api/post_search.json")
        # a first search of each query opens the snapshot in each container (cold starts,
        # not timed here: benchmarks/edge_s3 times a cold open)
        for query in queries:
            event["body"] = json.dumps({"query": query, "limit": 10})
            with _use(reader):
                handler(copy.deepcopy(event), Context())
        for query in queries:
            per_run: list[list[tuple[str, float]]] = []
            requests, walls, rounds = [], [], set()
            for _ in range(runs):
                stack.empty_cache()
                containers.cold()
                event["body"] = json.dumps({"query": query, "limit": 10})
                containers.calls.clear()
                with counter.window() as calls, _use(reader):
                    t = time.perf_counter()
                    got = handler(copy.deepcopy(event), Context())
                    walls.append(time.perf_counter() - t)
                assert got["statusCode"] == 200, got
                body = json.loads(got["body"])
                rounds.add(_rounds(body))
                per_run.append(list(containers.calls))
                requests.append(dict(calls))
            out["queries"][query] = {
                "rounds": sorted(rounds),
                "wall_s": round(statistics.median(walls), 3),
                "invocations": _median_invocations(per_run),
                "requests": _median_requests(requests),
                "runs": runs,
            }
            print(json.dumps({query: out["queries"][query]}), flush=True)
    finally:
        containers.close()
    out["load_after"] = _loadavg()
    return out


def _rounds(body: dict) -> int:
    stats = (body.get("output") or {}).get("executionStats") or body.get("executionStats") or {}
    return int(stats.get("rounds", 1))


def _median_invocations(runs: list[list[tuple[str, float]]]) -> list[dict[str, Any]]:
    """The invocations of one search in order (function, median ms over the runs, position by
    position; runs that invoked a different sequence are left out)."""
    shape = Counter(tuple(f for f, _ in r) for r in runs).most_common(1)[0][0]
    same = [r for r in runs if tuple(f for f, _ in r) == shape]
    return [
        {"function": f, "ms": round(statistics.median(r[i][1] for r in same), 2)}
        for i, f in enumerate(shape)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1000, help="catalog records seeded")
    parser.add_argument("--seed-batch", type=int, default=100)
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 1000])
    parser.add_argument("--queries", nargs="+", default=list(QUERIES))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, help="write the measurements to this JSON file")
    args = parser.parse_args()
    if max(args.batches) > args.records:
        parser.error("--batches: at most --records changes per batch")
    _credentials()
    from moto import mock_aws

    tmp = Path(tempfile.mkdtemp(prefix="cost-measure-"))
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    result: dict[str, Any] = {
        "started": started,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.processor() or ''}",
        "command": "python benchmarks/cost/measure.py " + " ".join(sys.argv[1:]),
    }
    try:
        with mock_aws():
            counter = RequestCounter()
            stack = Stack(tmp)
            writer, reader = stack.runtime("writer"), stack.runtime("reader")
            records = _records(args.records)
            handler = _function("catalog_sync").handler
            t = time.perf_counter()
            load = _loadavg()
            for i in range(0, len(records), args.seed_batch):
                _sync(handler, writer, stream_batch(records[i : i + args.seed_batch], i, "INSERT"))
            result["seed"] = {
                "records": len(records),
                "seconds": round(time.perf_counter() - t, 1),
                "load_before": load,
                "load_after": _loadavg(),
            }
            print(json.dumps({"seed": result["seed"]}), flush=True)
            pointer = stack.ddb.get_item(
                TableName=stack.snapshots, Key={"pk": {"S": "pointer#tools"}}
            )["Item"]
            result["archive_bytes"] = int(pointer["size"]["N"])
            result["points"] = len(records)
            schema = reader.deps("tools").schema
            result["dense_dims_per_point"] = len(schema.aspect_names) * 384
            result["status_table_bytes"] = _table_bytes(stack.ddb, "sync-status")
            result["sync"] = measure_sync(stack, counter, writer, records, args.batches, args.runs)
            result["search"] = measure_searches(stack, counter, reader, args.queries, args.runs)
            stack.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result["finished"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    text = json.dumps(result, indent=1) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
