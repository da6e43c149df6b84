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
* :mod:`.sync` - the sync status of a record.
"""

from __future__ import annotations

from agentic_search.state.base import (
    WireModel,
    elapsed_ms,
    wire_keys,
)
from agentic_search.state.evidence import (
    SNIPPET_CHARS,
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
from agentic_search.state.executor import (
    FUSED_REFS,
    ExecutorState,
    FusedRef,
    Hit,
    RetrievedList,
    RoundWork,
    SubQuery,
)
from agentic_search.state.query import (
    TOP_K_MAX,
    TOP_K_MIN,
    Filter,
    FusionMethod,
    IntentState,
    Operator,
    PrimaryGoal,
    QueryPlan,
    QueryVectorSource,
    SparseSource,
    Strategy,
    StructuredSource,
    VectorSource,
)
from agentic_search.state.records import (
    HASHES_KEY,
    INTERNAL_KEYS,
    SPARSE_VECTOR,
    TOKENS_KEY,
    PointWrite,
    ScoredRecord,
    SparseVector,
    StoredRecord,
    VectorUpdate,
)
from agentic_search.state.response import (
    PATH_KEYS,
    SearchResponse,
)
from agentic_search.state.results import (
    Candidate,
    ExecutionStats,
    Fused,
    Provenance,
    QueryExecutorOutput,
    RankedList,
    SourceError,
    SourceHit,
    SourceResult,
)
from agentic_search.state.search import (
    QUERY_MAX_CHARS,
    CacheInfo,
    ExtractorInfo,
    RetrieveEvent,
    RunConfig,
    SearchRequest,
    SearchState,
    StepError,
    error_message,
)
from agentic_search.state.sync import (
    STATUSES,
    TOMBSTONE_TTL_S,
    AspectStatus,
    Status,
    SyncEntry,
)

__all__ = [
    "FUSED_REFS",
    "HASHES_KEY",
    "INTERNAL_KEYS",
    "PATH_KEYS",
    "QUERY_MAX_CHARS",
    "SNIPPET_CHARS",
    "SPARSE_VECTOR",
    "STATUSES",
    "TOKENS_KEY",
    "TOMBSTONE_TTL_S",
    "TOP_K_MAX",
    "TOP_K_MIN",
    "AspectStatus",
    "CacheInfo",
    "Candidate",
    "Contradiction",
    "Coverage",
    "CoverageItem",
    "CoverageTarget",
    "Evidence",
    "EvidencePack",
    "ExecutionStats",
    "ExecutorCaps",
    "ExecutorState",
    "ExtractorInfo",
    "Filter",
    "Fused",
    "FusedRef",
    "FusionMethod",
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
    "SourceResult",
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
    "WireModel",
    "elapsed_ms",
    "error_message",
    "wire_keys",
]
