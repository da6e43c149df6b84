"""Merge of the LLM's reading of a query with the rules' reading (LLM_PROVIDER=local/openai).

The rules are exact where they fire and blind elsewhere; a small LLM reads what the rules
cannot (another language, a need phrased as a task, a tool named in passing) but may also
invent or loosen a constraint. So the merged intent:

* keeps **every hard constraint the rules found** (price, deployment, platform, licence,
  date: any schema filter); an LLM constraint on a field the rules already constrained is
  dropped and reported as *overruled* when it differs; an LLM constraint on a field the rules
  left open is added;
* adds the LLM's vocabulary matches to the rules' only for a query not in the catalog's
  language (:func:`already_in_catalog_language`; a field where it listed more than
  :data:`MAX_LLM_MATCHES` values is ignored), its exclusions and must-preserve terms, and its
  reference tool when the rules found none and the query names it;
* puts the LLM's rewrite (the catalog-language rendering of a non-English query) first among
  the semantic variants and keeps it as ``translation`` beside the original query for keyword
  search, unless it is a paraphrase of a query already in the catalog's language
  (:func:`already_in_catalog_language`); the original query and its keywords are never
  replaced;
* for a need in the catalog's language that names no tool, keeps the LLM's capability
  vocabulary values (the "text-to-video" of "make an explainer video from my slides") apart as
  ``capability_reading``, which the planner searches as one more dense query on the capability
  aspect, fused with the query's own sources (:func:`capability_reading`): it adds candidates
  and replaces nothing;
* keeps the rules' goal, and takes no LLM reference tool on a comparison the rules read.

:func:`merge_intents` also says, per field, whether the value came from the rules, the LLM
or both (``--explain`` prints it).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from agentic_search.logic.llm_prompts import MAX_MATCHES
from agentic_search.logic.text import default_analyzer
from agentic_search.wire import Filter, IntentState

#: An LLM that picks more values than this for one vocabulary field has not chosen (small
#: models list the whole vocabulary): that field's LLM matches are ignored.
MAX_LLM_MATCHES = MAX_MATCHES

#: How many of the capability entries nearest the query by embedding an LLM capability value
#: must be among to be searched (:func:`capability_reading`'s ``plausible``): 3 on the tuning
#: split's task-phrased queries (5: every LLM value passed as often as not; 2: as 3).
PLAUSIBLE_CAPABILITIES = 3

#: The per-field origins reported by :func:`merge_intents`.
FIELDS = (
    "capability_reading",
    "constraints",
    "excluded_tools",
    "matches",
    "reference_tool",
    "semantic_variants",
    "translation",
)


def _origin(rules: bool, llm: bool) -> str | None:
    if rules and llm:
        return "both"
    return "rules" if rules else ("llm" if llm else None)


def _same(a: Filter, b: Filter) -> bool:
    va = sorted(map(str, a.value)) if isinstance(a.value, list) else a.value
    vb = sorted(map(str, b.value)) if isinstance(b.value, list) else b.value
    return a.field == b.field and a.operator == b.operator and va == vb


#: Function words only English has among the query languages seen (es, de, fr, pt): a query
#: with one is in the catalog's language whatever the LLM renders it as ("CI/CD pipelines I
#: can run on my own servers" -> "find CI/CD pipelines for local deployment" shares under half
#: its terms, and that paraphrase replaced the query's dense text: golden g22 0.99 -> 0.94).
#: Not "a", "no", "in", "on", "i": Spanish, Portuguese, German and French words too.
_ENGLISH_ONLY = frozenset(
    {
        *("the", "and", "for", "with", "my", "our", "your", "to", "of", "that", "which"),
        *("can", "is", "are", "from", "into", "this", "without"),
    }
)


def already_in_catalog_language(query: str, rendering: str) -> bool:
    """Whether ``query`` is in the catalog's language (English) already, so that the LLM's
    ``rendering`` of it is a paraphrase, not a translation: the query holds an English-only
    function word (:data:`_ENGLISH_ONLY`), or the rendering shares at least half of the
    query's (stemmed English) terms. A paraphrase put first among the semantic variants
    replaced the query's own reading ("free alternative to Cursor" searched as "find free
    alternative to Cursor", "run LLMs locally on my laptop" as "explain how to run LLMs
    locally"); a translation shares next to none ("Rechtschreibprüfung für Deutsch, selbst
    gehostet" -> "self-hosted German spell checker")."""
    if _ENGLISH_ONLY & set(re.findall(r"\w+", query.casefold())):
        return True
    analyzer = default_analyzer()
    terms = set(analyzer.terms(query))
    if not terms:
        return False
    shared = terms & set(analyzer.terms(rendering))
    return 2 * len(shared) >= len(terms)


