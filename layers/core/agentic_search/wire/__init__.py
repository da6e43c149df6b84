"""The wire models of agentic-search, in one place.

Every model that crosses a process boundary (a Step Functions state, an HTTP answer, a cache
entry) or an adapter port is defined in a submodule here and re-exported by this package:

* :mod:`.query` - Filter, IntentState, QueryPlan and its sources;
* :mod:`.records` - what the stores hold and return (ScoredRecord, StoredRecord, PointWrite);
* :mod:`.results` - ranked and fused lists, Candidate, QueryExecutorOutput;
* :mod:`.evidence` - executor caps, evidence, coverage, round reports, the evidence pack;
* :mod:`.executor` - the executor state between steps (sub-queries, retrieved lists);
* :mod:`.search` - the search request and the state machine's state;
* :mod:`.response` - the search response the front door returns;
* :mod:`.sync` - the sync status of a record;
* :mod:`.identity` - the identity of the embedder that built a collection;
* :mod:`.access` - the caller's principals (its effective access set).
"""

from __future__ import annotations

from agentic_search.wire.access import ANONYMOUS, Caller
from agentic_search.wire.base import (
    WireModel,
    elapsed_ms,
    value_text,
    wire_keys,
)
from agentic_search.wire.evidence import (
    BUDGET_STOP,
    SNIPPET_CHARS,
    Bridge,
    Contradiction,
    Coverage,
    CoverageItem,
    CoverageTarget,
    Evidence,
    EvidencePack,
    ExecutorCaps,
    QueryPurpose,
    RetrievalReport,
    RoundQuery,
    RoundReport,
    SelectedRef,
    TargetKind,
)
from agentic_search.wire.executor import (
    ExecutorState,
    Hit,
    RetrievedList,
    RoundWork,
    SubQuery,
)
from agentic_search.wire.identity import EmbedderIdentity
from agentic_search.wire.query import (
    TOP_K_MAX,
    TOP_K_MIN,
    Complexity,
    EntityLink,
    EntitySource,
    Filter,
    FusionMethod,
    GraphSource,
    IntentState,
    Operator,
    PrimaryGoal,
    QueryPlan,
    QueryVectorSource,
    SparseSource,
    Strategy,
    StructuredSource,
    VectorSource,
    VocabularyMatch,
)
from agentic_search.wire.records import (
    ENTITY_KEY,
    HASHES_KEY,
    INTERNAL_KEYS,
    LINKED_FROM_KEY,
    LINKS_KEY,
    SPARSE_VECTOR,
    TOKENS_KEY,
    VIA_KEY,
    PointWrite,
    ScoredRecord,
    SparseVector,
    StoredRecord,
    VectorUpdate,
)
from agentic_search.wire.response import (
    PATH_KEYS,
    ComparedRecord,
    Comparison,
    SearchResponse,
)
from agentic_search.wire.results import (
    AnswerQuality,
    Candidate,
    ExecutionStats,
    Fused,
    Provenance,
    QueryExecutorOutput,
    RankedList,
    SourceError,
    SourceHit,
)
from agentic_search.wire.search import (
    QUERY_MAX_CHARS,
    QUERY_MAX_TOKENS,
    CacheInfo,
    ExtractorInfo,
    RetrieveEvent,
    RunConfig,
    SearchRequest,
    SearchState,
    StepError,
    error_message,
)
from agentic_search.wire.sync import (
    STATUSES,
    TOMBSTONE_TTL_S,
    AspectStatus,
    Status,
    SyncEntry,
)

__all__ = [
    "ANONYMOUS",
    "BUDGET_STOP",
    "ENTITY_KEY",
    "HASHES_KEY",
    "INTERNAL_KEYS",
    "LINKED_FROM_KEY",
    "LINKS_KEY",
    "PATH_KEYS",
    "QUERY_MAX_CHARS",
    "QUERY_MAX_TOKENS",
    "SNIPPET_CHARS",
    "SPARSE_VECTOR",
    "STATUSES",
    "TOKENS_KEY",
    "TOMBSTONE_TTL_S",
    "TOP_K_MAX",
    "TOP_K_MIN",
    "VIA_KEY",
    "AnswerQuality",
    "AspectStatus",
    "Bridge",
    "CacheInfo",
    "Caller",
    "Candidate",
    "ComparedRecord",
    "Comparison",
    "Complexity",
    "Contradiction",
    "Coverage",
    "CoverageItem",
    "CoverageTarget",
    "EmbedderIdentity",
    "EntityLink",
    "EntitySource",
    "Evidence",
    "EvidencePack",
    "ExecutionStats",
    "ExecutorCaps",
    "ExecutorState",
    "ExtractorInfo",
    "Filter",
    "Fused",
    "FusionMethod",
    "GraphSource",
    "Hit",
    "IntentState",
    "Operator",
    "PointWrite",
    "PrimaryGoal",
    "Provenance",
    "QueryExecutorOutput",
    "QueryPlan",
    "QueryPurpose",
    "QueryVectorSource",
    "RankedList",
    "RetrievalReport",
    "RetrieveEvent",
    "RetrievedList",
    "RoundQuery",
    "RoundReport",
    "RoundWork",
    "RunConfig",
    "ScoredRecord",
    "SearchRequest",
    "SearchResponse",
    "SearchState",
    "SelectedRef",
    "SourceError",
    "SourceHit",
    "SparseSource",
    "SparseVector",
    "Status",
    "StepError",
    "StoredRecord",
    "Strategy",
    "StructuredSource",
    "SubQuery",
    "SyncEntry",
    "TargetKind",
    "VectorSource",
    "VectorUpdate",
    "VocabularyMatch",
    "WireModel",
    "elapsed_ms",
    "error_message",
    "value_text",
    "wire_keys",
]
