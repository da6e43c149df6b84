"""What one domain's search and sync work with: settings, schema, adapters by port, and the
process's caches of derived data.

:class:`Dependencies` is built by :mod:`agentic_search.wiring` (the only module that names an
adapter) and handed to every pipeline step and sync function (the dependencies they are
injected with, ``deps``), so a test hands in fakes as arguments instead of
monkeypatching. (It was ``Components``; in a search pipeline a component is a step, as in
Haystack, which this is not.) Adapters are built on first use: a step that needs no
embedder (GradeRound, CacheCheck) never loads the model or opens the store.

:class:`ProcessCaches` holds what a warm process keeps between requests (query vectors, token
counts, the catalog's names), as plain data; the pipeline owns the logic that fills and reads it.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from agentic_search.logic.text import Analyzer, default_analyzer

if TYPE_CHECKING:  # the helpers' modules load on first use (a light Lambda never needs them)
    from agentic_search.config import Settings
    from agentic_search.logic.coverage import DeterministicGrader, EvidenceMatcher
    from agentic_search.logic.entities import EntityIndex
    from agentic_search.logic.intent import CatalogLookup
    from agentic_search.logic.intent_rules import RuleBasedIntentExtractor
    from agentic_search.logic.planner import RuleBasedPlanner
    from agentic_search.logic.schema import DomainSchema
    from agentic_search.ports import (
        ArrayMemo,
        Embedder,
        Enricher,
        EnrichmentStore,
        HydeGenerator,
        IntentPlanner,
        KeywordIndex,
        Reranker,
        ResultCache,
        RoundQueryWriter,
        StructuredStore,
        SyncStatusStore,
        VectorStore,
        WriteJournal,
    )

#: The adapters a :class:`Dependencies` provides, each built by its factory on first use.
PORTS = (
    "store",
    "keyword",
    "structured",
    "embedder",
    "reranker",
    "hyde",
    "llm",
    "round_writer",
    "cache",
    "sync_status",
    "journal",
    "memo",
    "enricher",
    "enrichment_store",
)

Factory = Callable[["Dependencies"], Any]

#: Points :meth:`Dependencies.index_enriched` reads at most.
ENRICHED_PROBE = 256


@dataclass
class ProcessCaches:
    """A process's caches for one domain (plain data; locks guard the mutable maps).

    ``query_vectors``: (embedder id, text) -> vector, LRU; ``in_flight``: texts being
    embedded right now (futures), so sub-queries of one round share one embedding;
    ``token_counts``: snippet text -> word-piece count, LRU; ``catalog``: the catalog's names
    -> ids and the rule-based extractor built on them, both dropped after a write;
    ``entities``: the collection's entity index (names -> ids), dropped after a write;
    ``source_log``: when a list, every source run appends ``(results, stage ms)`` to it (what
    ``agentic-search bench`` reads per stage); ``setup_ms``: start-up work done so far (ms,
    see :meth:`setup`).
    """

    query_vectors: OrderedDict[tuple[int, str], Any] = field(default_factory=OrderedDict)
    in_flight: dict[tuple[int, str], Any] = field(default_factory=dict)
    vectors_lock: threading.Lock = field(default_factory=threading.Lock)
    token_counts: OrderedDict[str, int] = field(default_factory=OrderedDict)
    tokens_lock: threading.Lock = field(default_factory=threading.Lock)
    catalog: CatalogLookup | None = None
    extractor: RuleBasedIntentExtractor | None = None
    capabilities: Any = None
    """The domain's capability matcher (entries embedded once per process; kept over writes)."""
    entities: EntityIndex | None = None
    enriched: bool | None = None
    """Whether the index holds enriched records (None: not looked at since the last write)."""
    source_log: list[tuple[list[Any], dict[str, float]]] | None = None
    setup_ms: float = 0.0
    setup_lock: threading.Lock = field(default_factory=threading.Lock)
    views: OrderedDict[str, ProcessCaches] = field(default_factory=OrderedDict)
    """Per effective access set (its key): the caches of that caller's view of the catalog
    (names, extractor, entities), LRU, dropped with the catalog after a write."""
    parent: ProcessCaches | None = None
    """The process's caches this view's caches belong to (None for the process's own)."""

    def view(self, key: str, limit: int = 64) -> ProcessCaches:
        """The caches of the caller view ``key``: its own names, extractor and entity index,
        the process's query vectors, token counts and capability matcher shared."""
        with self.setup_lock:
            out = self.views.get(key)
            if out is None:
                out = ProcessCaches(
                    query_vectors=self.query_vectors,
                    in_flight=self.in_flight,
                    vectors_lock=self.vectors_lock,
                    token_counts=self.token_counts,
                    tokens_lock=self.tokens_lock,
                    source_log=self.source_log,
                    parent=self,
                )
                self.views[key] = out
                while len(self.views) > limit:
                    self.views.popitem(last=False)
            else:
                self.views.move_to_end(key)
            return out

    @property
    def root(self) -> ProcessCaches:
        """The process's own caches (this, unless this is a caller view's)."""
        return self.parent or self

    @contextmanager
    def setup(self) -> Iterator[None]:
        """Count the block's wall time (ms) as start-up work in :attr:`setup_ms`: building an
        adapter, loading a model session. Round budgets leave it out (a round is judged by
        its search, not by the process's first use of the store or the model)."""
        t = time.perf_counter()
        try:
            yield
        finally:
            with self.setup_lock:
                self.setup_ms += (time.perf_counter() - t) * 1000.0

    def forget_catalog(self) -> None:
        """Drop the names -> ids lookup and the extractor built on it (after a write)."""
        self.catalog = None
        self.extractor = None
        self.entities = None
        self.views.clear()
        self.enriched = None

    def forget_entities(self) -> None:
        """Drop the entity index and what is built on it (after the graph changed)."""
        self.forget_catalog()

    def clear_query_vectors(self) -> None:
        """Forget cached query vectors (benchmarks time searches cold)."""
        with self.vectors_lock:
            self.query_vectors.clear()

    def clear_token_counts(self) -> None:
        """Forget memoized token counts (benchmarks time searches cold)."""
        with self.tokens_lock:
            self.token_counts.clear()


