"""An LLM's intent and plan answers, checked against the domain schema and the plan rules.

The answer was parsed by the output models of :mod:`agentic_search.logic.llm_prompts`; here it
becomes an :class:`IntentState` or a :class:`QueryPlan` only if every constraint is on a
filterable field with an allowed operator and value and the plan passes
:func:`~agentic_search.logic.planner.validate_plan`; anything else is an
:class:`~agentic_search.logic.llm_budget.LLMFallback` with the reason (the caller runs the
rules). Parts a small model gets wrong without the whole reading being wrong are dropped, not
refused: a reference tool that does not resolve by name in the catalog (never an id taken from
the LLM), must-preserve terms that do not occur in the query or are neither quoted there nor a
catalog name, and vocabulary matches that echo the prompt's list (:func:`echoed_vocabulary`).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from agentic_search.logic.filters import filter_problems
from agentic_search.logic.intent import (
    CatalogLookup,
    normalize_query,
    quoted_phrases,
    reference_profile,
)
from agentic_search.logic.llm_budget import LLMFallback
from agentic_search.logic.llm_prompts import MAX_MATCHES, MAX_TEXT, MAX_WRITTEN_QUERIES
from agentic_search.logic.plan_rules import PlanError, top_k, validate_plan
from agentic_search.logic.planner import excluded_ids, structured_source_for
from agentic_search.logic.schema import DomainSchema
from agentic_search.logic.text import default_analyzer
from agentic_search.wire import (
    Filter,
    IntentState,
    QueryPlan,
    SparseSource,
    VectorSource,
)


def validation_reason(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(p) for p in err["loc"])
        parts.append(f"{loc}: {err['msg']}")
    more = f" (+{exc.error_count() - 3} more)" if exc.error_count() > 3 else ""
    return "; ".join(parts) + more


def grounded(term: str, query: str) -> bool:
    return bool(term.strip()) and term.strip().casefold() in query.casefold()


def echoed_vocabulary(schema: DomainSchema, vocabulary: str, values: list[str]) -> bool:
    """Whether ``values`` are the first :data:`MAX_MATCHES` values of ``vocabulary`` in the
    order the prompt lists them: the model echoed the prompt, it did not choose.

    Recorded from Qwen2.5-Coder 0.5B and 1.5B on tuning queries ("turn my slide deck into a
    narrated explainer video" -> pricing Free, Freemium, Paid; deployment Cloud, Local,
    Self-hosted; user types Developers, Data Scientists, Designers): taken as matches, these
    preferences pull every search toward the first listed values."""
    listed = list(schema.vocabularies.get(vocabulary, []))
    return len(values) >= MAX_MATCHES and values[:MAX_MATCHES] == listed[:MAX_MATCHES]


def intent_from_output(
    schema: DomainSchema,
    query: str,
    out: dict[str, Any],
    lookup: CatalogLookup,
    *,
    min_confidence: float,
    extractor: str,
) -> IntentState:
    """Turn a parsed intent answer into an IntentState: constraints checked against the
    schema's filter allowlist and vocabularies, the reference tool resolved by name in the
    catalog, must-preserve terms kept only when they occur in the query.

    Raises:
        LLMFallback: for a constraint the schema does not allow, or a low confidence.
    """
    normalized = normalize_query(query)
    constraints: list[Filter] = []
    problems: list[str] = []
    for c in out.get("constraints", []):
        value = c["value"]
        if c["operator"] in ("in", "nin") and not isinstance(value, list):
            value = [value]
        try:
            flt = Filter(field=c["field"], operator=c["operator"], value=value, origin="llm")
        except ValidationError as exc:
            problems.append(validation_reason(exc))
            continue
        found = filter_problems(schema, flt)
        if found:
            problems += found
        elif flt not in constraints:
            constraints.append(flt)
    if problems:
        raise LLMFallback("invalid", "constraints: " + "; ".join(problems[:3]))
    confidence = float(out["confidence"])
    if confidence < min_confidence:
        raise LLMFallback(
            "low-confidence",
            f"intent confidence {confidence:.2f} < {min_confidence:.2f}",
        )
    reference_id, reference_name = None, None
    ref = (out.get("reference_tool") or "").strip()
    if ref:
        reference_id = lookup.names.get(ref.casefold())
        reference_name = ref if reference_id else None
    excluded = [
        rid
        for name in out.get("excluded_tools", [])
        if (rid := lookup.names.get(str(name).strip().casefold())) and rid != reference_id
    ]
    goal = out["primary_goal"]
    if goal == "alternative-to" and reference_id is None:
        goal = "find"
    profile = reference_profile(schema, lookup.record(reference_id) or {}) if reference_id else {}
    matches = {
        k: values
        for k, v in out["matches"].items()
        if (values := list(dict.fromkeys(v))) and not echoed_vocabulary(schema, k, values)
    }
    # The prompt asks for quoted phrases and product names; a small model also lists the
    # query's descriptive phrases ("narrated explainer video", "sin conexión"), which would
    # become must-match coverage targets the search then hunts for literally.
    quoted = {p.casefold() for p in quoted_phrases(query)}
    preserve = [
        t.strip()
        for t in out["must_preserve_terms"]
        if grounded(t, query)
        and (t.strip().casefold() in quoted or t.strip().casefold() in lookup.names)
    ]
    variant = " ".join(out["semantic_query"].split())
    return IntentState(
        query=query,
        normalized_query=normalized,
        primary_goal=goal,
        reference_tool=reference_id,
        reference_tool_name=reference_name,
        reference_profile=profile,
        excluded_tools=excluded,
        matches=matches,
        constraints=constraints,
        must_preserve_terms=list(dict.fromkeys(preserve)),
        must_match_exactly=bool(quoted_phrases(query)),
        keywords=list(dict.fromkeys(default_analyzer().terms(normalized))),
        semantic_variants=[variant] if variant and variant.casefold() != normalized else [],
        confidence=round(confidence, 2),
        extractor=extractor,
    )


def plan_from_output(
    schema: DomainSchema,
    intent: IntentState,
    limit: int,
    out: dict[str, Any],
    *,
    min_confidence: float,
    rrf_k: int,
    planner: str,
) -> QueryPlan:
    """Turn a parsed plan answer into a QueryPlan: filters are the intent's validated
    constraints (the LLM writes none), reference-tool sources only with a reference tool,
    must-preserve terms appended to the keyword text, then :func:`validate_plan`.

    Raises:
        LLMFallback: for a plan that breaks the plan rules or has a low confidence.
    """
    fallback_text = (intent.semantic_variants or [intent.query])[0]
    sources: list[VectorSource] = []
    problems: list[str] = []
    for s in out["vector_sources"]:
        if s["query_vector_source"] == "reference_tool":
            if not intent.reference_tool:
                problems.append(f"{s['aspect']}: reference_tool source without a reference")
                continue
            text = intent.reference_tool
        else:
            text = " ".join(s["text"].split()) or fallback_text
        key = (s["aspect"], s["query_vector_source"])
        if any((v.aspect, v.query_vector_source) == key for v in sources):
            continue
        sources.append(
            VectorSource(
                aspect=s["aspect"],
                top_k=s["top_k"],
                query_vector_source=s["query_vector_source"],
                text=text,
            )
        )
    if problems:
        raise LLMFallback("invalid", "plan: " + "; ".join(problems[:3]))
    sparse = None
    if out["keyword_text"] and out["keyword_text"].strip():
        words = " ".join([out["keyword_text"].strip(), *intent.must_preserve_terms])
        sparse = SparseSource(text=words, top_k=top_k(schema.tuning.depth, limit, "sparse"))
    structured = []
    if out["structured"] and (st := structured_source_for(schema, intent, limit)):
        structured.append(st)
    confidence = float(out["confidence"])
    if confidence < min_confidence:
        raise LLMFallback(
            "low-confidence",
            f"plan confidence {confidence:.2f} < {min_confidence:.2f}",
        )
    try:
        plan = QueryPlan(
            domain=schema.name,
            strategy=out["strategy"],
            vector_sources=sources,
            sparse_source=sparse,
            structured_sources=structured,
            filters=list(intent.constraints),
            exclude_ids=excluded_ids(intent),
            fusion=out["fusion"],
            rrf_k=rrf_k,
            limit=limit,
            confidence=round(confidence, 2),
            rationale=[f"LLM: {out['rationale']}"[:MAX_TEXT]] if out["rationale"] else [],
            planner=planner,
        )
        validate_plan(plan, schema)
    except PlanError as exc:
        raise LLMFallback("invalid", "plan rules: " + "; ".join(exc.reasons[:3])) from exc
    except ValidationError as exc:
        raise LLMFallback("invalid", "plan: " + validation_reason(exc)) from exc
    return plan


__all__ = ["grounded", "intent_from_output", "plan_from_output", "validation_reason"]


def written_queries(out: list[str], query: str, asked: list[str]) -> list[str]:
    """A later round's LLM-written queries, kept when usable: whitespace collapsed, cut to
    :data:`MAX_TEXT` characters, empty ones, the query itself and any text already asked
    (``asked``, case-insensitive) dropped, duplicates once, at most
    :data:`~agentic_search.logic.llm_prompts.MAX_WRITTEN_QUERIES`."""
    seen = {query.casefold().strip(), *(a.casefold().strip() for a in asked)}
    kept: list[str] = []
    for text in out:
        text = " ".join(text.split())[:MAX_TEXT]
        if len(text) < 3 or text.casefold() in seen:
            continue
        seen.add(text.casefold())
        kept.append(text)
    return kept[:MAX_WRITTEN_QUERIES]
