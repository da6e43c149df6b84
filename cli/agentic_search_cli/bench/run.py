"""The whole bench run, in order: imports, raw model, ingest, raw model again, search."""

from __future__ import annotations

import json
import re
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_search.config import Settings
from agentic_search.ports import Embedder
from agentic_search.sync.files import bundled_catalog_path, read_catalog
from agentic_search.wiring import build_embedder
from agentic_search_cli import evaluation as ev
from agentic_search_cli.bench.config import (
    DATASET_LIMIT,
    GOLDEN_LIMIT,
    GOLDEN_PATH,
    MODES,
    BenchConfig,
    Tracker,
    _no_track,
)
from agentic_search_cli.bench.latency import measure_search
from agentic_search_cli.bench.machine import loadavg, machine_info, measure_imports
from agentic_search_cli.bench.summary import ingest_ratio, raw_summary, targets
from agentic_search_cli.bench.throughput import (
    RAW_MEASURED,
    embedded_texts,
    measure_ingest,
    measure_raw_model,
)

if TYPE_CHECKING:
    from agentic_search.service import SearchService


def read_golden(path: Path = GOLDEN_PATH) -> list[str]:
    """The golden query texts (``agentic_search_cli/data/tools_golden.jsonl``), in file order."""
    return [
        json.loads(line)["query"]
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def without_cache(settings: Settings) -> Settings:
    """``settings`` with the result cache off (``CACHE_BACKEND=none``): every timed search
    must run the pipeline, not return a cached response."""
    if "cache_backend" in type(settings).model_fields:
        return settings.model_copy(update={"cache_backend": "none"})
    return settings


def _temp_settings(settings: Settings, home: Path) -> Settings:
    """Embedded stores in ``home``, no result cache, the rest of ``settings`` (model, rounds,
    batching)."""
    return without_cache(settings).model_copy(
        update={
            "agentic_search_home": home,
            "qdrant_path": None,
            "qdrant_url": None,
            "mongodb_uri": None,
            "collection_prefix": "bench-",
        }
    )


def run_bench(
    config: BenchConfig,
    settings: Settings | None = None,
    dataset_engine: SearchService | None = None,
    embedder: Embedder | None = None,
    track: Tracker = _no_track,
    root: Path | None = None,
    golden_path: Path = GOLDEN_PATH,
) -> dict[str, Any]:
    """Run every measurement and return the JSON-able result (see the module docstring).

    ``dataset_engine`` (domain ``documents``) is required when ``config.dataset`` is set: its
    collection is synced to the corpus (:func:`evaluation.ensure_corpus`) and searched.
    """
    from agentic_search.logic.schema import load_schema
    from agentic_search.service import SearchService

    root = Path.cwd() if root is None else root

    settings = settings or (dataset_engine.settings if dataset_engine else Settings())
    started = datetime.now(UTC)
    result: dict[str, Any] = {
        "measured_at": started.isoformat(timespec="seconds"),
        "machine": machine_info(),
    }
    result["imports"] = measure_imports(root, config.import_runs, track)

    t = time.perf_counter()
    if embedder is None:
        embedder = dataset_engine.deps.embedder if dataset_engine is not None else None
    if embedder is None:
        embedder = build_embedder(settings)
    model_load_s = time.perf_counter() - t
    result["settings"] = {
        "embedder": getattr(embedder, "name", type(embedder).__name__),
        "max_length": getattr(embedder, "max_length", None),
        "embedder_batch_size": getattr(embedder, "batch_size", None),
        "embedding_threads": settings.embedding_threads,
        "max_rounds": settings.max_rounds,
        "caches": "result cache off (CACHE_BACKEND=none); query-vector, record and token-count "
        "caches cleared before every timed search",
        "warmup": config.warmup,
        "repeat": config.repeat,
        "model_load_s": round(model_load_s, 3),
    }

    dataset = None
    if config.dataset is not None:
        if dataset_engine is None:
            raise ValueError("a dataset needs dataset_engine (the documents domain)")
        dataset = ev.load_beir(config.dataset, config.split, dataset_engine.schema).limit(
            config.max_queries
        )
        result["dataset"] = {
            "name": dataset.name,
            "path": str(dataset.path),
            "split": dataset.split,
            "queries": len(dataset.queries),
            "documents": len(dataset.corpus.records),
        }
        ingest_schema = dataset_engine.schema
        ingest_records = dataset.corpus.records
        ingest_source = f"{dataset.name} corpus.jsonl"
    else:
        result["dataset"] = None
        ingest_schema = load_schema("tools")
        ingest_records = read_catalog(bundled_catalog_path(), ingest_schema).records
        ingest_source = "bundled tools catalog"
    if config.ingest_docs is not None:
        ingest_records = ingest_records[: config.ingest_docs]

    with tempfile.TemporaryDirectory(prefix="agentic-search-bench-") as tmp:
        temp = _temp_settings(settings, Path(tmp))
        ingest_engine = SearchService.create(temp, ingest_schema, embedder=embedder)
        golden_engine: SearchService | None = None
        try:
            texts = embedded_texts(ingest_schema, ingest_records)
            local = isinstance(embedder, RAW_MEASURED)
            raw_runs = []
            threads = settings.embedding_threads
            if local:
                raw_runs.append(
                    measure_raw_model(
                        embedder, texts, threads, config.raw_max_texts, track, "raw model (before)"
                    )
                )
            ingest, captured = measure_ingest(ingest_engine, ingest_records, track=track)
            ingest["source"] = ingest_source
            ingest["texts_match_raw_input"] = sorted(captured) == sorted(texts)
            if local:
                raw_runs.append(
                    measure_raw_model(
                        embedder, texts, threads, config.raw_max_texts, track, "raw model (after)"
                    )
                )
            result["model"] = raw_summary(raw_runs, embedder)
            result["ingest"] = ingest_ratio(ingest, raw_runs)
            result["search"] = {}

            if config.golden:
                if not golden_path.is_file():
                    result["search"]["golden"] = {
                        "available": False,
                        "reason": f"golden set not found at {golden_path}",
                    }
                else:
                    if ingest_schema.name == "tools" and config.ingest_docs is None:
                        golden_engine = ingest_engine
                        setup_s = ingest["seconds"]
                    else:
                        golden_engine = SearchService.create(
                            _temp_settings(settings, Path(tmp) / "golden"),
                            "tools",
                            embedder=embedder,
                        )
                        t = time.perf_counter()
                        advance = track("indexing the bundled catalog for the golden set", None)
                        golden_engine.ensure_bundled_catalog(on_progress=advance)
                        setup_s = round(time.perf_counter() - t, 3)
                    golden = read_golden(golden_path)
                    result["search"]["golden"] = {
                        "source": str(golden_path),
                        "catalog_index_s": setup_s,
                        **measure_search(
                            golden_engine,
                            golden,
                            GOLDEN_LIMIT,
                            config.warmup,
                            config.repeat,
                            track=track,
                            label=f"golden queries ({len(golden)} x {len(MODES)} modes)",
                        ),
                    }
            if dataset is not None and dataset_engine is not None:
                advance = track(f"syncing the {dataset.name} evaluation collection", None)
                sync = ev.ensure_corpus(dataset_engine, dataset, on_progress=advance)
                result["search"]["dataset"] = {
                    "collection": dataset_engine.deps.store.collection(dataset_engine.schema),
                    "sync": sync.wire(),
                    **measure_search(
                        dataset_engine,
                        list(dataset.queries.values()),
                        DATASET_LIMIT,
                        config.warmup,
                        config.repeat,
                        track=track,
                        label=f"{dataset.name} queries ({len(dataset.queries)} x 2 modes)",
                    ),
                }
        finally:
            if golden_engine is not None and golden_engine is not ingest_engine:
                golden_engine.close()
            ingest_engine.close()
    result["machine"]["loadavg_at_end"] = loadavg()
    result["seconds"] = round((datetime.now(UTC) - started).total_seconds(), 1)
    result["targets"] = targets(result)
    return result


def default_collection_prefix(dataset: Path) -> str:
    """``eval-<dataset>-``: the collection prefix ``agentic-search eval`` uses by default."""
    name = re.sub(r"[^a-z0-9-]+", "-", dataset.resolve().name.lower()).strip("-") or "dataset"
    return f"eval-{name}-"
