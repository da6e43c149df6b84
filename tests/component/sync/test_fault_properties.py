"""No data lost under faults: random catalog histories, delivered with duplicates and out of
order, through a sync whose embedder and Qdrant writes fail at random; after the dead-letter
queue is redriven, the index equals the catalog exactly and nothing is left pending.

The embedder here is deterministic and fast (SHA-256 of the text -> an 8-dimensional unit
vector) so that hundreds of scenarios run in seconds; the real MiniLM embedder is exercised by
test_handler_replay.py. Qdrant is the real engine in local in-memory mode; the keyword index is
left out (BM25 is refreshed from the points and is not what is under test); the status store is
the embedded SQLite one. Lambda's own retries (MaximumRetryAttempts 2) and the on-failure
destination are simulated: a change that still fails goes to a list standing for the DLQ, which
the redrive drains with a fake clock (backoff 1, 2, 4, 8 minutes, parked after 5 attempts,
then POST /sync/retry-all).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from qdrant_client import QdrantClient

from agentic_search.adapters.caches import NullCache
from agentic_search.adapters.qdrant.local import LocalQdrantStore
from agentic_search.adapters.sync_status import SqliteSyncStatus
from agentic_search.config import Settings
from agentic_search.logic.entities import record_names
from agentic_search.logic.graph_edges import invert
from agentic_search.logic.schema import load_schema
from agentic_search.logic.snippets import snippet_token_entries
from agentic_search.logic.text import aspect_text
from agentic_search.logic.tokens import token_counter, token_counter_name
from agentic_search.service import SearchService
from agentic_search.sync.apply import apply_changes
from agentic_search.sync.changes import CatalogChange, ChangeOp
from agentic_search.sync.redrive import enqueue_failed, redrive_due, retry_failed
from agentic_search.wire import ENTITY_KEY, HASHES_KEY, LINKED_FROM_KEY, LINKS_KEY, TOKENS_KEY

SCHEMA = load_schema("tools")
IDS = ["t0", "t1", "t2", "t3"]
LAMBDA_RETRIES = 2


class Faults:
    """Per record, how many more embedder calls and Qdrant writes that involve it fail."""

    def __init__(self, embed: dict[str, int], write: dict[str, int]) -> None:
        self.embed, self.write = dict(embed), dict(write)
        self.hits = 0

    def _hit(self, budget: dict[str, int], rids: set[str], what: str) -> None:
        for rid in sorted(rids):
            if budget.get(rid, 0) > 0:
                budget[rid] -= 1
                self.hits += 1
                raise RuntimeError(f"injected {what} fault on {rid}")

    def on_embed(self, texts: Sequence[str]) -> None:
        self._hit(self.embed, {r for r in IDS for t in texts if f"{r} " in t}, "embedder")

    def on_write(self, rids: set[str]) -> None:
        self._hit(self.write, rids, "Qdrant")


def hash_vector(text: str, dim: int = 8) -> np.ndarray:
    raw = np.frombuffer(hashlib.sha256(text.encode()).digest()[: dim * 4], dtype=np.uint32)
    vec = raw.astype(np.float64) / 2**32 - 0.5
    return (vec / np.linalg.norm(vec)).astype(np.float32)


class HashEmbedder:
    dim = 8

    def __init__(self, faults: Faults) -> None:
        self.faults = faults

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.faults.on_embed(texts)
        return np.stack([hash_vector(t) for t in texts]) if texts else np.zeros((0, 8))

    def embed_query(self, text: str) -> np.ndarray:
        return hash_vector(text)


class NoKeyword:
    def sparse_vector(self, text: str) -> None:
        return None

    def refresh(self, schema: Any) -> None:
        return None

    def search(self, *args: Any, **kwargs: Any) -> list:
        return []


class FaultyStore(LocalQdrantStore):
    """The real local-mode store; each write may raise before it is sent."""

    faults: Faults

    def upsert(self, schema, points):
        self.faults.on_write({p.payload["id"] for p in points})
        super().upsert(schema, points)

    def update_points(self, schema, vectors, payloads):
        self.faults.on_write(set(payloads) | {v.id for v in vectors})
        super().update_points(schema, vectors, payloads)

    def delete(self, schema, record_ids):
        self.faults.on_write(set(record_ids))
        super().delete(schema, record_ids)


def record(rid: str, a: int, b: int, c: int) -> dict[str, Any]:
    """A tools record; ``a`` changes the identity aspect, ``b`` the functionality aspect, ``c``
    the payload only."""
    return SCHEMA.validate_record(
        {
            "id": rid,
            "name": f"Tool {rid}",
            "description": f"Tool {rid}, edition {a}",
            "category": "IDE",
            "functionality": ["Code Completion"],
            "features": [f"{rid} feature {b}"],
            "use_cases": ["write code"],
            "pricing_model": "Paid",
            "price_monthly_usd": c,
            "platforms": ["Linux"],
            "deployment": ["Cloud"],
            "interface": ["Desktop"],
        }
    )


op_st = st.tuples(
    st.sampled_from(IDS),
    st.sampled_from(["upsert", "upsert", "upsert", "remove"]),
    st.integers(0, 2),
    st.integers(0, 2),
    st.integers(0, 2),
)


@st.composite
def scenario(draw):
    ops = draw(st.lists(op_st, min_size=1, max_size=14))
    catalog: dict[str, dict] = {}
    changes: list[CatalogChange] = []
    for version, (rid, kind, a, b, c) in enumerate(ops, start=1):
        if kind == "remove":
            if rid not in catalog:
                continue
            del catalog[rid]
            changes.append(CatalogChange(op=ChangeOp.REMOVE, record_id=rid, version=version))
        else:
            op = ChangeOp.MODIFY if rid in catalog else ChangeOp.INSERT
            catalog[rid] = record(rid, a, b, c)
            changes.append(
                CatalogChange(op=op, record_id=rid, version=version, record=catalog[rid])
            )
    # at-least-once delivery: duplicates, then any order, in batches
    dupes = draw(st.lists(st.sampled_from(changes), max_size=4)) if changes else []
    delivered = draw(st.permutations(changes + dupes))
    size = draw(st.integers(1, 4))
    batches = [delivered[i : i + size] for i in range(0, len(delivered), size)]
    budget = st.dictionaries(st.sampled_from(IDS), st.integers(0, 9), max_size=len(IDS))
    return catalog, batches, Faults(draw(budget), draw(budget))


def run(catalog, batches, faults) -> tuple[SearchService, SqliteSyncStatus]:
    store = FaultyStore(Settings(), client=QdrantClient(location=":memory:"))
    store.faults = faults
    engine = SearchService.create(
        Settings(),
        SCHEMA,
        store=store,
        embedder=HashEmbedder(faults),
        keyword=NoKeyword(),  # type: ignore[arg-type]
        cache=NullCache(),
    )
    status = SqliteSyncStatus(":memory:")
    dlq: list[CatalogChange] = []
    for batch in batches:
        todo = list(batch)
        for _ in range(1 + LAMBDA_RETRIES):  # the invocation, then Lambda's retries
            report = apply_changes(engine.deps, todo, status)
            todo = [o.change for o in report.failed]
            if not todo:
                break
        dlq += todo
    event(f"dead-lettered changes: {'some' if dlq else 'none'}")
    event(f"faults injected: {'yes' if faults.hits else 'no'}")
    now = [1_000_000.0]
    enqueue_failed(status, dlq, "RetryAttemptsExhausted", clock=lambda: now[0])
    for _ in range(40):
        redrive_due(engine.deps, status, clock=lambda: now[0])
        counts = status.counts(SCHEMA.name)
        if counts["pending"] == 0 and counts["failed"] == 0:
            break
        if counts["failed"]:
            event("parked after 5 attempts, retried")
            retry_failed(status, SCHEMA.name, clock=lambda: now[0])  # POST /sync/retry-all
        now[0] += 61 * 60  # the next scheduled runs, past the longest backoff
    return engine, status


@settings(
    max_examples=220,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
@given(scenario())
def test_after_redrive_the_index_equals_the_catalog(case):
    catalog, batches, faults = case
    engine, status = run(catalog, batches, faults)
    counts = status.counts(SCHEMA.name)
    assert counts["pending"] == 0 and counts["failed"] == 0, counts
    if not engine.deps.store.exists(SCHEMA):  # nothing was ever written
        assert not catalog
        return
    points = engine.deps.store.retrieve_records(SCHEMA, IDS, with_vectors=True)
    assert set(points) == set(catalog)
    # the entity graph is consistent: every record's in-edges are the others' out-edges to it
    out = {rid: points[rid].payload.get(LINKS_KEY) or {} for rid in points}
    assert {rid: points[rid].payload.get(LINKED_FROM_KEY) or {} for rid in points} == {
        rid: invert(out).get(rid, {}) for rid in points
    }
    for rid, rec in catalog.items():
        payload = dict(points[rid].payload)
        payload.pop(HASHES_KEY)
        payload.pop(LINKS_KEY, None)
        payload.pop(LINKED_FROM_KEY, None)
        # its names follow the record through every change
        assert payload.pop(ENTITY_KEY)["names"] == record_names(SCHEMA, rec), rid
        # the snippet token count follows the record's text through every change
        counter = token_counter(engine.deps.embedder)
        entry = snippet_token_entries(
            SCHEMA,
            [rec],
            counter,
            token_counter_name(engine.deps.embedder),
            snippet_chars=SCHEMA.tuning.executor.snippet_chars,
        )
        assert payload.pop(TOKENS_KEY) == entry[0], rid
        assert payload == rec, rid
        for aspect in SCHEMA.aspect_names:
            if not aspect_text(SCHEMA, aspect, rec):  # the needs of a record not enriched
                assert aspect in SCHEMA.enriched_aspects and aspect not in points[rid].vectors
                continue
            expected = hash_vector(aspect_text(SCHEMA, aspect, rec))
            assert points[rid].vectors[aspect] == pytest.approx(expected.tolist(), abs=1e-6), (
                rid,
                aspect,
            )
