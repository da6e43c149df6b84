"""Garbage-collector settings for long-running search processes.

A loaded engine holds hundreds of thousands of long-lived objects (Qdrant local mode's
payloads, the bm25s vocabulary, pydantic and onnxruntime internals). CPython's cyclic
collector walks all of them on every full (generation 2) collection, and a search allocates
enough short-lived objects to trigger one every few searches: on SciFact (5,296 points) such
a pause took up to 142 ms, which was the tail of the search latency, not the search.

:func:`freeze_long_lived` moves every object alive after warm-up to the permanent generation
(:func:`gc.freeze`, Python 3.7+; the technique Instagram described in "Dismissing Python
Garbage Collection at Instagram", 2017), so later collections only walk what searches
allocate. Frozen objects are still freed by reference counting; only reference cycles among
them are never collected, which is why this is for a process's long-lived state after
warm-up (``serve``, a Lambda container, ``eval`` and ``bench``), never called per search.
"""

from __future__ import annotations

import gc


def freeze_long_lived() -> int:
    """Collect garbage once, then exclude every surviving object from future collections.

    Returns:
        The number of objects now in the permanent generation.
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def unfreeze() -> None:
    """Move the permanent generation back to the collected ones (tests, a reload)."""
    gc.unfreeze()


__all__ = ["freeze_long_lived", "unfreeze"]
