"""Hydration: fused ids become candidates with payload metadata and full provenance.

Candidates are deduplicated by record id and keep every source that found them (rank, raw and
per-list min-max score, round and query text), the query terms they match and the intent's
values they hold; :func:`execution_stats` counts what one execution did.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from agentic_search.dependencies import Dependencies
from agentic_search.logic.fusion import minmax
from agentic_search.logic.keywords import shown_words
from agentic_search.logic.planner import excluded_label
from agentic_search.logic.schema import NUMERIC_TYPES, DomainSchema
from agentic_search.logic.text import keyword_text
from agentic_search.wire import (
    INTERNAL_KEYS,
    Candidate,
    ExecutionStats,
    Fused,
    IntentState,
    Provenance,
    QueryPlan,
    RetrievedList,
    value_text,
)

#: Hydrated candidates validated in one call (see :func:`hydrate`).
CANDIDATES = TypeAdapter(list[Candidate])
#: Provenances validated in one call (see :func:`provenances`).
PROVENANCES = TypeAdapter(list[Provenance])


def hydrate(
    deps: Dependencies,
    plan: QueryPlan,
    intent: IntentState | None,
    results: list[RetrievedList],
    fused: list[Fused],
    query_text: str | None = None,
    known_payloads: dict[str, dict[str, Any]] | None = None,
) -> list[Candidate]:
    """Candidates for ``fused`` (in its order) with payload metadata and provenance: every
    source hit of ``results`` that found them, matched query terms, matched values.
    ``query_text`` (default: the plan's sparse text) is what matched terms are taken from.
    ``known_payloads`` (record id -> payload) already read by the caller are not fetched
    again.
    """
    schema = deps.schema
    rows = _provenance_rows(deps, plan, intent, results, fused, query_text, known_payloads)
    out = [
        {
            "id": f.id,
            "source": best["system"] if (best := _best(prov)) else "qdrant",
            "score": round(f.score, 6),
            "fused_score": round(f.fused, 6),
            "metadata": metadata(schema, payload),
            "provenance": prov,
        }
        for f, payload, prov in rows
    ]
    return CANDIDATES.validate_python(out)


def provenances(
    deps: Dependencies,
    plan: QueryPlan,
    intent: IntentState | None,
    results: list[RetrievedList],
    fused: list[Fused],
    query_text: str | None = None,
    known_payloads: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Provenance]:
    """Record id -> the :class:`~agentic_search.wire.Provenance` :func:`hydrate` gives its
    candidate, for each of ``fused`` (same arguments), without building the candidates:
    what evidence carries (a round's evidence needs no candidate metadata)."""
    rows = _provenance_rows(deps, plan, intent, results, fused, query_text, known_payloads)
    validated = PROVENANCES.validate_python([prov for _, _, prov in rows])
    return {f.id: prov for (f, _, _), prov in zip(rows, validated, strict=True)}


def _best(prov: dict[str, Any]) -> dict[str, Any] | None:
    hits = prov["hits"]
    return hits[0] if hits else None


def _provenance_rows(
    deps: Dependencies,
    plan: QueryPlan,
    intent: IntentState | None,
    results: list[RetrievedList],
    fused: list[Fused],
    query_text: str | None,
    known_payloads: dict[str, dict[str, Any]] | None,
) -> list[tuple[Fused, dict[str, Any], dict[str, Any]]]:
    """``(fused entry, payload without internal keys, provenance as a plain dict)`` for each
    of ``fused``: plain dicts, validated once per call by the caller (hundreds of
    SourceHit/Provenance constructions one by one were a large share of hydration)."""
    schema = deps.schema
    payloads: dict[str, dict[str, Any]] = dict(known_payloads or {})
    hits: dict[str, list[dict[str, Any]]] = {}
    wanted = {f.id for f in fused}  # hits of other ids would be built and never read
    for r in results:
        mine = [h for h in r.hits if h.id in wanted]
        if not mine:
            continue
        # against the whole list's scores and ranks: a list kept in the executor state is
        # pruned to the hits that can still be returned (RetrievedList.pruned), and so are
        # its positions: each hit carries its rank in the list the source answered, and is
        # min-max normalized against the scores of that list, for the wanted hits alone
        normalized = minmax([h.score for h in mine], r.score_bounds)
        for h, n in zip(mine, normalized, strict=True):
            via = h.via
            hits.setdefault(h.id, []).append(
                {
                    "source": f"{r.name}:{via}" if via else r.name,
                    "system": r.system,
                    "aspect": r.aspect,
                    "query_vector_source": r.query_vector_source,
                    "rank": h.rank,
                    "raw_score": round(float(h.score), 6),
                    "normalized_score": round(n, 6),
                    "round": r.round,
                    "query": r.query,
                }
            )
    missing = [f.id for f in fused if f.id not in payloads]
    if missing:
        for rid, rec in deps.store.hydrate_records(schema, missing).items():
            payloads[rid] = rec.payload or {}
    filters_applied = [f.label() for f in plan.filters]
    if plan.exclude_ids:
        filters_applied.append(
            f"{schema.id_field} not in [{excluded_label(plan.exclude_ids, intent)}]"
        )
    if query_text is None and plan.sparse_source is not None:
        query_text = plan.sparse_source.text
    query_terms = set(deps.analyzer.terms(query_text)) if query_text else set()
    # the words a person is shown: the user's own, as written (a rewrite's are not theirs)
    written = (
        deps.analyzer.written_forms(intent.query) if intent is not None and query_terms else {}
    )
    # Which query terms each candidate contains, from the keyword index when it can tell
    # (the stored sparse vectors): analysing 100 abstracts per search was most of this step.
    presence: dict[str, set[str]] = {}
    if query_terms:
        presence = deps.keyword.term_presence(schema, sorted(query_terms), [f.id for f in fused])
    collection = deps.store.collection(schema)
    out: list[tuple[Fused, dict[str, Any], dict[str, Any]]] = []
    for f in fused:
        payload = {k: v for k, v in payloads.get(f.id, {}).items() if k not in INTERNAL_KEYS}
        own = sorted(
            hits.get(f.id, []),
            key=lambda h: (-f.contributions.get(h["source"], 0.0), h["round"] or 1, h["rank"]),
        )
        dense = next((h for h in own if h["aspect"]), None)
        if not query_terms:
            matched_terms: list[str] = []
        elif f.id in presence:
            matched_terms = sorted(presence[f.id])
        else:
            matched_terms = sorted(
                query_terms & set(deps.analyzer.terms(keyword_text(schema, payload)))
            )
        prov = {
            "collection": collection,
            "aspect": dense["aspect"] if dense else None,
            "query_vector_source": dense["query_vector_source"] if dense else None,
            "filters_applied": filters_applied,
            "hits": own,
            "matched_terms": matched_terms,
            "matched_keywords": shown_words(matched_terms, written),
            "matched_values": matched_values(schema, intent, payload),
        }
        out.append((f, payload, prov))
    return out


def metadata(schema: DomainSchema, payload: dict[str, Any]) -> dict[str, Any]:
    """A candidate's ``metadata``: the schema's candidate fields of ``payload`` (a list shown
    as ``platform`` joined, the schema's ``text_field`` cut at 600 characters when long, a
    numeric field's whole value an int: a ``number`` field is validated to a float at
    ingest, so the payload holds a year as 2023.0, which a person reads as 2023)."""
    meta: dict[str, Any] = {}
    for key, fname in schema.candidate_metadata.items():
        value = payload.get(fname)
        fdef = schema.fields.get(fname)
        if fdef is not None and fdef.type in NUMERIC_TYPES and isinstance(value, float):
            value = int(value) if value.is_integer() else value
        if key == "platform" and isinstance(value, list):
            value = ", ".join(value)
        if fname == schema.text_field and isinstance(value, str) and len(value) > 600:
            value = value[:597] + "..."
        if value is not None:
            meta[key] = value
    return meta


def matched_values(
    schema: DomainSchema, intent: IntentState | None, payload: dict[str, Any]
) -> dict[str, list[str]]:
    """Which of the intent's vocabulary matches and constraint fields ``payload`` holds."""
    if intent is None:
        return {}
    out: dict[str, list[str]] = {}
    for vocab, values in intent.matches.items():
        fname = schema.vocabulary_fields.get(vocab)
        if not fname:
            continue
        have = payload.get(fname)
        have_list = have if isinstance(have, list) else [have]
        got = [v for v in values if v in have_list]
        if got:
            out[fname] = got
    for flt in intent.constraints:
        value = payload.get(flt.field)
        if value is not None:
            out.setdefault(flt.field, [value_text(value)])
    return out


def execution_stats(
    results: list[RetrievedList],
    fused: list[Fused],
    method: str,
    stage: dict[str, float],
    intent: IntentState | None,
    plan: QueryPlan,
) -> ExecutionStats:
    """Counters of one execution (``stage`` in ms, with a ``total``)."""
    ok = [r for r in results if r.error is None]
    return ExecutionStats(
        vector_queries_executed=sum(1 for r in ok if r.name.startswith("dense:")),
        structured_queries_executed=sum(1 for r in ok if r.name.startswith("structured:")),
        sparse_queries_executed=sum(1 for r in ok if r.name.startswith("sparse:")),
        fusion_method=method,
        latency_ms=round(stage.get("total", 0.0)),
        candidates_before_fusion=sum(len(r.hits) for r in ok),
        candidates_after_fusion=len(fused),
        stage_ms={k: round(v, 2) for k, v in stage.items()},
        source_ms={r.name: round(r.ms, 2) for r in results},
        extractor=intent.extractor if intent else "none",
        planner=plan.planner,
    )


__all__ = [
    "CANDIDATES",
    "PROVENANCES",
    "execution_stats",
    "hydrate",
    "matched_values",
    "metadata",
    "provenances",
]
