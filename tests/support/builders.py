"""Hand-built models for the pure tests of the executor's nodes (no model, no store)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from agentic_search.logic.text import default_analyzer
from agentic_search.wire import (
    Evidence,
    ExecutorCaps,
    ExecutorState,
    Filter,
    IntentState,
    Provenance,
    QueryPlan,
    SourceHit,
    SparseSource,
    StructuredSource,
    VectorSource,
)


def ev(
    eid: str,
    *,
    doc: str | None = None,
    rel: float = 0.5,
    tokens: int = 10,
    text: str = "",
    title: str | None = None,
    fields: dict[str, Any] | None = None,
    fused: float = 0.0,
    modes: Sequence[str] = (),
) -> Evidence:
    """One hand-made Evidence; ``modes`` become provenance hits with those ``source`` names."""
    prov = None
    if modes:
        hits = [
            SourceHit(source=m, system="qdrant", rank=1, raw_score=1.0, normalized_score=1.0)
            for m in modes
        ]
        prov = Provenance(collection="c", hits=hits)
    return Evidence(
        id=eid,
        doc_id=doc or eid,
        title=title,
        text=text,
        tokens=tokens,
        fields=fields or {},
        fused_score=fused,
        relevance=rel,
        round=1,
        provenance=prov,
    )


def ids(items: Sequence[Evidence]) -> list[str]:
    return [e.id for e in items]


def unit(x: float, y: float) -> np.ndarray:
    v = np.array([x, y], dtype=np.float64)
    assert math.isclose(float(np.linalg.norm(v)), 1.0, abs_tol=1e-12)
    return v


def plan_with(
    filters: Sequence[Filter] = (),
    structured: Sequence[StructuredSource] = (),
    aspect: str = "identity",
) -> QueryPlan:
    return QueryPlan(
        domain="tools",
        strategy="capability-focused",
        vector_sources=[VectorSource(aspect=aspect, top_k=20, text="x")],
        sparse_source=SparseSource(text="x", top_k=50),
        structured_sources=list(structured),
        filters=list(filters),
        fusion="weighted_sum",
    )


def state_with(caps: ExecutorCaps, **kw: Any) -> ExecutorState:
    return ExecutorState(
        plan=plan_with(), intent=IntentState(query="q", normalized_query="q"), caps=caps, **kw
    )


PLATFORMS_LINUX = Filter(field="platforms", operator="in", value=["Linux"])
INTERFACE_CLI = Filter(field="interface", operator="in", value=["CLI"])
PRICE_20 = Filter(field="price_monthly_usd", operator="lte", value=20)
LOCAL = Filter(field="deployment", operator="in", value=["Local"], origin="locally")


QUERY = 'alternative to copilot with code completion that runs locally, a "pair programmer" for vim'


def intent_for(**kw: Any) -> IntentState:
    base: dict[str, Any] = {
        "query": QUERY,
        "normalized_query": QUERY,
        "reference_tool_name": "GitHub Copilot",
        "constraints": [LOCAL],
        "matches": {"functionality": ["Code Completion"]},
        "must_preserve_terms": ["pair programmer"],
        "keywords": default_analyzer().terms(QUERY),
    }
    base.update(kw)
    return IntentState(**base)


def rerank_input() -> list[Evidence]:
    return [
        ev("e1", title="T1", text="one", fused=0.4, rel=1.0),
        ev("e2", title=None, text="two", fused=0.3, rel=0.6),
        ev("e3", title="T3", text="three", fused=0.2, rel=0.3),
        ev("e4", title="T4", text="four", fused=0.1, rel=0.1),
    ]


#: A need pasted as a paragraph (1,300 characters) that ends with a question: wh-words and a
#: final "?" (issue 47 item 7).
RAG_PARAGRAPH = (
    "We are building a retrieval-augmented generation (RAG) assistant for our customer "
    "support team. Our knowledge base is about 40,000 help-center articles, product manuals "
    "and resolved tickets, stored as Markdown and PDF files. Today we chunk the documents into "
    "500-token passages, embed them with an open-source sentence-transformer model and keep "
    "the vectors in a single PostgreSQL table, but retrieval quality is poor: answers often "
    "cite the wrong product version, and long manuals lose the context of their section "
    "headings. We want a pipeline that does hybrid search (keyword plus dense vectors), "
    "reranks the top passages before they reach the language model, and shows the agent "
    "which source each sentence of the answer came from. It must run on our own servers "
    "because the tickets contain customer data, integrate with Python, and handle "
    "incremental updates when an article changes without re-indexing everything. We also "
    "need a way to evaluate retrieval and answer quality on a set of real questions from the "
    "support queue, so we can tell whether a change to chunking or to the embedding model "
    "actually helps. What combination of tools would you recommend for the vector store, the "
    "reranker, the orchestration framework and the evaluation harness, and how much of this "
    "can we self-host for free?"
)
