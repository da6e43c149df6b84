"""Process-wide runtime settings for searching: the garbage collector and BLAS threads.

A loaded engine holds hundreds of thousands of long-lived objects (Qdrant local mode's
payloads, the Edge engine's converted answers, pydantic and onnxruntime internals). CPython's cyclic
collector walks all of them on every full (generation 2) collection, and a search allocates
enough short-lived objects to trigger one every few searches: such a pause was the tail of
the search latency, not the search (benchmarks/README.md, "Performance notes moved from the
code").

:func:`freeze_long_lived` moves every object alive after warm-up to the permanent generation
(:func:`gc.freeze`, Python 3.7+; the technique Instagram described in "Dismissing Python
Garbage Collection at Instagram", 2017), so later collections only walk what searches
allocate. Frozen objects are still freed by reference counting; only reference cycles among
them are never collected, which is why this is for a process's long-lived state after
warm-up (``serve``, ``eval`` and ``bench``; the Lambda functions do not call it), never called
per search.
It also raises the young generation's threshold from CPython's 700 allocations to
``YOUNG_THRESHOLD``: a SciFact search allocates enough container objects for ~7 young
collections, and the middle and full ones they cascade into landed on the slowest searches
(the executor's p95 fell with the higher threshold: docs/benchmarks.md). What
a search allocates is freed by reference counting; only reference cycles wait longer for
their collection, and the older generations keep their thresholds.

:func:`limit_blas_threads` caps the BLAS thread pool (threadpoolctl). A search's BLAS work is
matrix-vector products ((5,296 x 384) @ (384,) for SciFact's dense source, small ones for MMR)
where OpenBLAS's threads gain nothing and spin-wait against onnxruntime's and the search's own
threads: on a 2-core machine capping it at 1 made the multi-round search faster (the
figures are in benchmarks/README.md).
"""

from __future__ import annotations

import gc

#: Allocations (minus deallocations) of container objects between two young-generation
#: collections once a process is warmed up (CPython's default: 700).
YOUNG_THRESHOLD = 20_000
#: CPython's default thresholds, which :func:`unfreeze` puts back.
DEFAULT_THRESHOLDS = (700, 10, 10)


def freeze_long_lived() -> int:
    """Collect garbage once, then exclude every surviving object from future collections and
    raise the young generation's threshold to ``YOUNG_THRESHOLD`` (the older two unchanged).

    Returns:
        The number of objects now in the permanent generation.
    """
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
    return gc.get_freeze_count()


def limit_blas_threads(threads: int | None) -> None:
    """Cap the process's BLAS thread pools at ``threads`` (None or 0: leave them as they
    are). Idempotent; the cap holds for the whole process. numpy is imported first: threadpoolctl
    caps only the libraries loaded when it is called, and numpy's BLAS is the one a search
    uses (this no longer depends on what happened to import numpy before an engine is made)."""
    if not threads:
        return
    import numpy  # noqa: F401  (loads the BLAS library the cap is for)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=threads, user_api="blas")


def unfreeze() -> None:
    """Move the permanent generation back to the collected ones and put CPython's default
    thresholds back (tests, a reload)."""
    gc.unfreeze()
    gc.set_threshold(*DEFAULT_THRESHOLDS)


__all__ = [
    "DEFAULT_THRESHOLDS",
    "YOUNG_THRESHOLD",
    "freeze_long_lived",
    "limit_blas_threads",
    "unfreeze",
]
