"""The search engine: wires schema, adapters, extractor, planner and executor for one domain.

This is what the CLI (and later the local runner and the Lambda steps) call. It knows nothing
of Lambda or Step Functions. Adapters are chosen from :class:`Settings`:

* Qdrant server when ``QDRANT_URL`` is set, local mode otherwise;
* BM25 as Qdrant sparse vectors on a server, bm25s beside the local store otherwise;
* MongoDB as the structured source when ``MONGODB_URI`` is set, a Qdrant payload filter
  otherwise;
* OpenAI-compatible embeddings when ``EMBEDDING_MODEL`` is set, local MiniLM otherwise.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentic_search.adapters.caches import CacheError, ResultCache, build_cache
from agentic_search.adapters.embedders import Embedder, build_embedder
from agentic_search.adapters.hyde import HydeGenerator, build_hyde
from agentic_search.adapters.keyword_index import (
    Bm25sKeywordIndex,
    KeywordIndex,
    QdrantSparseKeywordIndex,
)
from agentic_search.adapters.llm import LLMIntentPlanner, build_llm
from agentic_search.adapters.qdrant.store import QdrantStore
from agentic_search.adapters.rerank import Reranker, build_reranker
from agentic_search.adapters.structured import (
    MongoStructuredStore,
    QdrantPayloadStructuredStore,
    StructuredStore,
)
from agentic_search.config import Settings
from agentic_search.domain.chunking import chunk_records
from agentic_search.domain.intent import CatalogLookup, RuleBasedIntentExtractor
from agentic_search.domain.planner import RuleBasedPlanner
from agentic_search.domain.schema import DomainSchema, load_schema
from agentic_search.pipeline.executor import QueryExecutor
from agentic_search.pipeline.rounds import MultiRoundExecutor
from agentic_search.process_tuning import freeze_long_lived, limit_blas_threads
from agentic_search.state import (
    IntentState,
    SearchResponse,
)
from agentic_search.sync.files import CatalogRead, LineError, bundled_catalog_path, read_catalog
from agentic_search.sync.indexer import Indexer, WriteStats

DEFAULT_BATCH = 64


@dataclass
class IngestReport:
    """Outcome of an ingest: counts, rejected lines, timings."""

    path: str
    lines: int
    valid: int
    errors: list[LineError]
    stats: WriteStats
    seconds: float

    @property
    def docs_per_s(self) -> float:
        """Valid records processed per second."""
        return self.valid / self.seconds if self.seconds > 0 else 0.0

    def wire(self) -> dict[str, Any]:
        """JSON-able summary."""
        return {
            "path": self.path,
            "lines": self.lines,
            "valid": self.valid,
            "inserted": self.stats.inserted,
            "updatedVectors": self.stats.updated_vectors,
            "updatedPayload": self.stats.updated_payload,
            "unchanged": self.stats.unchanged,
            "embeddedTexts": self.stats.embedded_texts,
            "errors": [
                {"line": e.line, "id": e.record_id, "reason": e.reason} for e in self.errors
            ],
            "seconds": round(self.seconds, 3),
            "docsPerSecond": round(self.docs_per_s, 1),
        }


class SearchEngine:
    """One domain's search and ingest; see the module docstring for adapter selection."""

    def __init__(
        self,
        settings: Settings | None = None,
        domain: str | DomainSchema = "tools",
        *,
        store: QdrantStore | None = None,
        embedder: Embedder | None = None,
        keyword: KeywordIndex | None = None,
        structured: StructuredStore | None = None,
        reranker: Reranker | None = None,
        hyde: HydeGenerator | None = None,
        cache: ResultCache | None = None,
    ) -> None:
        self.settings = settings or Settings()
        limit_blas_threads(self.settings.blas_threads)  # BLAS_THREADS: see process_tuning.py
        self.schema = domain if isinstance(domain, DomainSchema) else load_schema(domain)
        self.store = store or QdrantStore(self.settings)
        self._embedder = embedder
        if keyword is not None:
            self.keyword = keyword
        elif self.store.server_mode:
            self.keyword = QdrantSparseKeywordIndex(
                self.store, avg_doc_len=self.settings.bm25_avg_doc_len
            )
        else:
            self.keyword = Bm25sKeywordIndex(self.store, self.settings.bm25_path)
        self.structured = structured or self._structured_from_settings()
        self.executor = QueryExecutor(
            self.schema,
            self.store,
            self,
            self.keyword,
            self.structured,
            self.settings,
        )
        self.planner = RuleBasedPlanner(self.schema, rrf_k=self.settings.rrf_k)
        self._reranker = reranker
        self._hyde = hyde
        self._rounds: MultiRoundExecutor | None = None
        self._cache = cache
        self._runner: Any = None  # the LocalRunner over this engine, made on first search
        self._lookup: CatalogLookup | None = None
        self._extractor: RuleBasedIntentExtractor | None = None
        self._llm: LLMIntentPlanner | None = None
        self._llm_built = False

    def _structured_from_settings(self) -> StructuredStore:
        if self.settings.mongodb_uri:
            from pymongo import MongoClient

            client: Any = MongoClient(
                self.settings.mongodb_uri.get_secret_value(), serverSelectionTimeoutMS=2000
            )
            return MongoStructuredStore(
                client[self.settings.mongodb_database], self.settings.collection_prefix
            )
        return QdrantPayloadStructuredStore(self.store)

    @property
    def embedder(self) -> Embedder:
        """The embedder, loaded on first use."""
        if self._embedder is None:
            self._embedder = build_embedder(self.settings)
        return self._embedder

    @property
    def cache(self) -> ResultCache:
        """The result cache (``CACHE_BACKEND``), opened on first use."""
        if self._cache is None:
            self._cache = build_cache(self.settings)
        return self._cache

    @property
    def indexer(self) -> Indexer:
        """The writer of this engine's stores."""
        return Indexer(self.store, self.embedder, self.keyword)

    # ----- ingest -----------------------------------------------------------------------------

    def ingest_records(
        self,
        records: Sequence[dict[str, Any]],
        batch_size: int = DEFAULT_BATCH,
        on_progress: Callable[[int], None] | None = None,
    ) -> WriteStats:
        """Upsert validated records in batches; the keyword index is refreshed once at the end.
        ``on_progress(n)`` gets the number of ``records`` done (not of their chunks).

        Ingest is sync with insert events: each batch goes through
        :func:`agentic_search.sync.core.apply_changes` (unversioned inserts), so there is one
        writer.

        Raises:
            EmbedderError, VectorStoreError: the first error of a record that failed (the
                records before it, and the others of its batch, are written).
        """
        from agentic_search.sync.core import apply_changes, insert_changes

        total = WriteStats()
        if self.schema.chunking is not None:
            records = chunk_records(self.schema, records)
        for i in range(0, len(records), batch_size):
            batch = records[i : i + batch_size]
            report = apply_changes(
                self,
                insert_changes(self.schema, batch),
                refresh_keyword=False,
                bump_catalog=False,
            )
            total.add(report.stats)
            if report.failed and report.failed[0].exception is not None:
                if total.changed:
                    self.keyword.refresh(self.schema)
                raise report.failed[0].exception
            if on_progress:  # in source records (a record's first chunk), as on_start counts
                on_progress(sum(1 for r in batch if not r.get("chunk_id")))
        if total.changed:
            self.keyword.refresh(self.schema)
            # Cached answers were computed on the old catalog: a new version retires them. An
            # unreachable cache must not fail the ingest (its entries expire by TTL).
            with contextlib.suppress(CacheError):
                self.cache.bump_catalog_version(self.schema.name)
        self.forget_catalog_lookups()
        return total

    def forget_catalog_lookups(self) -> None:
        """Drop the names -> ids lookup and the extractor built on it (after a write)."""
        self._lookup = None
        self._extractor = None

    def ingest_file(
        self,
        path: Path,
        batch_size: int = DEFAULT_BATCH,
        on_start: Callable[[int], None] | None = None,
        on_progress: Callable[[int], None] | None = None,
        read: CatalogRead | None = None,
    ) -> IngestReport:
        """Read, validate and upsert a JSONL catalog; bad lines are reported, the rest go in.

        Raises:
            FileNotFoundError: when the file does not exist.
            VectorStoreError: when the collection does not match the embedder.
        """
        t0 = time.perf_counter()
        catalog = read or read_catalog(path, self.schema)
        if on_start:
            on_start(len(catalog.records))
        stats = self.ingest_records(catalog.records, batch_size, on_progress)
        return IngestReport(
            path=str(path),
            lines=catalog.lines,
            valid=len(catalog.records),
            errors=catalog.errors,
            stats=stats,
            seconds=time.perf_counter() - t0,
        )

    def is_empty(self) -> bool:
        """Whether the domain's collection holds no records."""
        return self.store.count(self.schema) == 0

    def ensure_bundled_catalog(
        self,
        on_start: Callable[[int], None] | None = None,
        on_progress: Callable[[int], None] | None = None,
    ) -> IngestReport | None:
        """Ingest the bundled tools catalog when the tools collection is empty (first use)."""
        if self.schema.name != "tools" or not self.is_empty():
            return None
        return self.ingest_file(bundled_catalog_path(), on_start=on_start, on_progress=on_progress)

    # ----- search -----------------------------------------------------------------------------

    def catalog_lookup(self) -> CatalogLookup:
        """Names -> ids of the indexed records (for reference tools), cached until a write."""
        if self._lookup is None:
            names: dict[str, str] = {}
            if self.store.exists(self.schema) and self.schema.name == "tools":
                title = self.schema.title_field
                for p in self.store.scroll(self.schema, payload=[self.schema.id_field, title]):
                    if p.get(title):
                        names[str(p[title]).lower()] = str(p[self.schema.id_field])
            schema = self.schema

            def record(rid: str) -> dict[str, Any] | None:
                rec = self.store.get_records(schema, [rid]).get(rid)
                return dict(rec.payload or {}) if rec else None

            self._lookup = CatalogLookup(names=names, record=record)
            self._extractor = None
        return self._lookup

    def extract(self, query: str) -> IntentState:
        """Rule-based intent of ``query``.

        Raises:
            ValueError: for an empty or over-long query.
        """
        lookup = self.catalog_lookup()
        if self._extractor is None:
            self._extractor = RuleBasedIntentExtractor(self.schema, lookup)
        return self._extractor.extract(query)

    @property
    def llm(self) -> LLMIntentPlanner | None:
        """The LLM intent extractor and planner (``LLM``, ``OPENAI_BASE_URL``, ...), or None
        when the rules are to run alone. Settable (tests inject a client)."""
        if not self._llm_built:
            self._llm = build_llm(self.schema, self.settings, self.catalog_lookup)
            self._llm_built = True
        return self._llm

    @llm.setter
    def llm(self, value: LLMIntentPlanner | None) -> None:
        self._llm, self._llm_built = value, True

    @property
    def multi_round(self) -> MultiRoundExecutor:
        """The multi-round executor (reranker and HyDE from settings unless given)."""
        if self._rounds is None:
            reranker = self._reranker or build_reranker(self.settings)
            hyde = self._hyde or build_hyde(self.settings)
            self._rounds = MultiRoundExecutor(self.executor, reranker=reranker, hyde=hyde)
        return self._rounds

    def warm_up(self, query: str = "warm up", freeze: bool = True) -> None:
        """Load what a search needs (embedding model, keyword index, dense matrix, catalog
        lookup) by running ``query`` through the executor without the result cache, then,
        with ``freeze``, exclude everything alive from garbage collection
        (:func:`agentic_search.process_tuning.freeze_long_lived`). For a long-running process
        before its first request (``serve`` calls it; the Lambda handlers do not yet). An
        empty collection only loads the model.
        """
        self.embedder.embed_query(query)
        if not self.is_empty():
            intent = self.extract(query)
            self.multi_round.run(self.planner.plan(intent, limit=10), intent)
        if freeze:
            freeze_long_lived()

    def search(self, query: str, limit: int = 10, rounds: int | None = None) -> SearchResponse:
        """Run the search state machine's steps in-process (the local runner): cache, intent,
        plan, executor rounds, finalize. Failing sources are listed in ``output.errors``.

        ``rounds`` (default ``MAX_ROUNDS``, 3) caps the executor rounds.

        Raises:
            ValueError: for an empty or over-long query, a limit outside 1..100 or rounds
                outside 1..5 (a pydantic ``ValidationError`` naming the field).
            agentic_search.pipeline.runner.SearchFailed: when no path could answer.
        """
        from agentic_search.pipeline.runner import LocalRunner
        from agentic_search.state import SearchRequest

        request = SearchRequest(query=query, limit=limit, rounds=rounds, domain=self.schema.name)
        if self._runner is None:
            self._runner = LocalRunner.for_engine(self)
        result = self._runner.run(request)
        assert result.state.response is not None  # Finalize always sets it or raises
        # Finalize's own object when it ran here (parsing the JSON back took milliseconds);
        # a cached response is parsed.
        return result.state.built_response or SearchResponse.from_wire(result.state.response)

    def close(self) -> None:
        """Release the stores and the runner's threads."""
        if self._runner is not None:
            self._runner.close()
        self.store.close()
