"""The evaluated systems: each maps (engine, query text) to an :class:`Answer`: doc ids, best
first, an error when it failed, and the answer-level verdict where the system gives one.

Systems (all over the same collection, each asked for its top ``TOP_K`` = 100):

* ``bm25``: the keyword index alone (:meth:`KeywordIndex.search` on the query text);
* ``dense``: the ``content`` named vector alone, queried with the embedded query text (a
  schema without a ``content`` aspect: its first aspect, the tools schema's ``identity``:
  name, vendor, category, description);
* ``dense-record``: the schema's whole-record named vector alone
  (:attr:`~agentic_search.logic.schema.DomainSchema.record_aspect`: one vector per record
  over every text field, cosine only; the tools schema's ``record``, the documents schema's
  ``content``), the simplest dense baseline a user would try first;
* ``hybrid-rrf``: the two lists above fused in one step by plain RRF, k = 60
  (:func:`agentic_search.logic.fusion.rrf`; Cormack, Clarke, Buettcher, SIGIR 2009);
* ``executor-1round``: the engine's own pipeline, ``engine.search(query, limit=100)``
  (rule-based intent, plan, executor with one round, fusion, hydration);
* ``executor``: the multi-round executor (``engine.search(query, limit=100)`` with
  ``MAX_ROUNDS`` rounds at most);
* ``hybrid-rrf-qdrant`` (optional, ``--systems``): the same fusion done by Qdrant itself, one
  ``query_points`` call with a dense and a sparse prefetch (top 100 each) fused by Qdrant's
  RRF with k = 60. It needs the collection's sparse ``bm25`` vector, which every collection
  has but local-mode ones written by earlier versions (then the system is reported
  unavailable).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from agentic_search.logic.fusion import DEFAULT_RRF_K, rrf
from agentic_search.ports import EngineHybridRrf
from agentic_search.wire import RankedList

if TYPE_CHECKING:
    from agentic_search.service import SearchService


TOP_K = 100


class Answer(NamedTuple):
    """One system's answer to one query: ``ranking`` (doc ids, best first), ``error`` (why it
    failed or which sources failed; None when all went well) and ``verdict`` (the executor's
    ``answerQuality`` verdict, ``good``/``weak``/``none``; None for systems without one)."""

    ranking: list[str]
    error: str | None = None
    verdict: str | None = None


RRF_K = DEFAULT_RRF_K  # plain RRF, k = 60, whatever RRF_K the engine is configured with
DENSE_ASPECT = "content"

SYSTEMS: tuple[str, ...] = (
    "bm25",
    "dense",
    "dense-record",
    "hybrid-rrf",
    "executor-1round",
    "executor",
)
#: Systems run only when asked for by name (``--systems``).
OPTIONAL_SYSTEMS: tuple[str, ...] = ("hybrid-rrf-qdrant",)
#: Systems that cannot run in this build, with the reason shown in the output.
UNAVAILABLE: dict[str, str] = {}


def bm25_ranking(engine: SearchService, text: str, top_k: int = TOP_K) -> list[str]:
    """Doc ids from the keyword index alone, best first (at most ``top_k``)."""
    return [h.id for h in engine.deps.keyword.search(engine.schema, text, top_k)]


def dense_aspect(engine: SearchService) -> str:
    """The named vector the ``dense`` system searches: ``content`` when the schema has it
    (the documents domain), else the schema's first aspect."""
    names = engine.schema.aspect_names
    return DENSE_ASPECT if DENSE_ASPECT in names else names[0]


def dense_ranking(engine: SearchService, text: str, top_k: int = TOP_K) -> list[str]:
    """Doc ids from the :func:`dense_aspect` named vector with the embedded query, best
    first."""
    vec = engine.deps.embedder.embed_query(text)
    aspect = dense_aspect(engine)
    return [h.id for h in engine.deps.store.query_dense(engine.schema, aspect, vec, top_k)]


def dense_record_ranking(engine: SearchService, text: str, top_k: int = TOP_K) -> list[str]:
    """Doc ids from the schema's whole-record named vector with the embedded query, best
    first (cosine only, nothing else).

    Raises:
        ValueError: when the schema has no whole-record aspect (see :func:`unavailable_reason`).
    """
    aspect = engine.schema.record_aspect
    if not aspect:
        raise ValueError(f"domain {engine.schema.name!r} has no whole-record aspect")
    vec = engine.deps.embedder.embed_query(text)
    return [h.id for h in engine.deps.store.query_dense(engine.schema, aspect, vec, top_k)]


