"""Publish and cold-open times of an edge-s3 snapshot, by shard size.

For each point count: a tools-domain Edge shard of that many points (4 named 384-d vectors,
a sparse BM25 vector of 40 terms and a catalog record's payload each; random unit vectors, so
nothing is embedded), then the writer's publish (pack + upload + pointer move: ``publish``)
and ``--opens`` fresh readers' cold starts of that snapshot, each in its own folder (pointer
read + download + SHA-256 check + unpack + open + count: ``open``), each followed by one dense
query. A reader's resident memory grown by its open (``/proc/self/statm``) is ``reader_rss``.
S3 and DynamoDB are moto in this process, so the figures are the local work (compression,
disk, engine open) without S3's network transfer; add the object size over the function's S3
bandwidth for a deployed figure. Medians over every run (publish) and every open (open,
query); the load average before and after each point count is printed with it.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/edge_s3/snapshot_bench.py --points 284 10000 \
        --runs 5 --opens 1 --out benchmarks/edge_s3/results.json
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


def points(
    n: int, records: list[dict], rng: np.random.Generator, start: int = 0
) -> list[PointWrite]:
    """Points ``start .. start + n - 1`` (random unit vectors, a bundled record's payload)."""
    out = []
    for i in range(start, start + n):
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


def rss_bytes() -> int:
    """This process's resident memory (Linux ``/proc/self/statm``)."""
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def run(n: int, runs: int, records: list[dict], opens: int = 1) -> dict:
    """Build, publish and cold-open a shard of ``n`` points ``runs`` times (``opens`` readers
    each); medians of the times, the last run's sizes."""
    schema = load_schema("tools")
    aspects = list(schema.aspect_names)
    publish_s, open_s, query_ms, rss = [], [], [], []
    size = shard_bytes = 0
    load_before = os.getloadavg()[0]
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
                    # the whole shard is built inside one lease here: at 100k points that
                    # outlasts the deployed writers' 330 s on a loaded machine (a deployed
                    # catalog that size is reindexed in batches, each under its own lease)
                    snapshot_lease_s=24 * 3600,
                )

            writer = PublishedEdgeStore(settings("w"), registry, writer=True)
            rng = np.random.default_rng(r)
            with writer.writing(schema):
                writer.ensure_collection(schema, DIM)
                for i in range(0, n, 500):  # generated a batch at a time: 100k points of
                    # Python floats would not fit in memory at once
                    writer.upsert(schema, points(min(500, n - i), records, rng, start=i))
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
            for o in range(opens):
                reader = PublishedEdgeStore(settings(f"r{o}"), registry)
                before = rss_bytes()
                t = time.perf_counter()
                count = reader.count(schema)
                open_s.append(time.perf_counter() - t)
                rss.append(rss_bytes() - before)
                assert count == n, count
                v = rng.standard_normal(DIM).astype(np.float32)
                t = time.perf_counter()
                reader.query_dense(schema, aspects[0], (v / np.linalg.norm(v)).tolist(), 10)
                query_ms.append((time.perf_counter() - t) * 1000)
                reader.close()
                shutil.rmtree(Path(tmp) / f"r{o}", ignore_errors=True)
            shutil.rmtree(tmp, ignore_errors=True)
    return {
        "points": n,
        "archive_mib": round(size / 2**20, 1),
        "shard_mib": round(shard_bytes / 2**20, 1),
        "publish_s": round(statistics.median(publish_s), 2),
        "cold_open_s": round(statistics.median(open_s), 2),
        "first_query_ms": round(statistics.median(query_ms), 1),
        "reader_rss_mib": round(statistics.median(rss) / 2**20, 1),
        "publish_s_all": [round(x, 2) for x in publish_s],
        "cold_open_s_all": [round(x, 2) for x in open_s],
        "runs": runs,
        "opens": runs * opens,
        "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, nargs="+", default=[284, 10_000])
    parser.add_argument("--runs", type=int, default=5, help="shards built and published")
    parser.add_argument(
        "--opens", type=int, default=1, help="fresh readers cold-opening each published shard"
    )
    parser.add_argument("--out", type=Path, help="also write the rows to this JSON file")
    args = parser.parse_args()
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        os.environ.setdefault(var, "testing")
    schema = load_schema("tools")
    records = read_catalog(bundled_catalog_path(), schema).records
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"# load average {os.getloadavg()[0]:.2f}, {started}")
    rows = []
    for n in args.points:
        rows.append(run(n, args.runs, records, args.opens))
        print(json.dumps(rows[-1]), flush=True)
        if args.out:  # written after each size: a long run keeps what it measured
            args.out.write_text(
                json.dumps({"started": started, "cpus": os.cpu_count(), "rows": rows}, indent=1)
                + "\n"
            )


if __name__ == "__main__":
    main()