def capability_reading(
    rules: IntentState,
    llm: IntentState,
    vocabularies: Sequence[str],
    plausible: Collection[str] | None = None,
) -> str | None:
    """The LLM's capability values for a need the rules read as plain words, as one text
    ("Video Generation, Video Editing"), or None.

    Its values of the capability ``vocabularies`` (the schema's ``capabilities``, in that
    order; a field where it listed more than :data:`MAX_LLM_MATCHES` values is ignored) that
    the rules' matches do not hold already. None when the rules found a reference tool or a
    comparison (the query is anchored on named tools, and an LLM reading pulled those off:
    golden comparisons 1.0 -> 0.61 nDCG@10 with its matches) or when nothing is new.

    As vocabulary matches these values pulled the search off the rules' reading (golden
    capability queries 0.84 -> 0.62 with the 1.5B); as one more dense query fused beside the
    query's own they can only add candidates: the query, its keywords and the rules' matches
    are untouched."""
    if rules.reference_tool or rules.primary_goal == "compare" or rules.constraints:
        return None
    values: list[str] = []
    for vocab in vocabularies:
        chosen = llm.matches.get(vocab, [])
        if len(chosen) > MAX_LLM_MATCHES:
            continue
        have = set(rules.matches.get(vocab, []))
        values += [
            v
            for v in chosen
            if v not in have and v not in values and (plausible is None or v in plausible)
        ]
    return ", ".join(values) or None


