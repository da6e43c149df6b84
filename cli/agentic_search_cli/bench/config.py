"""What ``agentic-search bench`` runs (:class:`BenchConfig`), its defaults, targets and
the names of the stages it reports.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from agentic_search_cli import evaluation as ev

if TYPE_CHECKING:
    pass


#: The golden queries of the bundled catalog (package data, so an installed CLI has them).
GOLDEN_PATH = Path(str(resources.files("agentic_search_cli") / "data" / "tools_golden.jsonl"))
DEFAULT_OUT = Path("benchmarks") / "bench"
JSON_FILE = "bench.json"
MD_FILE = "bench.md"
#: Per-stage latency percentiles drawn as bars, one panel per search block and mode.
STAGES_PLOT = "latency_stages.png"

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
