"""Merge of the LLM's reading of a query with the rules' reading (LLM_PROVIDER=local/openai).

The rules are exact where they fire and blind elsewhere; a small LLM reads what the rules
cannot (another language, a need phrased as a task, a tool named in passing) but may also
invent or loosen a constraint. So the merged intent:

* keeps **every hard constraint the rules found** (price, deployment, platform, licence,
  date: any schema filter); an LLM constraint on a field the rules already constrained is
  dropped and reported as *overruled* when it differs; an LLM constraint on a field the rules
  left open is added;
* adds the LLM's vocabulary matches to the rules' only for a query not in the catalog's
  language (:func:`already_in_catalog_language`, :func:`reads_as_english`; a field where it
  listed more than :data:`MAX_LLM_MATCHES` values is ignored), its exclusions and
  must-preserve terms, and its reference tool when the rules found none and the query names
  it (on a query in the catalog's language, after a reference phrase: "like X");
* puts the LLM's rewrite (the catalog-language rendering of a non-English query) first among
  the semantic variants and keeps it as ``translation`` beside the original query for keyword
  search, unless it is a paraphrase of a query already in the catalog's language
  (:func:`already_in_catalog_language`); the original query and its keywords are never
  replaced;
* keeps the rules' goal, and takes no LLM reference tool on a comparison the rules read.

:func:`merge_intents` also says, per field, whether the value came from the rules, the LLM
or both (``--explain`` prints it).
"""

from __future__ import annotations

import re

from agentic_search.logic.entities import tokens
from agentic_search.logic.intent_patterns import REF_PATTERNS
from agentic_search.logic.llm_prompts import MAX_MATCHES
from agentic_search.logic.text import default_analyzer
from agentic_search.wire import Filter, IntentState

#: An LLM that picks more values than this for one vocabulary field has not chosen (small
#: models list the whole vocabulary): that field's LLM matches are ignored.
MAX_LLM_MATCHES = MAX_MATCHES

#: The per-field origins reported by :func:`merge_intents`.
FIELDS = (
    "constraints",
    "matches",
    "reference_tool",
    "semantic_variants",
    "translation",
    "excluded_tools",
)


def _origin(rules: bool, llm: bool) -> str | None:
    if rules and llm:
        return "both"
    return "rules" if rules else ("llm" if llm else None)


def _same(a: Filter, b: Filter) -> bool:
    va = sorted(map(str, a.value)) if isinstance(a.value, list) else a.value
    vb = sorted(map(str, b.value)) if isinstance(b.value, list) else b.value
    return a.field == b.field and a.operator == b.operator and va == vb


#: English function words no Spanish, German, French or Portuguese sentence uses ("a", "in",
#: "die", "on", "so", "was", "will" are words there too, and are left out).
ENGLISH_MARKERS = frozenset(
    (  # noqa: SIM905 (a word list reads best as words)
        "the of and with my our your their its is are what which that this these those for "
        "from without into how who i we you they it can need want"
    ).split()
)


#: A phrase that makes a named tool the query's reference ("like X", "alternative to X",
#: "cheaper than X": the rules' own reference phrases).
_REFERENCE_CUE = re.compile("|".join(p for p, goal in REF_PATTERNS if goal == "alternative-to"))


def reads_as_english(query: str) -> bool:
    """Whether ``query`` holds at least two distinct :data:`ENGLISH_MARKERS` (one may be a
    product term's, "text to speech"): a need phrased in English ("figure out which
    microservice is making our requests slow") that an LLM's paraphrase
    ("find the microservice causing slow requests") must not replace as a translation."""
    return len({t.folded for t in tokens(query)} & ENGLISH_MARKERS) >= 2


def already_in_catalog_language(query: str, rendering: str) -> bool:
    """Whether the LLM's ``rendering`` of ``query`` shares at least half of the query's
    (stemmed English) terms: the query was in the catalog's language already and the rendering
    is a paraphrase, not a translation. A paraphrase put first among the semantic variants
    replaced the query's own reading ("free alternative to Cursor" searched as "find free
    alternative to Cursor", "run LLMs locally on my laptop" as "explain how to run LLMs
    locally"); a translation shares next to none ("Rechtschreibprüfung für Deutsch, selbst
    gehostet" -> "self-hosted German spell checker")."""
    analyzer = default_analyzer()
    terms = set(analyzer.terms(query))
    if not terms:
        return False
    shared = terms & set(analyzer.terms(rendering))
    return 2 * len(shared) >= len(terms)


def merge_intents(
    rules: IntentState, llm: IntentState
) -> tuple[IntentState, dict[str, str], list[str]]:
    """The merged intent, the origin of each field (``rules``, ``llm`` or ``both``; fields
    neither set are absent) and the labels of LLM constraints the rules overruled.

    ``rules`` and ``llm`` read the same query. Pure; raises nothing.
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
    # search off the rules' exact reading (golden comparison and capability queries lost
    # nDCG@10 with a 1.5B model: docs/benchmarks.md).
    llm_variant = llm.semantic_variants[0] if llm.semantic_variants else None
    foreign = (
        bool(llm_variant)
        and not reads_as_english(rules.query)
        and not already_in_catalog_language(rules.query, llm_variant or "")
    )
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
    # the second named tool (golden comparisons lost nDCG@10 with the 1.5B: docs/benchmarks.md).
    # On a query in the catalog's language, only after a reference phrase: the rules read
    # every phrase they know, and a tool named as the setting ("monitoring and alerting for
    # Kubernetes clusters") searched as "like Kubernetes" lost the monitoring tools.
    named = (
        bool(llm.reference_tool_name)
        and llm.reference_tool_name.casefold() in rules.query.casefold()  # type: ignore[union-attr]
        and rules.primary_goal != "compare"
        and (foreign or _REFERENCE_CUE.search(rules.query.casefold()) is not None)
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

    # only where the rules could not read the query ("Cursor vs Windsurf" with an LLM
    # exclusion of a named tool lost it)
    llm_excluded = [
        t for t in (llm.excluded_tools if foreign else []) if t not in rules.excluded_tools
    ]
    agreed = foreign and bool(set(llm.excluded_tools) & set(rules.excluded_tools))
    if o := _origin(bool(rules.excluded_tools), bool(llm_excluded) or agreed):
        origins["excluded_tools"] = o

    keywords = list(rules.keywords)
    if translation:
        keywords += [t for t in default_analyzer().terms(translation) if t not in keywords]
    merged = rules.model_copy(
        update={
            "primary_goal": goal,
            "reference_tool": reference.reference_tool,
            "reference_tool_name": reference.reference_tool_name,
            "reference_profile": reference.reference_profile,
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
            "confidence": max(rules.confidence, llm.confidence),
            "extractor": llm.extractor,  # the path info says it was merged with the rules
        }
    )
    return merged, origins, overruled


__all__ = ["FIELDS", "MAX_LLM_MATCHES", "already_in_catalog_language", "merge_intents"]
