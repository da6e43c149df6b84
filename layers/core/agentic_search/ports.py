"""The ports: every external system the core talks to, as a Protocol, with the errors of its
contract.

Long: every port and its errors in one file, so the contract the core depends on reads in one
place; it holds only Protocols, their errors and docstrings.

The core (``domain``, ``pipeline``, ``sync``) depends only on these; ``adapters`` implement
them (Qdrant Edge, a Qdrant server or local mode, MongoDB, the local MiniLM or an OpenAI-compatible
API, SQLite or DynamoDB); :mod:`agentic_search.wiring` is the only module that names an
adapter. Nothing here imports an engine or numpy at import time.

| port | production | embedded default |
|---|---|---|
| :class:`VectorStore` | Qdrant server (``QDRANT_URL``) | Qdrant Edge (in-process) |
| :class:`KeywordIndex` | Qdrant sparse BM25 vectors | Edge sparse BM25 vectors |
| :class:`StructuredStore` | MongoDB (``MONGODB_URI``) | Qdrant payload filter |
| :class:`Embedder` | OpenAI-compatible API | all-MiniLM-L6-v2 int8 ONNX |
| :class:`Reranker` | rerank API / ONNX cross-encoder | none |
| :class:`HydeGenerator`, :class:`IntentPlanner`, :class:`RoundQueryWriter` | LLM | none |
| :class:`ResultCache` | DynamoDB | SQLite |
| :class:`SyncStatusStore` | DynamoDB | SQLite |
| :class:`SnapshotRegistry` | S3 objects + a DynamoDB pointer | a folder + a pointer file |
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:  # numpy and the schema only for annotations: no import cost here
    import numpy as np

    from agentic_search.logic.llm_budget import Budget
    from agentic_search.logic.schema import DomainSchema
    from agentic_search.wire import (
        EmbedderIdentity,
        Filter,
        IntentState,
        PointWrite,
        QueryPlan,
        ScoredRecord,
        SparseVector,
        StoredRecord,
        VectorUpdate,
    )
    from agentic_search.wire.snapshots import SnapshotLease, SnapshotPointer
    from agentic_search.wire.sync import SyncEntry

# ----- errors of the contracts ------------------------------------------------------------------


class VectorStoreError(RuntimeError):
    """A collection is missing, incompatible, or the vector store failed."""


class InterruptedWrite(VectorStoreError):
    """A reader found the domain's index with a write journaled and no writer at work: the
    write stopped half-way, and its state is not to be read until it is completed."""


class EmbedderMismatch(VectorStoreError):
    """The collection was built by another embedder than the current one (the message names
    both identities and the two ways out: rebuild, or configure the old embedder back)."""


class KeywordIndexError(RuntimeError):
    """The keyword index cannot be read (a damaged file): its source fails, the others go
    on; the message names the file and the repair command."""


class EmbedderError(RuntimeError):
    """The embedding model could not be loaded or failed on a batch."""


class RerankerError(RuntimeError):
    """A reranker could not be loaded or did not answer."""


class HydeError(RuntimeError):
    """The LLM did not produce a hypothetical document."""


class EnrichmentError(RuntimeError):
    """An enrichment call failed (timeout, provider error, an answer that does not parse)."""


class CacheError(RuntimeError):
    """The cache backend failed (a cache failure never fails a search)."""


class SnapshotError(VectorStoreError):
    """A published snapshot cannot be read or published (the message names the object)."""


class SnapshotBusy(SnapshotError):
    """Another writer holds the collection's lease (the message names it and its expiry)."""


class SnapshotConflict(SnapshotError):
    """The pointer moved since this writer read it, or its lease was lost: not published."""


class SyncStatusError(RuntimeError):
    """The sync status store could not be read or written."""


# ----- stores -----------------------------------------------------------------------------------


class EngineFilter(Protocol):
    """An engine's own compiled payload filter (a ``qdrant_edge.Filter``, a
    ``qdrant_client.models.Filter``): opaque to the core, made by
    :meth:`VectorStore.compile_filter` and handed back to the same store's queries."""


class CollectionInfo(Protocol):
    """What a domain's collection says about itself without a query engine: its name, whether
    it exists and which embedder built it. Every :class:`VectorStore` is one; Qdrant Edge's
    shard files are one without the engine (what the result-cache gate reads before anything
    opens the store or loads a model)."""

    def collection(self, schema: DomainSchema) -> str:
        """The collection name of a domain."""
        ...

    def exists(self, schema: DomainSchema) -> bool:
        """Whether the domain's collection exists."""
        ...

    def embedder_identity(self, schema: DomainSchema) -> EmbedderIdentity | None:
        """The identity of the embedder that built the domain's collection (None when the
        collection does not exist, or was built before identities were recorded)."""
        ...