def merge_intents(
    rules: IntentState,
    llm: IntentState,
    capability_vocabularies: Sequence[str] = (),
    plausible: Collection[str] | None = None,
) -> tuple[IntentState, dict[str, str], list[str]]:
    """The merged intent, the origin of each field (``rules``, ``llm`` or ``both``; fields
    neither set are absent) and the labels of LLM constraints the rules overruled.

    ``rules`` and ``llm`` read the same query; ``capability_vocabularies`` are the schema's
    capability vocabularies (:func:`capability_reading`; none: no capability reading). Pure;
    raises nothing.
    """
    origins: dict[str, str] = {}
    ruled_fields = {f.field for f in rules.constraints}
    constraints = list(rules.constraints)
    overruled: list[str] = []
    llm_added = llm_agreed = False
    for f in llm.constraints:
        if f.field in ruled_fields:
            if any(_same(f, r) for r in rules.constraints):
                llm_agreed = True
            else:
                overruled.append(f.label())
        elif not any(_same(f, c) for c in constraints):
            constraints.append(f)
            llm_added = True
    if o := _origin(bool(rules.constraints), llm_added or llm_agreed):
        origins["constraints"] = o

    # What the rules cannot read is a query in another language: only then does the LLM's
    # vocabulary reading count. On queries in the catalog's language its matches pulled the
    # search off the rules' exact reading (golden comparisons 1.0 -> 0.61 nDCG@10, capability
    # queries 0.84 -> 0.62, 1.5B, 3 a kind).
    llm_variant = llm.semantic_variants[0] if llm.semantic_variants else None
    foreign = bool(llm_variant) and not already_in_catalog_language(rules.query, llm_variant or "")
    matches = {k: list(v) for k, v in rules.matches.items()}
    llm_matches = False
    chosen = {k: v for k, v in llm.matches.items() if len(v) <= MAX_LLM_MATCHES and foreign}
    for k, values in chosen.items():
        new = [v for v in values if v not in matches.get(k, [])]
        if new:
            matches.setdefault(k, []).extend(new)
            llm_matches = True
    agreed = any(set(v) & set(rules.matches.get(k, [])) for k, v in chosen.items())
    if o := _origin(bool(rules.matches), llm_matches or agreed):
        origins["matches"] = o

    reference = rules
    # The LLM's reference counts only when the query names it: small models otherwise pick a
    # catalog tool for a query anchored on none, and the search turns into "like that tool".
    # Nor on a comparison the rules read: "Cursor vs Windsurf" searched as "like Cursor" loses
    # the second named tool (golden comparisons fell from nDCG@10 1.0 to 0.61 with the 1.5B).
    # And only when the LLM reads the query as "like that tool": "monitoring and alerting for
    # Kubernetes clusters" names Kubernetes, but searched as "like Kubernetes" it fell from
    # nDCG@10 0.93 to 0.14 (golden g42, 1.5B, goal find with reference Kubernetes).
    named = (
        llm.primary_goal == "alternative-to"
        and bool(llm.reference_tool_name)
        and llm.reference_tool_name.casefold() in rules.query.casefold()  # type: ignore[union-attr]
        and rules.primary_goal != "compare"
    )
    if not named:
        llm = llm.model_copy(
            update={"reference_tool": None, "reference_tool_name": None, "reference_profile": {}}
        )
    if not rules.reference_tool and llm.reference_tool:
        reference = llm
    if rules.reference_tool or llm.reference_tool:
        both = rules.reference_tool is not None and rules.reference_tool == llm.reference_tool
        origins["reference_tool"] = "both" if both else ("rules" if rules.reference_tool else "llm")
    # The rules' goal stands (a small model reads "explainer video" as explain, and "compare"
    # without two named tools has nothing to compare); an LLM reference brings its own.
    goal = reference.primary_goal if reference.reference_tool else rules.primary_goal

    translation = None
    variants = list(rules.semantic_variants)
    if llm_variant and foreign:
        translation = llm_variant
        variants = [llm_variant, *[v for v in variants if v != llm_variant]]
        origins["translation"] = "llm"
    if o := _origin(bool(rules.semantic_variants), translation is not None):
        origins["semantic_variants"] = o

    # A need in the catalog's language: the LLM's capability words are searched beside the
    # query (a query in another language has them among its matches already).
    reading = (
        None if foreign else capability_reading(rules, llm, capability_vocabularies, plausible)
    )
    if reading:
        origins["capability_reading"] = "llm"

    keywords = list(rules.keywords)
    if translation:
        keywords += [t for t in default_analyzer().terms(translation) if t not in keywords]
    llm_excluded = [
        t for t in (llm.excluded_tools if foreign else []) if t not in rules.excluded_tools
    ]
    excluded_agreed = foreign and bool(set(llm.excluded_tools) & set(rules.excluded_tools))
    if o := _origin(bool(rules.excluded_tools), bool(llm_excluded) or excluded_agreed):
        origins["excluded_tools"] = o
    merged = rules.model_copy(
        update={
            "primary_goal": goal,
            "reference_tool": reference.reference_tool,
            "reference_tool_name": reference.reference_tool_name,
            "reference_profile": reference.reference_profile,
            # only where the rules could not read the query ("Cursor vs Windsurf" with an LLM
            # exclusion of a named tool lost it)
            "excluded_tools": list(dict.fromkeys([*rules.excluded_tools, *llm_excluded])),
            "matches": matches,
            "constraints": constraints,
            "must_preserve_terms": list(
                dict.fromkeys(
                    [*rules.must_preserve_terms, *(llm.must_preserve_terms if foreign else [])]
                )
            ),
            "keywords": keywords,
            "semantic_variants": variants,
            "translation": translation,
            "capability_reading": reading,
            "confidence": max(rules.confidence, llm.confidence),
            "extractor": llm.extractor,  # the path info says it was merged with the rules
        }
    )
    return merged, origins, overruled


__all__ = [
    "FIELDS",
    "MAX_LLM_MATCHES",
    "PLAUSIBLE_CAPABILITIES",
    "already_in_catalog_language",
    "capability_reading",
    "merge_intents",
]