class Dependencies:
    """One domain's settings, schema, adapters (lazily built) and caches.

    Adapters are the :data:`PORTS`, read as attributes (``deps.store``); each is taken
    from ``given`` or built once by ``factories[name](self)`` on first access. ``planner``,
    ``analyzer``, ``matcher`` and ``grader`` are the domain's pure helpers, built here.

    Raises (on access):
        KeyError: for an adapter that is neither given nor has a factory.
    """

    store: VectorStore
    keyword: KeywordIndex
    structured: StructuredStore
    embedder: Embedder
    reranker: Reranker | None
    hyde: HydeGenerator | None
    llm: IntentPlanner | None
    round_writer: RoundQueryWriter | None
    cache: ResultCache
    sync_status: SyncStatusStore
    journal: WriteJournal
    memo: ArrayMemo
    enricher: Enricher | None
    enrichment_store: EnrichmentStore

    def __init__(
        self,
        settings: Settings,
        schema: DomainSchema,
        factories: Mapping[str, Factory] | None = None,
        caches: ProcessCaches | None = None,
        **given: Any,
    ) -> None:
        unknown = set(given) - set(PORTS)
        if unknown:
            raise TypeError(f"unknown adapters {sorted(unknown)} (known: {', '.join(PORTS)})")
        self.settings = settings
        self.schema = schema
        self.caches = caches or ProcessCaches()
        self.analyzer: Analyzer = default_analyzer()
        self._factories = dict(factories or {})
        self._built: dict[str, Any] = dict(given)
        self._lock = threading.RLock()
        self.access_key: str | None = None
        """The effective access set these dependencies read as (None: the whole catalog;
        set by :func:`agentic_search.pipeline.access.caller_view`)."""

    @cached_property
    def planner(self) -> RuleBasedPlanner:
        """The domain's rule-based planner (built on first use)."""
        from agentic_search.logic.planner import RuleBasedPlanner

        return RuleBasedPlanner(
            self.schema, rrf_k=self.settings.rrf_k, enriched=self.index_enriched
        )

    def index_enriched(self) -> bool:
        """Whether the domain's index holds enriched records (any of its first points has an
        enrichment), kept in the process caches until the next write."""
        caches = self.caches
        if caches.enriched is None:
            caches.enriched = self._has_enrichment()
        return caches.enriched

    def _has_enrichment(self) -> bool:
        schema = self.schema
        if schema.enrichment is None:
            return False
        from itertools import islice

        from agentic_search.wire.records import ENRICHMENT_KEY

        try:
            if not self.store.exists(schema):
                return False
            points = self.store.scroll(schema, payload=[ENRICHMENT_KEY])
            return any(ENRICHMENT_KEY in p for p in islice(points, ENRICHED_PROBE))
        except Exception:  # a store that cannot say: plan as without (the search reports it)
            return False

    @cached_property
    def matcher(self) -> EvidenceMatcher:
        """What decides whether evidence supports a coverage target (built on first use)."""
        from agentic_search.logic.coverage import EvidenceMatcher

        return EvidenceMatcher(self.schema, self.analyzer)

    @cached_property
    def grader(self) -> DeterministicGrader:
        """The coverage grader over :attr:`matcher` (built on first use)."""
        from agentic_search.logic.coverage import DeterministicGrader

        return DeterministicGrader(self.schema, self.matcher)

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes not set in __init__: the lazily built adapters.
        if name not in PORTS:
            raise AttributeError(name)
        with self._lock:
            if name not in self._built:
                if name not in self._factories:
                    raise KeyError(f"no {name!r} adapter given and no factory to build one")
                with self.caches.setup():
                    self._built[name] = self._factories[name](self)
            return self._built[name]

    def built(self, name: str) -> bool:
        """Whether adapter ``name`` exists already (given, or built by an earlier access)."""
        return name in self._built

    def embedder_model(self) -> str:
        """The embedder's model name (its identity's ``model``, what the collection records):
        read from the embedder when it exists already, else from the settings
        (:attr:`~agentic_search.config.Settings.embedder_model`), so a step that embeds
        nothing (Finalize) does not build one to learn which thresholds apply."""
        if self.built("embedder"):
            from agentic_search.logic.embedder_identity import identity_of

            return identity_of(self.embedder).model
        return self.settings.embedder_model

    def derive(self, caches: ProcessCaches | None = None, **given: Any) -> Dependencies:
        """The same dependencies with some adapters replaced (``given``); everything built so
        far, the factories and the process caches (or ``caches``) are shared."""
        out = Dependencies(self.settings, self.schema, self._factories, caches or self.caches)
        out._built = {**self._built, **given}
        out.access_key = self.access_key
        return out

    def close(self) -> None:
        """Close what was built and can be closed (the store, a SQLite cache)."""
        for name in PORTS:
            adapter = self._built.get(name)
            close = getattr(adapter, "close", None)
            if callable(close):
                close()


__all__ = ["PORTS", "Dependencies", "Factory", "ProcessCaches"]