class VectorStore(Protocol):
    """One collection per domain: a point per record with a named dense vector per aspect, the
    sparse ``bm25`` vector (its IDF applied by the engine) and the payload (see
    :mod:`agentic_search.wire.records`). Every method here is called by the core, the keyword
    index (:class:`~agentic_search.adapters.sparse_bm25.SparseBm25Index`) or the evaluation;
    an engine implements them all (Qdrant Edge, a Qdrant server or local mode), and its
    maintenance (optimize, snapshots, migration) stays on its own class."""

    def collection(self, schema: DomainSchema) -> str:
        """The collection name of a domain."""
        ...

    def exists(self, schema: DomainSchema) -> bool:
        """Whether the domain's collection exists."""
        ...

    def count(self, schema: DomainSchema) -> int:
        """Records in the domain's collection (0 when it does not exist)."""
        ...

    def acquire_writer(self, schema: DomainSchema) -> None:
        """Become the domain's writer now, before anything is written or journaled, and stay
        it until the store closes (an embedded store's lock on its folder; a server takes
        concurrent writers, so nothing to take). Creates no collection.

        Raises:
            VectorStoreError: when another process is the writer (the message names it).
        """
        ...

    def ensure_collection(self, schema: DomainSchema, dim: int) -> None:
        """Create the collection, or check an existing one has ``dim`` and every aspect.

        Raises:
            VectorStoreError: when an existing collection does not match (the message says
                which and how to fix it).
        """
        ...

    def embedder_identity(self, schema: DomainSchema) -> EmbedderIdentity | None:
        """The identity of the embedder that built the domain's collection (None when the
        collection does not exist, or was built before identities were recorded)."""
        ...

    def record_embedder_identity(self, schema: DomainSchema, identity: EmbedderIdentity) -> None:
        """Store ``identity`` with the domain's (existing) collection, replacing any."""
        ...

    def drop(self, schema: DomainSchema) -> None:
        """Delete the domain's collection if it exists (also when its files cannot be read:
        the repair path's first step)."""
        ...

    def verify(self, schema: DomainSchema) -> None:
        """Check that the domain's collection can be read and holds what the sync status says
        (an embedded engine's damage check, ``/health?deep=true``); nothing where the store
        cannot tell, or the collection does not exist.

        Raises:
            VectorStoreError: the one-line damage error naming the repair command.
        """
        ...

    def retrieve_records(
        self,
        schema: DomainSchema,
        record_ids: Sequence[str],
        with_vectors: bool = False,
        without: Sequence[str] = (),
    ) -> dict[str, StoredRecord]:
        """Stored records by id (missing ids absent), payloads without the keys in
        ``without``: the engine's ``retrieve``, the writer's exact view (never cached)."""
        ...

    def hydrate_records(
        self, schema: DomainSchema, record_ids: Sequence[str], with_vectors: bool = False
    ) -> dict[str, StoredRecord]:
        """The query side's read of its hits' records (hydration: may be cached; callers
        must not mutate the records); payloads come without the content hashes and the entity
        graph's keys (``_entity``, ``_links``, ``_linked_from``: read them with
        :meth:`retrieve_records`)."""
        ...

    def upsert(self, schema: DomainSchema, points: Sequence[PointWrite]) -> None:
        """Insert or replace whole points."""
        ...

    def update_points(
        self,
        schema: DomainSchema,
        vectors: Sequence[VectorUpdate],
        payloads: Mapping[str, dict[str, Any]],
    ) -> None:
        """Replace some named vectors and overwrite payloads (record id -> payload) in one
        request, vectors first, so a failed write cannot leave new vectors under old hashes."""
        ...

    def delete(self, schema: DomainSchema, record_ids: Sequence[str]) -> None:
        """Delete records by id (missing ones are ignored)."""
        ...

    def update_sparse(self, schema: DomainSchema, vectors: Mapping[str, SparseVector]) -> None:
        """Replace the sparse ``bm25`` vector of existing points (record id -> vector); their
        dense vectors and payloads stay as they are (the keyword index's re-weighting)."""
        ...

    def compile_filter(
        self, schema: DomainSchema, filters: Sequence[Filter], exclude_ids: Sequence[str] = ()
    ) -> EngineFilter | None:
        """The engine's filter for ``filters`` and the excluded record ids (None: no filter),
        for :meth:`scroll`, :meth:`query_sparse` and :meth:`EngineHybridRrf.query_hybrid_rrf`.

        Raises:
            FilterError: when a filter is not allowed by the schema.
        """
        ...

    def scroll(
        self,
        schema: DomainSchema,
        payload: Sequence[str] | None = None,
        *,
        flt: EngineFilter | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Every record's payload (only the keys in ``payload`` when given) admitted by
        ``flt`` (every record when None), in point-id order; nothing when the collection does
        not exist."""
        ...

    def query_dense(
        self,
        schema: DomainSchema,
        aspect: str,
        vector: Sequence[float] | np.ndarray,
        top_k: int,
        filters: Sequence[Filter] = (),
        exclude_ids: Sequence[str] = (),
    ) -> list[ScoredRecord]:
        """Nearest neighbours on one aspect's vector (cosine), best first, hard filters and
        excluded ids pushed down; hits carry no payload."""
        ...

    def has_sparse(self, schema: DomainSchema) -> bool:
        """Whether the domain's collection carries the sparse ``bm25`` vector (a local-mode
        collection of an early version may not)."""
        ...

    def query_sparse(
        self,
        schema: DomainSchema,
        vector: SparseVector,
        top_k: int,
        flt: EngineFilter | None,
    ) -> list[ScoredRecord]:
        """Nearest neighbours on the sparse ``bm25`` vector (score: the sum over shared terms
        of IDF x stored weight x query weight), best first, ``flt`` pushed down; hits carry no
        payload that callers may rely on."""
        ...

    def sparse_counts(self, schema: DomainSchema, indices: Sequence[int], cap: int) -> list[int]:
        """How many points hold each of ``indices`` in the sparse ``bm25`` vector, counted up
        to ``cap`` (one batched engine request; 0 for an index no point holds), in the order
        of ``indices``: a term's document frequency, capped."""
        ...

    def vector_of(self, schema: DomainSchema, record_id: str, aspect: str) -> list[float] | None:
        """A record's stored vector of ``aspect`` (None when absent)."""
        ...

    def vectors_of(
        self, schema: DomainSchema, record_ids: Sequence[str], aspect: str
    ) -> dict[str, list[float]]:
        """Stored vectors of ``aspect`` by record id (missing ids absent)."""
        ...

    def clear_record_cache(self) -> None:
        """Forget records kept by :meth:`hydrate_records` (benchmarks time searches cold)."""
        ...

    def close(self) -> None:
        """Release the store."""
        ...


