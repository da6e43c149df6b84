"""Search latency per stage.

Stages come from ``execution_stats.stage_ms``, overridden by the sums of the retrieval
report's per-round ``stage_ms`` (multi-round); ``embed`` is summed over the executor's
``run_sources`` calls; ``dense``, ``sparse`` and ``structured`` are the summed times of that
kind's source calls in one search (they run in parallel, so they overlap ``retrieve``, the
wall time of the source pool); ``total`` is the wall time of ``engine.search``. Percentiles
p50/p95/p99 (numpy linear interpolation) are over the searches where the stage ran (``n``).
The result cache is off (``CACHE_BACKEND=none``) and the executor's query-vector cache is
cleared before every timed search, so each one embeds its query.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from agentic_search.process_tuning import freeze_long_lived
from agentic_search_cli import evaluation as ev
from agentic_search_cli.bench.config import (
    _SKIP_STAGES,
    DEFAULT_REPEAT,
    DEFAULT_WARMUP,
    MODES,
    STAGE_ORDER,
    Tracker,
    _no_track,
)

if TYPE_CHECKING:
    from agentic_search.service import SearchService


@contextmanager
def record_sources(engine: SearchService) -> Iterator[list[tuple[list[Any], dict[str, float]]]]:
    """Collect ``(source results, stage ms)`` of every source run the engine's pipeline makes
    (every round and sub-query, relaxation included) while the block runs (the process caches'
    ``source_log``)."""
    caches = engine.deps.caches
    calls: list[tuple[list[Any], dict[str, float]]] = []
    caches.source_log = calls
    try:
        yield calls
    finally:
        caches.source_log = None


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
    engine.deps.embedder  # noqa: B018 - load the model before the warm-up
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
