"""Query embeddings for a round: each distinct text embedded once, under the source deadline.

Vectors are kept in the process caches (LRU of :data:`QUERY_VECTOR_CACHE` texts per embedder),
and a text another thread is embedding right now is waited for, not embedded twice (the Map's
sub-queries of one round share one embedding). A hanging embedding API is given up at the
deadline and fails only the dense sources that need its vectors. A collection built by another
embedder (:mod:`agentic_search.logic.embedder_identity`) fails them too, with one message naming
both.
"""

from __future__ import annotations

import concurrent.futures as cf
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from agentic_search.dependencies import Dependencies
from agentic_search.logic.embedder_identity import check_identity
from agentic_search.ports import Embedder, EmbedderError
from agentic_search.wire import QueryPlan

#: Query texts whose vectors are kept (LRU): sub-queries of one round and repeated queries
#: embed a text once.
QUERY_VECTOR_CACHE = 256

#: Embedding calls still running in their daemon threads (given up at a deadline or not yet
#: done): native code (onnxruntime) must not be torn down under them at interpreter exit,
#: which aborts the process (``terminate called without an active exception``, rc 134).
_LIVE: set[threading.Thread] = set()
_LIVE_LOCK = threading.Lock()


def drain_embedding_threads(timeout_s: float = 30.0) -> int:
    """Wait up to ``timeout_s`` seconds in total for embedding calls still running (see
    :func:`embed_within`); returns how many are still running afterwards (0 when all ended).

    A process that exits while one runs in native code aborts, so the command line calls
    this before it returns its exit code, and ends with ``os._exit`` when some remain.
    """
    deadline = time.monotonic() + timeout_s
    with _LIVE_LOCK:
        live = list(_LIVE)
    for thread in live:
        thread.join(max(0.0, deadline - time.monotonic()))
    with _LIVE_LOCK:
        return sum(1 for t in _LIVE if t.is_alive())


def embed_within(
    embedder: Embedder,
    texts: Sequence[str],
    timeout_s: float,
    before: Callable[[], object] | None = None,
) -> Any:
    """Search query vectors of ``texts`` (the embedder's ``embed_queries`` when it has one,
    else ``embed_documents``; an ``(n, dim)`` array), given up after ``timeout_s`` (a search's
    per-source deadline): a hanging embedding API must not hold the whole search. The call
    goes on in a daemon thread and its result is dropped. ``before`` runs first in the same
    thread, under the same deadline (the search's embedder identity check reads the store).

    Raises:
        EmbedderError: when the embedder does not answer in time (anything it raises is
            re-raised as is).
    """
    box: dict[str, Any] = {}
    done = threading.Event()

    def call() -> None:
        try:
            if before is not None:
                before()
            embed = getattr(embedder, "embed_queries", None) or embedder.embed_documents
            box["value"] = embed(texts)
        except BaseException as exc:  # handed to the caller
            box["error"] = exc
        finally:
            done.set()
            with _LIVE_LOCK:
                _LIVE.discard(threading.current_thread())

    thread = threading.Thread(target=call, name="embed", daemon=True)
    with _LIVE_LOCK:
        _LIVE.add(thread)
    thread.start()
    if not done.wait(timeout_s):
        raise EmbedderError(f"no embedding within {timeout_s:.1f} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def document_vectors(embedder: Embedder, texts: Sequence[str]) -> Any:
    """Document-side vectors of ``texts`` (``(n, dim)``) computed at search time: the
    capability entries, the words no record holds. When the embedder's two sides are one model
    with no prefix (its identity names no ``query_prefix`` or ``passage_prefix``) and it has
    ``embed_queries``, through that: the vectors are the same, and a local model's document
    session (a second onnxruntime session, costly to load and to hold in a CLI search:
    docs/benchmarks.md) is not made for a few words. Otherwise ``embed_documents`` (e5's
    ``passage: `` side).

    Raises:
        EmbedderError: when the model fails.
    """
    from agentic_search.logic.embedder_identity import identity_of

    identity = identity_of(embedder)
    queries = getattr(embedder, "embed_queries", None)
    if queries is not None and not identity.query_prefix and not identity.passage_prefix:
        return queries(list(texts))
    return embedder.embed_documents(list(texts))


def embed_texts(deps: Dependencies, plan: QueryPlan) -> tuple[dict[str, Any], dict[str, str]]:
    """Vectors of the plan's dense query texts (text -> vector) and the texts that failed
    (text -> "Error: message"); see the module docstring."""
    texts = list(
        dict.fromkeys(
            vs.text or ""
            for vs in plan.vector_sources
            if vs.query_vector_source != "reference_tool"
        )
    )
    vectors: dict[str, Any] = {}
    errors: dict[str, str] = {}
    if not texts:
        return vectors, errors
    caches = deps.caches
    embedder = deps.embedder
    tag = id(embedder)  # a swapped embedder never sees another one's vectors
    mine: list[str] = []  # texts this call embeds
    waits: dict[str, cf.Future] = {}  # texts another thread is embedding right now
    with caches.vectors_lock:
        for t in texts:
            key = (tag, t)
            if key in caches.query_vectors:
                caches.query_vectors.move_to_end(key)
                vectors[t] = caches.query_vectors[key]
            elif key in caches.in_flight:
                waits[t] = caches.in_flight[key]
            else:
                caches.in_flight[key] = cf.Future()
                mine.append(t)
    if mine:
        warm_up = getattr(embedder, "warm_up", None)
        if warm_up is not None:  # a local model's session: start-up, not the search's time
            try:
                with caches.setup():
                    warm_up()
            except Exception:
                pass
        try:
            # bounded by the source deadline: a hanging embedding API fails only dense
            # the collection's recorded embedder is checked first: a mismatch fails the dense
            # sources with the message naming both (EmbedderMismatch)
            embedded = embed_within(
                embedder,
                mine,
                deps.settings.source_timeout_s,
                lambda: check_identity(deps.store, deps.schema, embedder),
            )
            failure: Exception | None = None
        except Exception as exc:  # any embedder failure fails only the dense sources
            embedded, failure = [], exc
        with caches.vectors_lock:
            for i, t in enumerate(mine):
                fut = caches.in_flight.pop((tag, t))
                if failure is not None:
                    fut.set_exception(failure)
                    errors[t] = f"{type(failure).__name__}: {failure}"
                    continue
                vectors[t] = embedded[i]
                fut.set_result(embedded[i])
                caches.query_vectors[(tag, t)] = embedded[i]
                while len(caches.query_vectors) > QUERY_VECTOR_CACHE:
                    caches.query_vectors.popitem(last=False)
    for t, fut in waits.items():  # sub-queries of one round share one embedding
        try:
            vectors[t] = fut.result()
        except Exception as exc:
            errors[t] = f"{type(exc).__name__}: {exc}"
    return vectors, errors


__all__ = ["QUERY_VECTOR_CACHE", "embed_texts", "embed_within"]
