"""What each round asks: round 1 runs the plan as planned (plus HyDE when an LLM is configured
and the query has no literal constraints); rounds 2+ are :mod:`.later_rounds`. Pure: the HyDE
passage is written by the caller.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentic_search.logic.plan_rules import fusion_for, reference_names, top_k
from agentic_search.logic.schema import DomainSchema
from agentic_search.wire import (
    ExecutorState,
    IntentState,
    QueryPlan,
    RoundQuery,
    VectorSource,
)

if TYPE_CHECKING:
    from agentic_search.ports import HydeGenerator

#: At most this many missing targets get a query of their own per round.
MAX_TARGET_QUERIES = 3


def hyde_status(intent: IntentState, hyde: HydeGenerator | None) -> str:
    """Why HyDE is on or off for this intent."""
    if hyde is None:
        return "off (no LLM configured)"
    if intent.must_match_exactly or intent.must_preserve_terms:
        return "off (the query has literal constraints that must match exactly)"
    return f"on ({hyde.name})"


def dense_aspect(plan: QueryPlan, schema: DomainSchema) -> str:
    """The aspect of the plan's first text-embedded dense source (else the identity aspect):
    where HyDE, coverage and feedback queries go and whose vectors MMR compares."""
    for vs in plan.vector_sources:
        if vs.query_vector_source != "reference_tool":
            return vs.aspect
    return schema.role_aspect("identity") or schema.aspect_names[0]


def base_text(intent: IntentState) -> str:
    """The text later rounds build on: the semantic variant, else the query."""
    return intent.semantic_variants[0] if intent.semantic_variants else intent.query


def describe_queries(plan: QueryPlan, purposes: dict[str, str] | None = None) -> list[RoundQuery]:
    """The distinct query texts of a plan with the modes that run each."""
    purposes = purposes or {}
    out: dict[str, RoundQuery] = {}

    def add(text: str, mode: str, purpose: str = "plan", target: str | None = None) -> None:
        q = out.get(text)
        if q is None:
            q = out[text] = RoundQuery(
                text=text,
                purpose=purposes.get(text, purpose),  # type: ignore[arg-type]
                target=target,
            )
        if mode not in q.modes:
            q.modes.append(mode)

    for vs in plan.vector_sources:
        if vs.query_vector_source == "reference_tool":
            add(f"vectors of {vs.text}", f"dense:{vs.aspect}")
        else:
            add(
                vs.text or "",
                f"dense:{vs.aspect}",
                "hyde" if vs.query_vector_source == "hyde" else "plan",
            )
    if plan.sparse_source is not None:
        add(plan.sparse_source.text, "sparse")
    for st in plan.structured_sources:
        label = ", ".join(p.label() for p in st.preferences) or "filters only"
        add(label, "structured")
    return list(out.values())


def with_written_queries(
    plan: QueryPlan, queries: list[RoundQuery], texts: list[str], schema: DomainSchema
) -> tuple[QueryPlan, list[RoundQuery]]:
    """A later round's plan with ``texts`` (queries an LLM wrote from the evidence so far,
    IRCoT-style) added as dense queries on the main aspect, purpose ``llm`` (a plan that now
    fuses three or more lists switches to RRF)."""
    if not texts:
        return plan, queries
    aspect = dense_aspect(plan, schema)
    depth = max(
        (v.top_k for v in plan.vector_sources),
        default=top_k(schema.tuning.depth, plan.limit, floor=1),
    )
    sources = [
        *plan.vector_sources,
        *(
            VectorSource(aspect=aspect, top_k=depth, query_vector_source="llm", text=t)
            for t in texts
        ),
    ]
    update: dict[str, Any] = {"vector_sources": sources}
    if plan.fusion != "rrf":
        update["fusion"] = fusion_for(plan.source_count + len(texts))
    written = [
        RoundQuery(
            text=t, purpose="llm", target="written from the evidence", modes=[f"dense:{aspect}"]
        )
        for t in texts
    ]
    return plan.model_copy(update=update), [*queries, *written]


def round_one_plan(
    state: ExecutorState, schema: DomainSchema, hyde_passage: str | None = None
) -> tuple[QueryPlan, list[RoundQuery]]:
    """Round 1's plan: the plan itself; each must-preserve term put verbatim into the sparse
    query when missing; ``hyde_passage`` (when given) an extra dense query on the main aspect
    (a plan that now fuses three or more lists switches to RRF)."""
    intent, plan = state.intent, state.plan
    update: dict[str, Any] = {"round": 1}
    if plan.sparse_source is not None:
        text = plan.sparse_source.text
        refs = reference_names(intent)
        lacking = [
            t
            for t in intent.must_preserve_terms
            if t.lower() not in text.lower() and t.lower() not in refs
        ]
        if lacking:
            update["sparse_source"] = plan.sparse_source.model_copy(
                update={"text": " ".join([text, *lacking])}
            )
    purposes: dict[str, str] = {}
    if hyde_passage is not None:
        aspect = dense_aspect(plan, schema)
        depth = max(
            (v.top_k for v in plan.vector_sources),
            default=top_k(schema.tuning.depth, plan.limit, floor=1),
        )
        sources = [
            *plan.vector_sources,
            VectorSource(aspect=aspect, top_k=depth, query_vector_source="hyde", text=hyde_passage),
        ]
        update["vector_sources"] = sources
        count = plan.source_count + 1
        if plan.fusion != "rrf":
            update["fusion"] = fusion_for(count)
        purposes[hyde_passage] = "hyde"
    round_plan = plan.model_copy(update=update)
    return round_plan, describe_queries(round_plan, purposes)