class KeywordIndex(Protocol):
    """BM25 keyword retrieval with the shared analyzer (:mod:`agentic_search.logic.text`)."""

    name: str

    def sparse_vector(self, text: str) -> SparseVector | None:
        """The document-side sparse vector stored with the point (None when the index keeps
        its own data)."""
        ...

    def search(
        self,
        schema: DomainSchema,
        text: str,
        top_k: int,
        filters: Sequence[Filter] = (),
        exclude_ids: Sequence[str] = (),
    ) -> list[ScoredRecord]:
        """BM25 hits with a positive score, best first, filters pushed down."""
        ...

    def refresh(self, schema: DomainSchema) -> None:
        """Bring the index level with the store after writes."""
        ...

    def term_presence(
        self, schema: DomainSchema, terms: Sequence[str], record_ids: Sequence[str]
    ) -> dict[str, set[str]]:
        """Which of ``terms`` each record contains, where the index can tell (ids it cannot
        tell about are absent)."""
        ...

    def known_terms(self, schema: DomainSchema, terms: Sequence[str]) -> set[str] | None:
        """The analysed ``terms`` that occur in some indexed document (None when the index
        cannot tell): a query word whose terms the corpus does not know may be a typo."""
        ...


class StructuredStore(Protocol):
    """Filter-and-rank retrieval over structured fields."""

    system: Literal["qdrant", "mongodb", "api"]

    def find(
        self,
        schema: DomainSchema,
        filters: Sequence[Filter],
        preferences: Sequence[Filter],
        top_k: int,
        exclude_ids: Sequence[str] = (),
    ) -> list[ScoredRecord]:
        """Records admitted by ``filters``, at least one preference matched when any are
        given, ranked by preferences matched then the schema's sort field, best first."""
        ...


