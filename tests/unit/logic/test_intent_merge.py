"""The LLM's reading merged with the rules' (domain/intent_merge.py), on answers RECORDED from
the real local runtime (Qwen2.5-Coder GGUF through xllamacpp, benchmarks/llm/record_replies.py):
``tests/unit/data/llm_replies.jsonl`` holds each raw reply with the model file's sha256 and the
hashes of the system prompt and response schema it answered. None is hand-written; when the
prompt or schema changes, the recordings are stale and the first test says so.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from agentic_search.logic.intent_merge import (
    MAX_LLM_MATCHES,
    already_in_catalog_language,
    merge_intents,
    reads_as_english,
)
from agentic_search.logic.intent_rules import RuleBasedIntentExtractor
from agentic_search.logic.llm_answers import echoed_vocabulary, intent_from_output
from agentic_search.logic.llm_budget import LLMFallback
from agentic_search.logic.llm_prompts import (
    MAX_TEXT,
    intent_output_model,
    intent_prompt,
    strict_json_schema,
)
from agentic_search.wire import Filter, IntentState

ROOT = Path(__file__).resolve().parents[3]
REPLIES = [
    json.loads(line)
    for line in (ROOT / "tests/unit/data/llm_replies.jsonl").read_text().splitlines()
    if line.strip()
]
#: The sha256 values `make llm` pins (scripts/assemble_llm.py).
PINNED = set(re.findall(r'sha256="([0-9a-f]{64})"', (ROOT / "scripts/assemble_llm.py").read_text()))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_recordings_answer_todays_prompt_from_a_pinned_model(tools_schema) -> None:
    """Every recorded reply came from a model `make llm` pins and answered the prompt and
    schema the planner sends today (a changed prompt makes them stale: re-record)."""
    prompt = _sha(intent_prompt(tools_schema))
    schema = _sha(json.dumps(strict_json_schema(intent_output_model(tools_schema)), sort_keys=True))
    assert len(REPLIES) >= 5
    assert len(PINNED) == 2
    for row in REPLIES:
        assert row["model_sha256"] in PINNED, row["query"]
        assert row["prompt_sha256"] == prompt, f"stale recording: {row['query']}"
        assert row["schema_sha256"] == schema, f"stale recording: {row['query']}"


def _llm_intent(tools_schema, catalog_lookup, row) -> IntentState | None:
    out = intent_output_model(tools_schema).model_validate_json(row["reply"])
    try:
        return intent_from_output(
            tools_schema,
            row["query"],
            out.model_dump(),
            catalog_lookup,
            min_confidence=0.3,
            extractor=f"llm:{row['model']}",
        )
    except LLMFallback:
        return None


@pytest.mark.parametrize("row", REPLIES, ids=[f"{r['model']}:{r['query'][:30]}" for r in REPLIES])
def test_recorded_reply_parses_and_merge_keeps_every_rules_constraint(
    tools_schema, catalog_lookup, row
) -> None:
    """A recorded reply parses with the output model (the grammar held), and the merge never
    drops or loosens a constraint the rules found, never replaces the query or its keywords,
    and takes no vocabulary field the LLM flooded."""
    llm = _llm_intent(tools_schema, catalog_lookup, row)
    rules = RuleBasedIntentExtractor(tools_schema, catalog_lookup).extract(row["query"])
    if llm is None:  # an answer the schema checks refuse: the rules answer alone, as today
        return
    merged, fields, overruled = merge_intents(rules, llm)
    for c in rules.constraints:
        assert c in merged.constraints
    ruled = {c.field for c in rules.constraints}
    assert [c for c in merged.constraints if c.field in ruled] == list(rules.constraints)
    assert merged.query == row["query"] and merged.normalized_query == rules.normalized_query
    assert merged.keywords[: len(rules.keywords)] == rules.keywords
    for field, values in merged.matches.items():
        assert len(values) <= len(rules.matches.get(field, [])) + MAX_LLM_MATCHES
    assert set(fields.values()) <= {"rules", "llm", "both"}
    assert all(any(label.startswith(f) for f in ruled) for label in overruled), (
        "only fields the rules read can overrule"
    )


def test_non_english_recordings_add_a_translation_beside_the_query(
    tools_schema, catalog_lookup
) -> None:
    """For the recorded non-English queries the LLM's English rendering becomes the first
    semantic variant and the translation searched beside the original, with its words added
    to the keywords (the original's stay first)."""
    non_english = [r for r in REPLIES if re.search(r"[àáâãçéèêíóôõúüßä]", r["query"])]
    assert non_english
    translated = 0
    for row in non_english:
        llm = _llm_intent(tools_schema, catalog_lookup, row)
        if llm is None or not llm.semantic_variants:
            continue
        rules = RuleBasedIntentExtractor(tools_schema, catalog_lookup).extract(row["query"])
        merged, fields, _ = merge_intents(rules, llm)
        if merged.translation:
            translated += 1
            assert merged.semantic_variants[0] == merged.translation
            assert fields["translation"] == "llm"
            assert merged.query == row["query"]
    assert translated >= 1


def _state(**kw) -> IntentState:
    return IntentState(query="q", normalized_query="q", **kw)


def test_an_llm_constraint_that_loosens_a_rules_one_is_overruled() -> None:
    """Rules read "free" (pricing in [Free]); an LLM answering pricing in [Free, Paid] and
    deployment = Self-hosted keeps the rules' pricing (its own is overruled, and reported) and
    adds the deployment the rules left open."""
    free = Filter(field="pricing_model", operator="in", value=["Free"])
    loose = Filter(field="pricing_model", operator="in", value=["Free", "Paid"], origin="llm")
    hosted = Filter(field="deployment", operator="in", value=["Self-hosted"], origin="llm")
    merged, fields, overruled = merge_intents(
        _state(constraints=[free]), _state(constraints=[loose, hosted], extractor="llm:m")
    )
    assert merged.constraints == [free, hosted]
    assert overruled == [loose.label()]
    assert fields["constraints"] == "both"
    assert merged.extractor == "llm:m"


def test_matches_are_a_union_and_a_flooded_field_is_ignored() -> None:
    """On a query in another language the LLM's choice adds to the rules' matches (a field
    where it listed more values than MAX_LLM_MATCHES is not taken); on one in the catalog's
    language it adds none."""
    query = "Erklärvideo aus meinen Folien"
    rules = IntentState(
        query=query, normalized_query=query.lower(), matches={"categories": ["Video Generation"]}
    )
    flood = [f"v{i}" for i in range(MAX_LLM_MATCHES + 1)]
    llm = rules.model_copy(
        update={
            "matches": {"categories": ["Presentation"], "functionality": flood},
            "semantic_variants": ["explainer video from my slides"],
        }
    )
    merged, fields, _ = merge_intents(rules, llm)
    assert merged.matches == {"categories": ["Video Generation", "Presentation"]}
    assert fields["matches"] == "both"
    # The same reading of a query in the catalog's language adds no match: the rules read it.
    english = rules.model_copy(update={"query": "explainer video from my slides"})
    merged, fields, _ = merge_intents(english, llm)
    assert merged.matches == {"categories": ["Video Generation"]}
    assert fields["matches"] == "rules"


def test_an_llm_reference_the_query_does_not_name_is_not_taken() -> None:
    """Recorded 0.5B answers named a catalog tool as the reference of a task-phrased query
    that names none (held-out task-12, task-u5): only a named one is taken."""
    llm = IntentState(
        query="turn my slides into a video",
        normalized_query="turn my slides into a video",
        primary_goal="alternative-to",
        reference_tool="synthesia",
        reference_tool_name="Synthesia",
    )
    rules = llm.model_copy(update={"reference_tool": None, "reference_tool_name": None})
    rules = rules.model_copy(update={"primary_goal": "find"})
    merged, fields, _ = merge_intents(rules, llm)
    assert merged.reference_tool is None and merged.primary_goal == "find"
    assert "reference_tool" not in fields
    named = llm.model_copy(update={"query": "like Synthesia but free"})
    merged, fields, _ = merge_intents(rules.model_copy(update={"query": named.query}), named)
    assert merged.reference_tool == "synthesia" and fields["reference_tool"] == "llm"


def _raw(row) -> dict:
    return json.loads(row["reply"])


def test_a_confidence_just_over_one_does_not_refuse_the_reading(tools_schema) -> None:
    """The 1.5B answers ``"confidence": 1.0000000000000002e-0`` (llama.cpp's grammar does not
    bound numbers): read as 1.0, not an invalid answer that falls back to the rules (it was
    6 of the first 15 tuning-split answers on 2026-11-26)."""
    over = [r for r in REPLIES if _raw(r)["confidence"] > 1]
    assert over, "no recording with a confidence over 1"
    for row in over:
        assert intent_output_model(tools_schema).model_validate_json(row["reply"]).confidence == 1


def test_a_semantic_query_past_its_bound_is_clipped_not_refused(tools_schema) -> None:
    """For a pasted paragraph the 1.5B copies it into ``semantic_query``, past its 300
    characters (llama.cpp's grammar does not bound a string): the reading is kept with the text
    cut at a word boundary, not refused (all 5 fallbacks of the 67 held-out queries on
    2026-11-26). A recorded answer with only that field lengthened."""
    raw = _raw(REPLIES[0])
    words = (
        "we run a small clinic and need software that keeps patient notes offline " * 8
    ).split()
    raw["semantic_query"] = " ".join(words)
    assert len(raw["semantic_query"]) > MAX_TEXT
    out = intent_output_model(tools_schema).model_validate_json(json.dumps(raw))
    assert 0 < len(out.semantic_query) <= MAX_TEXT
    assert raw["semantic_query"].startswith(out.semantic_query)
    assert raw["semantic_query"][len(out.semantic_query)] == " "  # cut between two words
    # a text within the bound is left as it was
    short = {**raw, "semantic_query": "offline patient notes"}
    assert intent_output_model(tools_schema).model_validate(short).semantic_query == (
        "offline patient notes"
    )


def test_echoed_vocabulary_and_descriptive_phrases_are_not_taken(
    tools_schema, catalog_lookup
) -> None:
    """Recorded answers list a vocabulary's first three values in the prompt's order (pricing
    Free, Freemium, Paid; user types Developers, Data Scientists, Designers) and copy the
    query's descriptive phrases as must-preserve terms; neither is taken: no echoed field,
    and every kept term is quoted in the query or names a catalog record."""
    echoed = preserved = 0
    for row in REPLIES:
        raw = _raw(row)
        echoed += sum(
            echoed_vocabulary(tools_schema, k, list(dict.fromkeys(v)))
            for k, v in raw["matches"].items()
        )
        preserved += len(raw["must_preserve_terms"])
        llm = _llm_intent(tools_schema, catalog_lookup, row)
        if llm is None:
            continue
        for k, values in llm.matches.items():
            assert not echoed_vocabulary(tools_schema, k, values), (row["query"], k)
        for term in llm.must_preserve_terms:
            assert term.casefold() in catalog_lookup.names or f'"{term}"' in row["query"]
    assert echoed and preserved, "the recordings no longer show the failure this guards"


def test_a_paraphrase_of_an_english_query_is_not_taken_as_its_translation(
    tools_schema, catalog_lookup
) -> None:
    """The recorded 1.5B renders an English query as a paraphrase ("turn my slide deck into a
    narrated explainer video" -> "Convert slide deck into narrated explainer video"); put first
    among the semantic variants it replaced the query's own reading. Only a rendering that
    shares less than half the query's terms (a translation) is taken."""
    english = [
        r
        for r in REPLIES
        if r["model"].startswith("qwen2.5-coder-1.5b") and r["query"].startswith(("turn", "add"))
    ]
    paraphrased = 0
    for row in english:
        llm = _llm_intent(tools_schema, catalog_lookup, row)
        if llm is None or not llm.semantic_variants:  # the query itself: nothing to take
            continue
        paraphrased += 1
        rules = RuleBasedIntentExtractor(tools_schema, catalog_lookup).extract(row["query"])
        merged, fields, _ = merge_intents(rules, llm)
        assert merged.translation is None and "translation" not in fields
        assert merged.semantic_variants == rules.semantic_variants
    assert paraphrased
    assert not already_in_catalog_language(
        "Rechtschreibprüfung für Deutsch, selbst gehostet", "self-hosted German spell checker"
    )


def _recorded(query: str) -> dict:
    return next(r for r in REPLIES if r["query"] == query and "1.5b" in r["model"])


def test_an_english_need_is_never_replaced_by_a_paraphrase_sharing_few_of_its_words(
    tools_schema, catalog_lookup
) -> None:
    """The recorded 1.5B paraphrases an English need ("figure out which microservice is
    making our requests slow" -> "find the microservice causing slow requests", tuning
    task-07: nDCG@10 0.87 -> 0.57 when taken), sharing under half its terms. It is not a
    translation: the query holds English function words. Queries in Spanish, German, French
    or Portuguese hold none of them, or one inside a product term ("text to speech")."""
    row = _recorded("figure out which microservice is making our requests slow")
    llm = _llm_intent(tools_schema, catalog_lookup, row)
    assert llm is not None and llm.semantic_variants
    assert not already_in_catalog_language(row["query"], llm.semantic_variants[0])
    rules = RuleBasedIntentExtractor(tools_schema, catalog_lookup).extract(row["query"])
    merged, fields, _ = merge_intents(rules, llm)
    assert merged.translation is None and "translation" not in fields
    assert merged.semantic_variants == rules.semantic_variants
    assert merged.matches == rules.matches  # nor its vocabulary (Chat, Text Generation, ...)
    for foreign in (
        "herramienta gratuita para transcribir audio",
        "Dokumente ins Englische übersetzen und dabei die Formatierung behalten",
        "un outil de text to speech gratuit pour mes vidéos",
        "automatizar tarefas entre aplicativos sem programar",
    ):
        assert not reads_as_english(foreign), foreign
    assert reads_as_english("CI/CD pipelines I can run on my own servers")


def test_an_llm_reference_on_an_english_query_needs_a_reference_phrase(
    tools_schema, catalog_lookup
) -> None:
    """The recorded 1.5B makes Kubernetes the reference of "monitoring and alerting for
    Kubernetes clusters" (golden g42: nDCG@10 0.93 -> 0.14 searched as "like Kubernetes"): a
    tool named as the setting of a need is not a reference; after "like" it is."""
    row = _recorded("monitoring and alerting for Kubernetes clusters")
    llm = _llm_intent(tools_schema, catalog_lookup, row)
    assert llm is not None and llm.reference_tool == "kubernetes"
    rules = RuleBasedIntentExtractor(tools_schema, catalog_lookup).extract(row["query"])
    merged, fields, _ = merge_intents(rules, llm)
    assert merged.reference_tool is None and "reference_tool" not in fields
    assert merged.primary_goal == rules.primary_goal
    cued = "something like Kubernetes but lighter"
    rules = rules.model_copy(update={"query": cued, "normalized_query": cued})
    merged, fields, _ = merge_intents(rules, llm.model_copy(update={"query": cued}))
    assert merged.reference_tool == "kubernetes" and fields["reference_tool"] == "llm"


def test_a_comparison_the_rules_read_keeps_its_goal_and_takes_no_llm_reference() -> None:
    """ "Cursor vs Windsurf": an LLM reading "like Cursor" (reference Cursor, alternative-to)
    would search for tools like the first named one; the rules' comparison stands, and an
    LLM goal never replaces the rules' (a small model reads "explainer video" as explain)."""
    rules = IntentState(
        query="Cursor vs Windsurf", normalized_query="cursor vs windsurf", primary_goal="compare"
    )
    llm = rules.model_copy(
        update={
            "primary_goal": "alternative-to",
            "reference_tool": "cursor",
            "reference_tool_name": "Cursor",
        }
    )
    merged, fields, _ = merge_intents(rules, llm)
    assert merged.primary_goal == "compare" and merged.reference_tool is None
    assert "reference_tool" not in fields
    # nor an LLM exclusion of a named tool, on a query in the catalog's language
    excluding = llm.model_copy(update={"excluded_tools": ["windsurf"]})
    assert merge_intents(rules, excluding)[0].excluded_tools == []
    find = _state(primary_goal="find")
    merged, _, _ = merge_intents(find, _state(primary_goal="explain"))
    assert merged.primary_goal == "find"


def test_explain_says_where_the_exclusions_came_from() -> None:
    """``--explain`` prints a merged field's origin; the exclusions had none, so an LLM
    exclusion (one that emptied a comparison, "Cursor vs Windsurf") showed no LLM field."""
    rules = IntentState(
        query="hoja de cálculo con IA, no Excel",
        normalized_query="hoja de cálculo con ia, no excel",
        excluded_tools=["excel"],
    )
    llm = rules.model_copy(
        update={
            "excluded_tools": ["excel", "google-sheets"],
            "semantic_variants": ["AI spreadsheet, not Excel"],
        }
    )
    merged, fields, _ = merge_intents(rules, llm)
    assert merged.excluded_tools == ["excel", "google-sheets"]
    assert fields["excluded_tools"] == "both"
    only_llm = rules.model_copy(update={"excluded_tools": []})
    assert merge_intents(only_llm, llm)[1]["excluded_tools"] == "llm"
    assert merge_intents(rules, rules)[1]["excluded_tools"] == "rules"
    assert "excluded_tools" not in merge_intents(only_llm, only_llm)[1]
