"""Summaries of a bench run: the raw model's mean, the ingest/raw ratio, the targets met."""

from __future__ import annotations

import statistics
from typing import Any

from agentic_search.ports import Embedder
from agentic_search_cli.bench.config import (
    INGEST_RATIO_TARGET,
    PEAK_RSS_TARGET_BYTES,
    SEARCH_P95_TARGET_MS,
)


def raw_summary(runs: list[dict[str, Any]], embedder: Embedder) -> dict[str, Any]:
    """The raw model's runs (before and after the ingest) -> their mean ``tokens_per_s``.

    Without runs (an embedder other than the local ONNX one) the summary says why.
    """
    if not runs:
        return {
            "available": False,
            "reason": f"raw throughput needs a local model (minilm, e5-small): {embedder.name}",
        }
    tps = [r["tokens_per_s"] for r in runs]
    return {
        "available": True,
        "tokens_per_s": round(statistics.mean(tps), 1),
        "runs": runs,
    }


def ingest_ratio(ingest: dict[str, Any], raw_runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The ingest figures plus ``ratio`` = ingest tokens/s ÷ mean raw tokens/s, the same for
    embedding time alone (``embed_only_ratio``) and per CPU second (``cpu_time_ratio``).
    """
    if not raw_runs:
        return ingest | {"ratio": None}
    raw_tps = statistics.mean(r["tokens_per_s"] for r in raw_runs)
    raw_cpu = sum(r["cpu_seconds"] for r in raw_runs)
    raw_tokens = sum(r["tokens"] for r in raw_runs)
    ratio = ingest["tokens_per_s"] / raw_tps if raw_tps > 0 else 0.0
    embed_ratio = ingest["embed_tokens_per_s"] / raw_tps if raw_tps > 0 else 0.0
    cpu_ratio = None
    if ingest["cpu_seconds"] > 0 and raw_cpu > 0:
        cpu_ratio = round((ingest["tokens"] / ingest["cpu_seconds"]) / (raw_tokens / raw_cpu), 3)
    return ingest | {
        "raw_tokens_per_s": round(raw_tps, 1),
        "ratio": round(ratio, 3),
        "embed_only_ratio": round(embed_ratio, 3),
        "cpu_time_ratio": cpu_ratio,
    }


def targets(result: dict[str, Any]) -> dict[str, Any]:
    """{target name: {"target", "value" (or "value_bytes"), "met"}} for the run's figures:
    ingest/raw token ratio, peak RSS of the ingest, the dataset's executor p95 (ms).
    """
    ingest = result.get("ingest", {})
    out: dict[str, Any] = {}
    if ingest.get("ratio") is not None:
        out["ingest_tokens_ratio"] = {
            "target": f">= {INGEST_RATIO_TARGET}",
            "value": ingest["ratio"],
            "met": ingest["ratio"] >= INGEST_RATIO_TARGET,
        }
    out["peak_rss"] = {
        "target": "< 2 GiB",
        "value_bytes": ingest.get("peak_rss_bytes"),
        "met": (ingest.get("peak_rss_bytes") or 0) < PEAK_RSS_TARGET_BYTES,
        "over": f"{ingest.get('documents')} documents",
    }
    ds = result.get("search", {}).get("dataset")
    if ds:
        p95 = ds["modes"]["executor"]["stages"]["total"]["p95"]
        out["dataset_executor_p95_ms"] = {
            "target": f"<= {SEARCH_P95_TARGET_MS:g}",
            "value": p95,
            "met": p95 <= SEARCH_P95_TARGET_MS,
        }
    return out
