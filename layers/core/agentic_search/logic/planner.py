"""Query planning: IntentState -> validated :class:`QueryPlan`.

The rule-based planner chooses a strategy from what the intent holds and routes to the
aspects the schema gives each role (``roles`` in the domain YAML, :class:`~agentic_search.
logic.schema.Roles`; the vocabularies' routes say which matched values signal which role):

* ``identity-focused``: a reference record and nothing else -> the reference's stored
  identity and capability vectors, plus the query text on identity;
* ``capability-focused``: values of a vocabulary routed to capability -> capability +
  identity;
* ``usecase-focused``: values of a vocabulary routed to usecase, or a task phrasing ("for
  writing", "to transcribe") -> usecase + identity (+ the enrichment's needs aspect, when the
  domain declares one and the index holds enriched records);
* ``multi-collection-hybrid``: two or more of the above.

Values routed to platform add the platform aspect; the schema's ``always`` aspects (by default,
in a YAML that declares no aspect role, every aspect) are searched with the query text in
every plan. The schema's whole-record aspect
(:attr:`~agentic_search.logic.schema.DomainSchema.record_aspect`) is searched with the query
text wherever no capability was read and in a long query, and by a reference's own record
vector, so those routings never lose what one vector per record finds.

Every plan also has the BM25 keyword source over the query (must-preserve terms appended), a
structured source when the intent matched values of a preference vocabulary (ranked by
matched preferences), hard constraints pushed down into every source, and the seed's fusion
rule: 3+ sources -> RRF, 2 -> weighted sum, 1 -> none. :func:`validate_plan` lists every
reason a plan is invalid.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from agentic_search.logic.bm25 import keyword_query
from agentic_search.logic.complexity import is_long
from agentic_search.logic.intent import normalize_query
from agentic_search.logic.plan_rules import fusion_for, reference_names, top_k, validate_plan
from agentic_search.logic.schema import DomainSchema
from agentic_search.logic.tuning import IntentTuning
from agentic_search.wire import (
    Filter,
    IntentState,
    QueryPlan,
    SparseSource,
    StructuredSource,
    VectorSource,
)

_TASK = re.compile(
    r"\b(?:for|to|help(?:s)?\s+(?:me\s+)?|so\s+i\s+can|i\s+need\s+to|i\s+want\s+to)\s+\w+"
)


def structured_source_for(
    schema: DomainSchema, intent: IntentState, limit: int
) -> StructuredSource | None:
    """The structured source of an intent: its hard constraints as filters, its vocabulary
    matches (and the reference tool's profile) as soft preferences, one per preference
    vocabulary (:attr:`~agentic_search.logic.schema.DomainSchema.vocabulary_routes`, in
    their order); None without preferences."""
    preferences: list[Filter] = []
    for vocab in schema.vocabulary_routes:
        values = list(
            dict.fromkeys(
                [*intent.matches.get(vocab, []), *intent.reference_profile.get(vocab, [])]
            )
        )
        field = schema.vocabulary_fields.get(vocab)
        if values and field and "in" in schema.fields[field].filter:
            preferences.append(Filter(field=field, operator="in", value=list(values)))
    if not preferences:
        return None
    return StructuredSource(
        filters=list(intent.constraints),
        preferences=preferences,
        top_k=top_k(schema.tuning.depth, limit, "structured"),
    )


def excluded_ids(intent: IntentState) -> list[str]:
    """Ids a plan must not return: the reference tool of an "alternative to X" query and its
    add-ons (named after it, or naming it as what they plug into), and the tools the user
    excluded ("not Terraform")."""
    ref = intent.reference_tool
    alternative = bool(ref) and intent.primary_goal == "alternative-to"
    exclude = [ref, *intent.reference_addons] if alternative else []
    return list(dict.fromkeys([*exclude, *intent.excluded_tools]))  # type: ignore[list-item]


def excluded_label(exclude_ids: Sequence[str], intent: IntentState | None) -> str:
    """``exclude_ids`` as a person reads them: the records one by one, the reference's
    add-ons counted ("webpack, 72 add-ons of webpack"): a plan may exclude a hundred."""
    addons = set(intent.reference_addons) if intent is not None else set()
    named = [i for i in exclude_ids if i not in addons]
    counted = sum(1 for i in exclude_ids if i in addons)
    parts = [*named]
    if counted and intent is not None:
        parts.append(f"{counted} add-on{'s' if counted > 1 else ''} of {intent.reference_tool}")
    return ", ".join(parts)


#: A fuzzy name link rewrites the searched text only from this score (``1 - edits / length``):
#: one edit in a four-letter word (0.75: French "bout" -> Bolt, "voix" -> Void) is pinned but
#: too weak to replace what the dense sources embed (on the tools tuning split those two
#: rewrites lost nDCG@10 and those scoring 0.83 and more gained: docs/benchmarks.md).
NAME_REWRITE_MIN_SCORE = 0.8


def corrected_text(intent: IntentState) -> str:
    """The query with the linker's typo corrections applied ("vectr databse" -> "vector
    database"): the normalized query when the corrections changed it, else the query as
    written (so casing is kept where nothing was corrected); a name the linker matched
    fuzzily with a score of at least :data:`NAME_REWRITE_MIN_SCORE` is written as the
    record's name ("stabel difusion web ui" -> "Stable Diffusion web ui"), so every source, not
    only the entity pin, searches what was meant."""
    text = intent.query
    if intent.normalized_query and intent.normalized_query != normalize_query(intent.query):
        text = intent.normalized_query
    for link in intent.linked:
        if link.method == "fuzzy" and link.score >= NAME_REWRITE_MIN_SCORE:
            surface = r"\s+".join(map(re.escape, link.surface.split()))
            text = re.sub(rf"(?i)(?<!\w){surface}(?!\w)", lambda _, n=link.name: n, text)
    return text


def without_negations(text: str, negations: list[str]) -> str:
    """``text`` less the phrases that say what is not wanted (``IntentState.negations``, as
    in the normalized query; matched case-insensitively across whitespace, dashes and curly
    quotes), with the punctuation they leave dangling: "transcription API, not a desktop app"
    -> "transcription API". ``text`` itself when nothing would be left."""
    out = text
    for phrase in negations:
        words = [re.escape(w) for w in re.split(r"[\s\-–—]+", phrase) if w]
        if not words:
            continue
        pattern = r"[\s\-–—]+".join(w.replace("'", "['’]") for w in words)
        out = re.sub(rf"(?i)(?<!\w){pattern}(?!\w)", " ", out)
    out = re.sub(r"\s+([,;:.!?])", r"\1", out)
    out = re.sub(r"\s+", " ", out).strip(" ,;:-–—")
    return out if out.strip() else text


def plan_confidence(tuning: IntentTuning, intent_confidence: float) -> float:
    """The rule-based plan's confidence: ``plan_base`` plus ``plan_per_intent`` times the
    intent's, at most ``plan_cap`` (the schema's ``tuning.intent``), to two decimals."""
    return round(
        min(tuning.plan_cap, tuning.plan_base + tuning.plan_per_intent * intent_confidence), 2
    )


class RuleBasedPlanner:
    """Deterministic planner over a domain schema (see module docstring)."""

    name = "rules"

    def __init__(
        self,
        schema: DomainSchema,
        rrf_k: int = 60,
        enriched: Callable[[], bool] | None = None,
    ) -> None:
        """``enriched``: whether the index holds enriched records (asked per plan; None:
        yes), so that an index without any plans no source that would find nothing (and
        the fusion rule, which counts sources, is the one it had before)."""
        self.schema = schema
        self.rrf_k = rrf_k
        self.enriched = enriched

    def plan(self, intent: IntentState, limit: int = 10) -> QueryPlan:
        """Build and validate the plan for ``intent``.

        Raises:
            PlanError: if the resulting plan is invalid (a bug or a bad schema).
        """
        schema = self.schema
        aspects = set(schema.aspect_names)
        m = intent.matches

        def signals(role: str) -> bool:
            return any(m.get(v) for v in schema.vocabularies_for(role))

        role = schema.role_aspect
        capability = signals("capability")
        # Use-case phrasing is looked for in the query minus its constraint and reference phrases
        # ("alternative to X" and "for Linux" are not tasks).
        if intent.semantic_variants:
            task_text = intent.semantic_variants[0]
        elif intent.constraints or intent.reference_tool:
            task_text = ""
        else:
            task_text = intent.normalized_query
        usecase = signals("usecase") or bool(_TASK.search(task_text) and not capability)
        reference = intent.reference_tool
        # With a reference tool and nothing else left of the query ("alternative to Cursor"),
        # the query text carries no meaning of its own: search by the reference's vectors and
        # profile instead of embedding the word "alternative".
        by_example_only = bool(reference) and not intent.semantic_variants
        # The dense source embeds the query as written, with a typo fix applied (the corrected
        # text): stripping filler and constraint words cost a little wherever it was measured
        # (the model reads them as context). Only a query by example embeds its variant, which
        # leaves out "alternative to X" (X is searched by its own vectors).
        # The negated phrases ("not Terraform") are left out: they are hard filters, and an
        # embedding has no negation (the words pull the vector toward what was excluded).
        corrected = without_negations(corrected_text(intent), intent.negations)
        variant = bool(reference) and bool(intent.semantic_variants)
        dense_text = intent.semantic_variants[0] if variant else corrected
        if intent.translation:  # an LLM's English rendering of a non-English query
            dense_text = intent.translation
        if not dense_text.strip():
            dense_text = intent.query
        qvs = "semantic_variant" if variant else "query_text"

        focus = [
            name
            for name, on in (
                ("capability", capability),
                ("usecase", usecase),
                ("reference", bool(reference)),
            )
            if on
        ]
        if len(focus) >= 2:
            strategy = "multi-collection-hybrid"
        elif reference:
            strategy = "identity-focused"
        elif capability:
            strategy = "capability-focused"
        elif usecase:
            strategy = "usecase-focused"
        else:
            strategy = "multi-collection-hybrid" if len(aspects) > 1 else "identity-focused"

        rationale: list[str] = [f"strategy {strategy}: signals {focus or ['none']}"]
        sources: list[VectorSource] = []

        def add(
            aspect: str | None, source: str, text: str | None, weight: float | None = None
        ) -> None:
            if aspect is None or aspect not in aspects:
                return
            weight = schema.aspect(aspect).weight if weight is None else weight
            key = (aspect, source)
            if any((s.aspect, s.query_vector_source) == key for s in sources):
                return
            sources.append(
                VectorSource(
                    aspect=aspect,
                    top_k=top_k(
                        schema.tuning.depth, limit, floor=schema.aspect(aspect).default_top_k
                    ),
                    query_vector_source=source,  # type: ignore[arg-type]
                    text=text,
                    weight=weight,
                )
            )

        first_aspect = role("identity")
        assert first_aspect is not None  # the first aspect when none is declared
        if reference:
            add(role("identity"), "reference_tool", reference)
            add(role("capability"), "reference_tool", reference)
            rationale.append(f"reference tool {intent.reference_tool_name!r}: its stored vectors")
        if not by_example_only:
            add(first_aspect, qvs, dense_text)
            for aspect in schema.always_aspects:
                add(aspect, qvs, dense_text)
        # The whole-record vector: the reference's own, and the query's wherever no capability
        # was read (a task, a use case, a name, a plain phrase): there the aspects above are
        # fragments of what the query means and one vector per record reads it best; where a
        # capability was read, the capability aspect and the structured source carry it.
        if record := schema.record_aspect:
            if reference:  # at the weight of the reference's other vectors
                add(record, "reference_tool", reference, 1.0)
            if not by_example_only and not capability:
                add(record, qvs, dense_text)
        if capability:
            add(role("capability"), qvs, dense_text)
        # a task-phrased need also searches the needs an enrichment wrote for each record
        # (the domain's enrichment.route_aspect), as it searches the record's own use cases
        needs_aspect = schema.enrichment.route_aspect if schema.enrichment else None
        if needs_aspect and self.enriched is not None and not self.enriched():
            needs_aspect = None
        if usecase:
            add(role("usecase"), qvs, dense_text)
            if needs_aspect:
                add(needs_aspect, qvs, dense_text)
        if (
            strategy == "multi-collection-hybrid"
            and not reference
            and not capability
            and not usecase
        ):
            # not the needs: a plain phrase (a name above all) would be outvoted by the
            # records that have needs, and a record added without enrichment has none
            add(role("capability"), qvs, dense_text)
            add(role("usecase"), qvs, dense_text)
        if signals("platform"):
            add(role("platform"), qvs, dense_text)

        profile_terms = [v for values in intent.reference_profile.values() for v in values]
        if reference:
            # Query by example: the reference's vocabulary values replace its name, which would
            # otherwise favour tools that merely mention it ("an alternative to Cursor").
            ref_names = reference_names(intent)
            preserved = [t for t in intent.must_preserve_terms if t.lower() not in ref_names]
            base = intent.semantic_variants[0] if intent.semantic_variants else ""
            keyword_text = keyword_query(base, *preserved, *profile_terms)
        else:
            # a quoted phrase is in the query already; a corrected typo and a corrected name are
            # added (the text as written kept for keyword OR), each word the query holds once;
            # an LLM's rendering of a non-English query is searched beside the original
            fixed = [corrected] if corrected != intent.query else []
            extra = [intent.translation] if intent.translation else []
            keyword_text = keyword_query(intent.query, *fixed, *intent.must_preserve_terms, *extra)
        sparse = SparseSource(
            text=keyword_text or intent.query, top_k=top_k(schema.tuning.depth, limit, "sparse")
        )

        structured: list[StructuredSource] = []
        if (st := structured_source_for(schema, intent, limit)) is not None:
            structured.append(st)
            rationale.append("structured source: " + ", ".join(p.label() for p in st.preferences))
        if intent.constraints:
            rationale.append(
                "hard filters pushed into every source: "
                + ", ".join(f.label() for f in intent.constraints)
            )
        temporal = schema.temporal
        for f in intent.constraints:
            if temporal and f.field == temporal.field and f.origin and "records carry" in f.origin:
                rationale.append(f"temporal filter {f.label()}: {f.origin}")
                break

        filters = list(intent.constraints)
        if is_long(intent):
            # A pasted paragraph: the rules' reading of it is a guess (vocabulary words said in
            # passing, "free or open source preferred, a paid plan could be considered" read
            # as hard filters), so round 1 searches what plain hybrid retrieval searches: the
            # text as written, embedded (within the model's window) and by every keyword. Its
            # constraints stay coverage targets, not filters; later rounds only add.
            depth = top_k(
                schema.tuning.depth, limit, floor=schema.aspect(first_aspect).default_top_k
            )
            sources = [
                VectorSource(
                    aspect=aspect, top_k=depth, query_vector_source="query_text",
                    text=intent.query, weight=schema.aspect(aspect).weight,
                )
                for aspect in dict.fromkeys([first_aspect, schema.record_aspect or first_aspect])
            ]  # fmt: skip
            sparse = SparseSource(text=intent.query, top_k=sparse.top_k)
            structured, filters = [], []
            rationale = [
                f"a long query ({len(intent.keywords)} content words): the text as written, "
                f"dense on {', '.join(s.aspect for s in sources)} and BM25, no filters or "
                "vocabulary read from it"
            ]
        exclude = excluded_ids(intent)
        count = len(sources) + 1 + len(structured)
        plan = QueryPlan(
            domain=schema.name,
            strategy=strategy,  # type: ignore[arg-type]
            vector_sources=sources,
            sparse_source=sparse,
            structured_sources=structured,
            filters=filters,
            exclude_ids=exclude,
            fusion=fusion_for(count),  # type: ignore[arg-type]
            rrf_k=self.rrf_k,
            limit=limit,
            confidence=plan_confidence(schema.tuning.intent, intent.confidence),
            rationale=rationale,
            planner=self.name,
        )
        validate_plan(plan, schema)
        return plan
