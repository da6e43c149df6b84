"""Publish and cold-open times of an edge-s3 snapshot, by shard size.

For each point count: a tools-domain Edge shard of that many points (4 named 384-d vectors,
a sparse BM25 vector of 40 terms and a catalog record's payload each; random unit vectors, so
nothing is embedded), then the writer's publish (pack + upload + pointer move: ``publish``)
and a reader's cold start (pointer read + download + SHA-256 check + unpack + open + count:
``open``), then one dense query on the opened shard. S3 and DynamoDB are moto in this process,
so the figures are the local work (compression, disk, engine open) without S3's network
transfer; add the object size over the function's S3 bandwidth for a deployed figure.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/edge_s3/snapshot_bench.py --points 284 10000 --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import boto3
import numpy as np
from moto import mock_aws

from agentic_search.adapters.edge.published import PublishedEdgeStore
from agentic_search.adapters.s3_snapshots import S3SnapshotRegistry
from agentic_search.config import Settings
from agentic_search.logic.schema import load_schema
from agentic_search.sync.files import bundled_catalog_path, read_catalog
from agentic_search.wire import PointWrite, SparseVector

DIM, TERMS, VOCAB = 384, 40, 30_000


def points(n: int, records: list[dict], rng: np.random.Generator) -> list[PointWrite]:
    out = []
    for i in range(n):
        base = records[i % len(records)]
        vectors = {}
        for aspect in load_schema("tools").aspect_names:
            v = rng.standard_normal(DIM).astype(np.float32)
            vectors[aspect] = (v / np.linalg.norm(v)).tolist()
        idx = sorted(rng.choice(VOCAB, TERMS, replace=False).tolist())
        sparse = SparseVector(idx, rng.random(TERMS).astype(np.float32).tolist())
        payload = {**base, "id": f"{base['id']}-{i}"}
        out.append(PointWrite(payload["id"], vectors, payload, sparse))
    return out


def run(n: int, runs: int, records: list[dict]) -> dict:
    schema = load_schema("tools")
    aspects = list(schema.aspect_names)
    publish_s, open_s, query_ms = [], [], []
    size = shard_bytes = 0
    for r in range(runs):
        with tempfile.TemporaryDirectory() as tmp, mock_aws():
            s3, ddb = boto3.client("s3"), boto3.client("dynamodb")
            s3.create_bucket(Bucket="bench-snapshots")
            ddb.create_table(
                TableName="t",
                BillingMode="PAY_PER_REQUEST",
                AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            )
            registry = S3SnapshotRegistry("bench-snapshots", "t", s3=s3, dynamodb=ddb)

            def settings(name: str) -> Settings:
                return Settings(
                    agentic_search_home=Path(tmp) / name,
                    vector_store="edge-s3",
                    snapshot_bucket="bench-snapshots",
                    snapshot_table="t",
                )

            writer = PublishedEdgeStore(settings("w"), registry, writer=True)
            rng = np.random.default_rng(r)
            with writer.writing(schema):
                writer.ensure_collection(schema, DIM)
                batch = points(n, records, rng)
                for i in range(0, n, 500):
                    writer.upsert(schema, batch[i : i + 500])
                t = time.perf_counter()
                pointer = writer.publish(schema)
                publish_s.append(time.perf_counter() - t)
            shard = writer.shard_dir(schema)
            shard_bytes = int(
                subprocess.run(
                    ["du", "-sb", str(shard)], capture_output=True, text=True
                ).stdout.split()[0]
            )
            size = pointer.size
            writer.close()
            reader = PublishedEdgeStore(settings("r"), registry)
            t = time.perf_counter()
            count = reader.count(schema)
            open_s.append(time.perf_counter() - t)
            assert count == n, count
            v = rng.standard_normal(DIM).astype(np.float32)
            t = time.perf_counter()
            reader.query_dense(schema, aspects[0], (v / np.linalg.norm(v)).tolist(), 10)
            query_ms.append((time.perf_counter() - t) * 1000)
            reader.close()
            shutil.rmtree(tmp, ignore_errors=True)
    return {
        "points": n,
        "archive_mib": round(size / 2**20, 1),
        "shard_mib": round(shard_bytes / 2**20, 1),
        "publish_s": round(statistics.median(publish_s), 2),
        "cold_open_s": round(statistics.median(open_s), 2),
        "first_query_ms": round(statistics.median(query_ms), 1),
        "runs": runs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, nargs="+", default=[284, 10_000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        os.environ.setdefault(var, "testing")
    schema = load_schema("tools")
    records = read_catalog(bundled_catalog_path(), schema).records
    print(f"# load average {os.getloadavg()[0]:.2f}, {time.strftime('%Y-%m-%d %H:%M UTC')}")
    for n in args.points:
        print(json.dumps(run(n, args.runs, records)), flush=True)


if __name__ == "__main__":
    main()