def hybrid_rrf_ranking(
    dense: Sequence[str], bm25: Sequence[str], top_k: int = TOP_K, k: int = RRF_K
) -> list[str]:
    """Plain RRF (k = 60, equal weights) of a dense and a BM25 ranking, top ``top_k`` ids."""
    fused = rrf([RankedList("dense", list(dense)), RankedList("bm25", list(bm25))], k)
    return [f.id for f in fused[:top_k]]


def _run_hybrid(engine: SearchService, text: str) -> Answer:
    return Answer(hybrid_rrf_ranking(dense_ranking(engine, text), bm25_ranking(engine, text)))


def hybrid_rrf_qdrant_ranking(engine: SearchService, text: str, top_k: int = TOP_K) -> list[str]:
    """Doc ids of Qdrant's server-side RRF (k = 60) of a dense and a sparse prefetch."""
    from agentic_search.adapters.qdrant.sparse import QdrantSparseKeywordIndex

    store = engine.deps.store
    if not isinstance(store, EngineHybridRrf):  # unavailable_reason says so first
        raise TypeError(f"{type(store).__name__} has no engine-side hybrid RRF")
    vec = engine.deps.embedder.embed_query(text)
    sparse = QdrantSparseKeywordIndex(store).query_vector(text)
    hits = store.query_hybrid_rrf(engine.schema, dense_aspect(engine), vec, sparse, top_k, RRF_K)
    return [h.id for h in hits]


def unavailable_reason(engine: SearchService, name: str) -> str | None:
    """Why ``name`` cannot run on ``engine``'s collection (None: it can)."""
    if name in UNAVAILABLE:
        return UNAVAILABLE[name]
    if name == "dense-record" and not engine.schema.record_aspect:
        return (
            "the schema has no whole-record aspect (mark one aspect over every text field "
            "`whole_record: true`)"
        )
    if name == "hybrid-rrf-qdrant" and not isinstance(engine.deps.store, EngineHybridRrf):
        return "the vector store has no engine-side hybrid RRF (Qdrant Edge or a Qdrant server)"
    if name == "hybrid-rrf-qdrant" and not engine.deps.store.has_sparse(engine.schema):
        return (
            "needs the collection's sparse bm25 vector (this local-mode collection was built "
            "without it by an earlier version: migrate or rebuild it)"
        )
    return None


def cold_start(engine: SearchService) -> None:
    """Forget what earlier searches left behind (query vectors, records read back, token
    counts of snippets), so the next search gets no head start from another system's run of
    the same query or from earlier queries. Not timed (:func:`evaluate` calls it first)."""
    engine.deps.caches.clear_query_vectors()
    engine.deps.store.clear_record_cache()
    engine.deps.caches.clear_token_counts()


def _run_executor(engine: SearchService, text: str, rounds: int) -> Answer:
    # An empty or over-long query raises ValueError: evaluate() counts it as the system's error.
    resp = engine.search(text, limit=TOP_K, rounds=rounds)
    errors = resp.output.errors
    # each failed source with its reason: "hyde: HydeError" alone said nothing of why
    note = "; ".join(f"{e.source}: {e.error}: {e.message}" for e in errors) if errors else None
    quality = resp.output.answer_quality
    return Answer(
        [c.id for c in resp.output.candidates], note, quality.verdict if quality else None
    )


def _run_executor_1round(engine: SearchService, text: str) -> Answer:
    return _run_executor(engine, text, 1)


def _run_executor_multi(engine: SearchService, text: str) -> Answer:
    return _run_executor(engine, text, max(2, engine.settings.max_rounds))


SystemFn = Callable[["SearchService", str], Answer]

RUNNERS: dict[str, SystemFn] = {
    "bm25": lambda e, t: Answer(bm25_ranking(e, t)),
    "dense": lambda e, t: Answer(dense_ranking(e, t)),
    "dense-record": lambda e, t: Answer(dense_record_ranking(e, t)),
    "hybrid-rrf": _run_hybrid,
    "hybrid-rrf-qdrant": lambda e, t: Answer(hybrid_rrf_qdrant_ranking(e, t)),
    "executor-1round": _run_executor_1round,
    "executor": _run_executor_multi,
}

#: Systems timed cold (:func:`cold_start` before each of their searches).
COLD = frozenset({"executor-1round", "executor"})


def parse_systems(text: str | None) -> list[str]:
    """Comma-separated system names -> list in the given order (None or empty: every one of
    ``SYSTEMS``; ``OPTIONAL_SYSTEMS`` run only when named).

    Raises:
        ValueError: naming the unknown systems and the known ones.
    """
    if not text or not text.strip():
        return list(SYSTEMS)
    names = list(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    known = (*SYSTEMS, *OPTIONAL_SYSTEMS)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown system(s) {', '.join(unknown)}; choose from {', '.join(known)}")
    if not names:
        raise ValueError(f"no system given; choose from {', '.join(known)}")
    return names