# ----- models -----------------------------------------------------------------------------------


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into dense vectors (float32, shape ``(n, dim)``, L2-normalized).

    Optional: ``embed_queries(texts)`` (a query-side session), ``count_tokens(texts)`` (the
    model's own tokenizer; :mod:`agentic_search.logic.tokens` falls back when absent) and
    ``warm_up()`` (load a local model's query session: start-up work, counted outside round
    budgets and source deadlines; a remote embedder has none, its calls stay bounded) and
    ``identity`` (an :class:`~agentic_search.wire.EmbedderIdentity`, known without I/O; its
    ``dim`` may be None until a remote embedder has answered once; without it the identity
    is ``name`` and ``dim``).
    """

    name: str
    dim: int

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed documents; returns ``(len(texts), dim)`` float32.

        Raises:
            EmbedderError: when the model or the API fails.
        """
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query; returns ``(dim,)`` float32."""
        ...


class ArrayMemo(Protocol):
    """Keeps arrays derived from the model and the domain (not from the catalog's records)
    between processes, so a process does not compute them again: e.g. the capability
    vocabulary's vectors (:class:`~agentic_search.logic.capabilities.CapabilityMatcher`),
    which every CLI search that reads a need by meaning would embed again (docs/benchmarks.md).

    ``key`` names the array's inputs completely (a hash of the model identity and the texts):
    a memo never checks what it holds against anything but the key and the shape.
    """

    def get_or_compute(
        self, key: str, compute: Callable[[], np.ndarray], shape: tuple[int, ...]
    ) -> np.ndarray:
        """The array kept under ``key`` when one of ``shape`` is kept, else ``compute()``'s,
        kept for the next process (a write that fails is not an error: the array is
        returned all the same).

        Raises:
            whatever ``compute`` raises.
        """
        ...


class Reranker(Protocol):
    """Scores how well each text answers the query (higher is better)."""

    name: str

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score per text, in input order.

        Raises:
            RerankerError: when the model or the API fails.
        """
        ...


class HydeGenerator(Protocol):
    """Writes a hypothetical document for a query (HyDE, Gao et al. 2022)."""

    name: str

    def generate(self, query: str) -> str:
        """A short passage answering ``query``.

        Raises:
            HydeError: when the LLM fails or answers nothing.
        """
        ...


class RoundQueryWriter(Protocol):
    """Writes a later round's queries from the evidence so far (IRCoT-style, by an LLM)."""

    name: str

    def write(
        self, query: str, found: list[tuple[str, str]], missing: list[str], asked: list[str]
    ) -> list[str]:
        """At most two new queries for what is ``missing`` (target labels), given ``found``
        (``(title, text)`` of the evidence so far) and the texts ``asked`` before.

        Raises:
            LLMFallback: when the LLM fails or its answer does not parse.
        """
        ...


class Enricher(Protocol):
    """Writes a record's index-time enrichment by an LLM (:mod:`agentic_search.logic.
    enrichment`): ``model`` is the identity every cache key carries."""

    model: str

    def enrich(self, kind: str, text: str, timeout_s: float) -> dict[str, Any]:
        """The validated answer of ``kind``'s prompt (``catalog``: ``{"needs", "category"}``;
        ``document``: ``{"context"}``) for the prompt text ``text``.

        Raises:
            EnrichmentError: on a timeout, a provider error or an answer that does not parse.
        """
        ...


class EnrichmentStore(Protocol):
    """LLM answers by cache key (:func:`~agentic_search.logic.enrichment.enrichment_key`),
    kept beside the index; each answer is kept as soon as it is written, so a killed ingest
    resumes without asking again. Also the domain's last failures and small metadata."""

    def get_many(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The answers kept under ``keys`` (absent keys absent)."""
        ...

    def put(self, key: str, answer: dict[str, Any]) -> None:
        """Keep ``answer`` (JSON-able) under ``key`` (replacing)."""
        ...

    def set_failures(self, domain: str, failures: Mapping[str, str]) -> None:
        """Record the domain's records whose enrichment failed last (id -> reason)."""
        ...

    def failures(self, domain: str) -> dict[str, str]:
        """The domain's records whose enrichment failed last (id -> reason)."""
        ...

    def get_meta(self, name: str) -> Any:
        """A metadata value (JSON), None when unset."""
        ...

    def set_meta(self, name: str, value: Any) -> None:
        """Set a metadata value (JSON-able)."""
        ...


class ChatJSONClient(Protocol):
    """An OpenAI-compatible chat endpoint asked for JSON matching a schema."""

    model: str

    def complete_json(
        self,
        system: str,
        user: str,
        *,
        schema_name: str,
        json_schema: dict[str, Any],
        timeout_s: float,
        max_retries: int,
        max_tokens: int,
    ) -> str:
        """The assistant's message text.

        Raises:
            LLMFallback: (:mod:`agentic_search.logic.llm_budget`) on a timeout, a
                connection or server error, or an empty answer.
        """
        ...


class IntentPlanner(Protocol):
    """Intent extraction and planning by an LLM, validated against the domain schema."""

    @property
    def name(self) -> str:
        """``llm:<model>``, as recorded in IntentState.extractor and QueryPlan.planner."""
        ...

    @property
    def budget_s(self) -> float:
        """LLM time per request (s), intent and plan together."""
        ...

    def extract(self, query: str, budget: Budget) -> IntentState:
        """The intent of ``query``.

        Raises:
            LLMFallback: when no usable answer came within ``budget``.
        """
        ...

    def plan(self, intent: IntentState, limit: int, budget: Budget) -> QueryPlan:
        """A validated plan for ``intent``.

        Raises:
            LLMFallback: when no usable answer came within ``budget``.
        """
        ...


# ----- caches and status ------------------------------------------------------------------------


class ResultCache(Protocol):
    """Exact-match cache of JSON values with a TTL, plus a per-domain catalog version."""

    name: str

    def get(self, key: str) -> dict[str, Any] | None:
        """The live value under ``key`` or None. Raises :class:`CacheError`."""
        ...

    def put(self, key: str, value: dict[str, Any], ttl_s: int) -> None:
        """Store ``value`` for ``ttl_s`` seconds. Raises :class:`CacheError`."""
        ...

    def catalog_version(self, domain: str) -> int:
        """The domain's catalog version (0 when never bumped). Raises :class:`CacheError`."""
        ...

    def bump_catalog_version(self, domain: str) -> int:
        """Increment and return the domain's catalog version. Raises :class:`CacheError`."""
        ...


class SyncStatusStore(Protocol):
    """Per-record sync status (synced / pending / failed, versions, hashes, retries)."""

    def get(self, domain: str, record_ids: Sequence[str]) -> dict[str, SyncEntry]:
        """Entries by record id (missing ids absent). Raises :class:`SyncStatusError`."""
        ...

    def put(self, entries: Iterable[SyncEntry]) -> None:
        """Write entries (replacing). Raises :class:`SyncStatusError`."""
        ...

    def list(self, domain: str, status: str, limit: int = 100) -> list[SyncEntry]:
        """Entries with ``status``, oldest update first, at most ``limit``."""
        ...

    def counts(self, domain: str) -> dict[str, int]:
        """Number of entries per status (``synced``, ``pending``, ``failed``), with the
        tombstones of deleted records apart (``deleted``): ``synced`` is what the index holds.
        Raises :class:`SyncStatusError`."""
        ...


class WriteJournal(Protocol):
    """The intent of a write in flight, per domain, kept until the write is complete: a
    process that dies mid-write (Ctrl-C, SIGKILL, a full disk) leaves it behind, and the next
    one completes the write from it (:mod:`agentic_search.sync.journal`). A write is durable
    once :meth:`begin` returns.
    """

    def begin(self, domain: str, intent: dict[str, Any]) -> None:
        """Record ``intent`` (JSON-able) as the domain's write in flight (replacing any)."""
        ...

    def pending(self, domain: str) -> dict[str, Any] | None:
        """The domain's unfinished write, or None."""
        ...

    def finish(self, domain: str) -> None:
        """The domain's write is complete: forget its intent."""
        ...


class SnapshotRegistry(Protocol):
    """Where published index snapshots live (immutable objects by collection and catalog
    version) and the one pointer per collection that names the current one, moved only by a
    conditional write; writers of a collection are serialized by a lease (a conditional write
    with an expiry). A writer that dies between :meth:`upload` and :meth:`move_pointer`
    leaves the old pointer in place; its object is marked by :meth:`retire` and expires.
    """

    def pointer(self, collection: str) -> SnapshotPointer | None:
        """The collection's current snapshot (a strongly consistent read), None when none was
        ever published. Raises :class:`SnapshotError`."""
        ...

    def download(self, pointer: SnapshotPointer, dest: Any) -> None:
        """Write the snapshot's object to the file ``dest`` (a Path), checked against the
        pointer's size and SHA-256. Raises :class:`SnapshotError` naming the key and what
        is wrong (missing, truncated, checksum)."""
        ...

    def upload(self, collection: str, version: int, source: Any) -> SnapshotPointer:
        """Store the archive file ``source`` (a Path) as a new immutable object of
        ``collection`` at catalog ``version``; returns the pointer that would name it.
        Raises :class:`SnapshotError`."""
        ...

    def move_pointer(
        self, new: SnapshotPointer, expected: SnapshotPointer | None, lease: SnapshotLease
    ) -> None:
        """Make ``new`` the current snapshot if the pointer still is ``expected`` (None: none
        yet) and ``lease`` is still held. Raises :class:`SnapshotConflict` otherwise."""
        ...

    def acquire(self, collection: str, ttl_s: float, wait_s: float) -> SnapshotLease:
        """The collection's writer lease for ``ttl_s`` seconds, waiting at most ``wait_s``
        for another writer's to be released or expire. Raises :class:`SnapshotBusy`."""
        ...

    def release(self, lease: SnapshotLease) -> None:
        """Give the lease up (nothing when it was lost or expired)."""
        ...

    def retire(self, current: SnapshotPointer, previous: SnapshotPointer | None) -> int:
        """Mark for expiry (the store's lifecycle rule deletes them later) the ``previous``
        snapshot and every other object of ``current``'s version (those a writer uploaded
        and died before moving the pointer); returns how many were marked."""
        ...


@runtime_checkable
class EngineHybridRrf(Protocol):
    """A vector store that also fuses a dense and a sparse ranking by the engine's own RRF in
    one query: the evaluation's ``hybrid-rrf-qdrant`` baseline only (no search path uses
    it, so it is not part of :class:`VectorStore`). Qdrant Edge and a Qdrant server
    implement it; a caller narrows to it with ``isinstance``."""

    def query_hybrid_rrf(
        self,
        schema: DomainSchema,
        aspect: str,
        dense: Sequence[float],
        sparse: SparseVector,
        top_k: int,
        rrf_k: int = 60,
        flt: EngineFilter | None = None,
    ) -> list[ScoredRecord]:
        """Dense (``aspect``) and sparse top-``top_k`` prefetches fused by the engine's own
        Reciprocal Rank Fusion in one query, ``sum 1 / (rrf_k + rank)`` with rank from 1;
        best first, ids only (the collection needs the sparse vector: :meth:`has_sparse`)."""
        ...


@runtime_checkable
class PublishedIndex(Protocol):
    """A vector store whose index is a published snapshot (``VECTOR_STORE=edge-s3``): readers
    swap in a newer one between requests, the one writer of a collection writes under its
    lease and publishes."""

    def refresh_snapshots(self, force: bool = False) -> list[Any]:
        """Swap in newer snapshots where the pointer moved (at most every re-check
        interval unless ``force``); one result per collection looked at, each with
        ``collection``, ``swapped``, ``pointer`` and ``error`` (a failure keeps the open
        snapshot; never raised)."""
        ...

    def writing(self, schema: DomainSchema) -> Any:
        """A context manager holding the domain's writer lease, the local copy brought to the
        pointer's snapshot first. Raises :class:`SnapshotBusy`, :class:`SnapshotError`."""
        ...

    def publish(self, schema: DomainSchema) -> SnapshotPointer | None:
        """Publish what was written under :meth:`writing` (None: nothing was). Raises
        :class:`SnapshotConflict`, :class:`SnapshotError`."""
        ...


__all__ = [
    "ArrayMemo",
    "CacheError",
    "ChatJSONClient",
    "CollectionInfo",
    "Embedder",
    "EmbedderError",
    "EmbedderMismatch",
    "EngineFilter",
    "EngineHybridRrf",
    "Enricher",
    "EnrichmentError",
    "EnrichmentStore",
    "HydeError",
    "HydeGenerator",
    "IntentPlanner",
    "InterruptedWrite",
    "KeywordIndex",
    "KeywordIndexError",
    "PublishedIndex",
    "Reranker",
    "RerankerError",
    "ResultCache",
    "RoundQueryWriter",
    "SnapshotBusy",
    "SnapshotConflict",
    "SnapshotError",
    "SnapshotRegistry",
    "StructuredStore",
    "SyncStatusError",
    "SyncStatusStore",
    "VectorStore",
    "VectorStoreError",
    "WriteJournal",
]
