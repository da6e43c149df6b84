"""Golden-set quality and latency on the bundled catalog (embedded defaults, in-process).

Usage: python benchmarks/golden.py [--runs 5] [--json] [--home DIR --collection-prefix P]
       [--domain FILE.yaml]

Ingests the bundled catalog into a temporary folder (reporting ingest time and docs/s), warms
up, then runs every golden query ``--runs`` times and reports Recall@5 (|relevant ∩ top-5| /
min(|relevant|, 5), mean over queries) and the median / p95 search latency (engine.search,
in-process, after warm-up). ``--home`` (with ``--collection-prefix``) searches a tools index
built there before (``eval``'s ``eval-tools-queries-e5-small-``, say) instead of ingesting:
the ingest figures are then null. ``--domain`` indexes the bundled catalog in another schema
of its records (a draft of ``agentic-search init-domain``, say) and asks the golden set of it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from agentic_search.config import Settings
from agentic_search.logic.schema import load_schema
from agentic_search.service import SearchService
from agentic_search.sync.files import bundled_catalog_path

GOLDEN = (
    Path(__file__).resolve().parents[1]
    / "cli"
    / "agentic_search_cli"
    / "data"
    / "tools_golden.jsonl"
)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--home", type=Path, help="an AGENTIC_SEARCH_HOME holding the tools index")
    ap.add_argument("--collection-prefix", default="", help="of that index (with --home)")
    ap.add_argument(
        "--domain",
        type=Path,
        help="a schema YAML of the bundled catalog's records, indexed in the temporary home",
    )
    args = ap.parse_args()
    golden = [json.loads(line) for line in GOLDEN.read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        home, prefix = (args.home, args.collection_prefix) if args.home else (Path(tmp), "")
        # Timed cold: no result cache, query vectors forgotten before each search.
        settings = Settings(
            agentic_search_home=home, cache_backend="none", collection_prefix=prefix
        )
        schema = load_schema(args.domain) if args.domain else "tools"
        engine = SearchService.create(settings, schema)
        t = time.perf_counter()
        engine.deps.embedder  # noqa: B018 - load the model outside the ingest timing
        load_s = time.perf_counter() - t
        if args.domain and not args.home:
            report, _ = engine.rebuild(bundled_catalog_path())
        else:
            report = engine.ensure_bundled_catalog()  # None: the index was built before
        assert report is not None or args.home
        for g in golden[:5]:
            engine.search(g["query"])
        latencies: list[float] = []
        recalls: dict[str, float] = {}
        for _ in range(args.runs):
            for g in golden:
                engine.deps.caches.clear_query_vectors()
                t = time.perf_counter()
                resp = engine.search(g["query"], limit=10)
                latencies.append((time.perf_counter() - t) * 1000)
                top5 = [c.id for c in resp.output.candidates[:5]]
                rel = set(g["relevant"])
                recalls[g["id"]] = len(rel & set(top5)) / min(len(rel), 5)
        engine.close()
    lat = sorted(latencies)
    out = {
        "machine": f"{platform.machine()} {os.cpu_count()} cpus, py {platform.python_version()}",
        "domain": engine.schema.name,
        "embedder": settings.embedder_model,
        "catalog_size": report.valid if report else None,
        "model_load_s": round(load_s, 2),
        "ingest_s": round(report.seconds, 2) if report else None,
        "ingest_docs_per_s": round(report.docs_per_s, 1) if report else None,
        "embedded_texts": report.stats.embedded_texts if report else None,
        "golden_queries": len(golden),
        "runs": args.runs,
        "recall_at_5": round(statistics.mean(recalls.values()), 3),
        "latency_ms_p50": round(statistics.median(lat), 1),
        "latency_ms_p95": round(lat[int(0.95 * (len(lat) - 1))], 1),
        "per_query_recall_at_5": recalls,
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            if k != "per_query_recall_at_5":
                print(f"{k}: {v}")
        weak = sorted(recalls.items(), key=lambda kv: kv[1])[:8]
        print("weakest:", ", ".join(f"{k}={v:.2f}" for k, v in weak))


if __name__ == "__main__":
    main()
