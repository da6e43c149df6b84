"""Enrichment throughput through Bedrock Converse with the service replaced at the HTTP edge:
each Converse request is answered after a fixed latency with a forced tool-use answer, so
what is measured is this project's part (prompts, ``ENRICH_CONCURRENCY`` threads, boto3
request signing and response parsing, the Doc2Query-- filter's embeddings, the write) at a
chosen model latency.

Usage: python benchmarks/enrich_bedrock.py [--records 64] [--latency-s 1.0 3.0]
       [--concurrency 1 4 8] [--json]

Each (latency, concurrency) pair enriches the first ``--records`` bundled records into a fresh
home through the real sync apply path (Edge store, MiniLM int8), with ``ENRICH=bedrock``, and
reports records per minute of the whole pass (enrichment, then every aspect embedded and
written), of the enrichment alone (the LLM calls and the filter), and the ideal
``concurrency * 60 / latency``.
Bedrock documents no fixed latency (it depends on the model, the prompt and the output
length; the Converse response reports its own ``metrics.latencyMs``): pick the latencies your
model shows in CloudWatch.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import boto3
from botocore.awsrequest import AWSResponse

from agentic_search.adapters.bedrock_chat import BedrockChatClient
from agentic_search.adapters.llm_enricher import LLMEnricher
from agentic_search.config import Settings
from agentic_search.sync.apply import apply_changes
from agentic_search.sync.changes import insert_changes
from agentic_search.sync.files import bundled_catalog_path, read_catalog
from agentic_search.wiring import build_dependencies

MODEL = "amazon.nova-lite-v1:0"


class _Raw:
    """The body botocore reads from a response (``stream()`` / ``read()``)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self, **_: Any) -> Any:
        yield self.data

    def read(self, *_: Any) -> bytes:
        return self.data


def _answer(request: Any, latency_s: float, **_: Any) -> AWSResponse:
    """A Converse answer after ``latency_s``: the record's use cases as needs (tool use)."""
    body = json.loads(request.body)
    user = body["messages"][0]["content"][0]["text"]
    words = [w for w in user.replace("\n", " ").split(" ") if w.isalpha()][:24]
    needs = [" ".join(words[i : i + 6]) for i in range(0, len(words), 6)] or ["do my work"]
    payload = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "toolUse": {
                            "toolUseId": "tooluse_bench",
                            "name": body["toolConfig"]["tools"][0]["toolSpec"]["name"],
                            "input": {"needs": needs, "category": "software"},
                        }
                    }
                ],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 300, "outputTokens": 90, "totalTokens": 390},
        "metrics": {"latencyMs": int(latency_s * 1000)},
    }
    time.sleep(latency_s)
    data = json.dumps(payload).encode()
    headers = {"content-type": "application/json", "content-length": str(len(data))}
    return AWSResponse(request.url, 200, headers, _Raw(data))


def run(records: int, latency_s: float, concurrency: int) -> dict[str, Any]:
    """One pass: ``records`` bundled records enriched and written; its figures."""
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    client.meta.events.register(
        "before-send.bedrock-runtime.Converse",
        lambda request, **kw: _answer(request, latency_s, **kw),
    )
    with tempfile.TemporaryDirectory() as home:
        settings = Settings(
            agentic_search_home=Path(home),
            enrich="bedrock",
            enrich_model=MODEL,
            enrich_shipped=False,
            enrich_concurrency=concurrency,
            cache_backend="none",
        )
        enricher = LLMEnricher(BedrockChatClient(MODEL, client=client), max_retries=0)
        deps = build_dependencies(settings, "tools", enricher=enricher)
        lines = bundled_catalog_path().read_text().splitlines()[:records]
        path = Path(home) / "part.jsonl"
        path.write_text("\n".join(lines) + "\n")
        batch = read_catalog(path, deps.schema).records
        deps.embedder.embed_documents(["warm up"])  # the model's load is not the pass's
        try:
            t0 = time.perf_counter()
            report = apply_changes(deps, insert_changes(deps.schema, batch), deps.sync_status)
            seconds = time.perf_counter() - t0
        finally:
            deps.store.close()
    e = report.enrichment
    assert e is not None and not e.failed, e.failed if e else "no enrichment report"
    return {
        "records": len(batch),
        "latency_s": latency_s,
        "concurrency": concurrency,
        "asked": e.asked,
        "seconds": round(seconds, 2),
        "records_per_min": round(60 * len(batch) / seconds, 1),
        "enrich_seconds": round(e.seconds, 2),
        "enrich_per_min": round(60 * len(batch) / e.seconds, 1) if e.seconds else None,
        "ideal_per_min": round(concurrency * 60 / latency_s, 1),
    }


def main() -> None:
    """Parse the arguments, run every pair, print a table (or JSON)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=64)
    ap.add_argument("--latency-s", type=float, nargs="+", default=[1.0, 3.0])
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = [run(args.records, lat, conc) for lat in args.latency_s for conc in args.concurrency]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(
        "| latency s | concurrency | records | pass s | records/min (pass) "
        "| enrichment s | records/min (enrichment) | ideal/min |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['latency_s']} | {r['concurrency']} | {r['records']} | {r['seconds']} "
            f"| {r['records_per_min']} | {r['enrich_seconds']} | {r['enrich_per_min']} "
            f"| {r['ideal_per_min']} |"
        )


if __name__ == "__main__":
    main()
