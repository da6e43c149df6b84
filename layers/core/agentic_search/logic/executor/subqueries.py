"""A round's plan split into one single-source plan per source (the Map's items), named as
the executor names its results."""

from __future__ import annotations

from agentic_search.wire import QueryPlan, SubQuery


def split_plan(plan: QueryPlan, keyword_name: str, structured_system: str) -> list[SubQuery]:
    """One single-source plan per source of ``plan`` (dense, sparse, structured, the entity
    fetch, the graph walk), named as the executor names its results, so the Map can run them
    in parallel."""
    base = {
        "vector_sources": [],
        "sparse_source": None,
        "structured_sources": [],
        "entity_source": None,
        "graph_source": None,
    }
    subs: list[SubQuery] = []
    if plan.entity_source is not None:
        subs.append(
            SubQuery(
                name="entity",
                kind="entity",
                plan=plan.model_copy(update={**base, "entity_source": plan.entity_source}),
            )
        )
    if plan.graph_source is not None:
        subs.append(
            SubQuery(
                name="graph",
                kind="graph",
                plan=plan.model_copy(update={**base, "graph_source": plan.graph_source}),
            )
        )
    for vs in plan.vector_sources:
        subs.append(
            SubQuery(
                name=f"dense:{vs.aspect}:{vs.query_vector_source}",
                kind="dense",
                plan=plan.model_copy(update={**base, "vector_sources": [vs]}),
            )
        )
    if plan.sparse_source is not None:
        subs.append(
            SubQuery(
                name=f"sparse:{keyword_name}",
                kind="sparse",
                plan=plan.model_copy(update={**base, "sparse_source": plan.sparse_source}),
            )
        )
    for i, st in enumerate(plan.structured_sources):
        subs.append(
            SubQuery(
                name=f"structured:{structured_system}:{i}",
                kind="structured",
                plan=plan.model_copy(update={**base, "structured_sources": [st]}),
            )
        )
    return subs


__all__ = ["split_plan"]
