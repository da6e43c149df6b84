"""The rule-based intent extractor: a query read step by step over the schema's vocabularies
and the catalog's names (the order is :mod:`agentic_search.logic.intent`'s docstring)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from datetime import date
from typing import Any

from agentic_search.logic import intent_patterns as P
from agentic_search.logic.capabilities import CapabilityMatcher
from agentic_search.logic.function_words import GOAL_WORDS, QUESTION_WORDS
from agentic_search.logic.intent import (
    CatalogLookup,
    normalize_query,
    quoted_phrases,
    reference_profile,
)
from agentic_search.logic.intent_patterns import QUOTED, phrase_pattern
from agentic_search.logic.linking import apply_corrections
from agentic_search.logic.schema import DomainSchema
from agentic_search.logic.temporal import year_ranges
from agentic_search.logic.text import default_analyzer
from agentic_search.wire import QUERY_MAX_CHARS, Filter, IntentState, VocabularyMatch


class RuleBasedIntentExtractor:
    """Deterministic extractor over a domain's vocabularies (see the module docstring)."""

    name = "rules"

    def __init__(
        self,
        schema: DomainSchema,
        catalog: CatalogLookup | None = None,
        today: Callable[[], date] = date.today,
        capabilities: CapabilityMatcher | None = None,
    ) -> None:
        self.schema = schema
        self.capabilities = capabilities
        self.catalog = catalog or CatalogLookup.empty()
        self.today = today
        # (phrase, vocabulary, canonical), longest phrase first.
        entries: list[tuple[str, str, str]] = []
        for vocab, values in schema.vocabularies.items():
            for canonical, synonyms in values.items():
                for phrase in {canonical.lower(), *(s.lower() for s in synonyms)}:
                    entries.append((phrase, vocab, canonical))
        entries.sort(key=lambda e: (-len(e[0]), e[0]))
        #: (lowercased phrase, vocabulary, canonical); the phrase's pattern is compiled when a
        #: query first contains it (:meth:`pattern`): compiling all ~650 up front cost every
        #: process tens of milliseconds for the handful a query holds
        self.vocab = entries
        self._patterns: dict[tuple[str, bool], re.Pattern[str]] = {}
        #: vocabularies whose values are read as hard constraints (pricing, deployment)
        self.constraint_vocabularies = schema.constraint_vocabularies
        #: vocabulary -> the values that are hard filters when named (operating systems)
        self.hard_values = {
            v: frozenset(values) for v, values in schema.constraint_fields.hard_values.items()
        }
        names = sorted(self.catalog.names.items(), key=lambda kv: -len(kv[0]))
        #: (name, lowercased name, record id), longest first; patterns as for :attr:`vocab`
        self.names = [(n, n.lower(), rid) for n, rid in names if len(n) >= 2]

    def pattern(self, phrase: str, plural: bool = False) -> re.Pattern[str]:
        """:func:`~agentic_search.logic.intent_patterns.phrase_pattern` of a lowercased
        ``phrase``, compiled once per extractor. A caller asks only for a phrase the
        normalized query contains as a substring: the pattern matches the phrase literally,
        so a query without it has no match and needs no pattern."""
        key = (phrase, plural)
        pattern = self._patterns.get(key)
        if pattern is None:
            pattern = self._patterns.setdefault(key, phrase_pattern(phrase, plural=plural))
        return pattern

    def extract(self, query: str) -> IntentState:
        """Extract the intent of ``query`` (1..``QUERY_MAX_CHARS`` characters), in the order of
        the module docstring.

        Raises:
            ValueError: on an empty or over-long query.
        """
        if not query or not query.strip():
            raise ValueError("query is empty")
        if len(query) > QUERY_MAX_CHARS:
            raise ValueError(f"query is over {QUERY_MAX_CHARS} characters")
        reading = _Reading(self, query)
        reading.products_and_reference()
        reading.price_ceilings()
        reading.temporal()
        reading.pricing()
        reading.deployment()
        reading.vocabulary()
        reading.meaning()
        return reading.intent()


class _Reading:
    """One query being read: the normalized text, which characters a phrase already took, and
    what was found so far (the state the steps of :meth:`RuleBasedIntentExtractor.extract`
    share)."""

    def __init__(self, extractor: RuleBasedIntentExtractor, query: str) -> None:
        self.x = extractor
        self.roles = extractor.schema.constraint_fields
        self.query = query
        linker = extractor.catalog.linker
        self.linking = linker.link(query) if linker is not None else None
        corrected = apply_corrections(query, self.linking.corrections) if self.linking else query
        self.q = normalize_query(corrected)
        self.consumed = [False] * len(self.q)
        self.constraint_spans: list[tuple[int, int]] = []
        # the phrases that say what is NOT wanted ("not Terraform", "not paid"): hard filters,
        # and left out of the text the dense sources embed (an embedding has no negation)
        self.negation_spans: list[tuple[int, int]] = []
        self.must_preserve = quoted_phrases(query)
        self.products: list[tuple[int, int, str, str]] = []
        self.reference: tuple[str, str] | None = None
        self.goal = "find"
        self.excluded: list[str] = []
        self.profile: dict[str, list[str]] = {}
        self.constraints: list[Filter] = []
        self.must = bool(P.MUST.search(self.q))
        self.found: dict[str, list[str]] = {}
        self.by_meaning: list[VocabularyMatch] = []

    def take(self, span: tuple[int, int]) -> None:
        for i in range(*span):
            self.consumed[i] = True

    def free(self, span: tuple[int, int]) -> bool:
        return not any(self.consumed[span[0] : span[1]])

    def add(self, field: str, op: str, value: Any, origin: str) -> None:
        """A hard constraint, when the schema allows ``op`` on ``field``; duplicates once."""
        if op not in getattr(self.x.schema.fields.get(field), "filter", ()):
            return
        flt = Filter(field=field, operator=op, value=value, must=self.must, origin=origin)
        key = (field, op, repr(value))
        if all((f.field, f.operator, repr(f.value)) != key for f in self.constraints):
            self.constraints.append(flt)

    def constraint(self, span: tuple[int, int]) -> None:
        """``span`` stated a constraint: taken, and left out of the semantic variant."""
        self.take(span)
        self.constraint_spans.append(span)

    def linked_products(self) -> None:
        """The records the linker found (exact or fuzzy), located in the normalized query."""
        assert self.linking is not None
        q = self.q
        for link in self.linking.entities:
            surface = normalize_query(link.surface)
            for m in re.finditer(re.escape(surface), q):
                span = m.span()
                same = any((p[0], p[1]) == span for p in self.products)
                if self.free(span) or same:
                    self.products.append((span[0], span[1], link.name.lower(), link.id))
                    self.take(span)
                    break

    def products_and_reference(self) -> None:
        """Product names (longest first), the reference tool among them and the goal, the
        excluded tools ("not Terraform"); every product name is a must-preserve term."""
        q, query = self.q, self.query
        if self.linking is not None:
            self.linked_products()
        else:
            for name, lowered, rid in self.x.names:
                if lowered not in q:  # (the pattern is the name, literally)
                    continue
                for m in self.x.pattern(lowered).finditer(q):
                    if self.free(m.span()) and P.is_product_mention(query, q, m.start(), m.end()):
                        self.products.append((m.start(), m.end(), name, rid))
                        self.take(m.span())
        self.products.sort()
        ref_phrase_span: tuple[int, int] | None = None
        for start, end, _name, rid in self.products:
            prefix = q[:start]
            for pat, kind in P.REF_PATTERNS:
                m = re.search(pat + r"$", prefix)
                if m is not None:
                    self.reference = (rid, q[start:end])
                    self.goal = kind
                    ref_phrase_span = (m.start(), end)
                    break
            if self.reference:
                break
        if self.reference is None:
            for start, end, _name, rid in self.products:
                after = re.match(r"(?:'s)?\s*(?:alternatives?|replacements?)\b", q[end:])
                if after:
                    self.reference, self.goal = (rid, q[start:end]), "alternative-to"
                    ref_phrase_span = (start, end + len(after[0]))
                    break
        if ref_phrase_span:
            self.constraint(ref_phrase_span)
        for start, end, _name, rid in self.products:
            neg = P.NEG_BEFORE.search(q[:start])
            if neg and (self.reference is None or rid != self.reference[0]):
                self.excluded.append(rid)
                self.constraint_spans.append((neg.start(), end))
                self.negation_spans.append((neg.start(), end))
        if self.reference:
            record = self.x.catalog.record(self.reference[0]) or {}
            self.profile = reference_profile(self.x.schema, record)
        for start, end, name, _ in self.products:
            original = re.search(re.escape(q[start:end]), query, re.IGNORECASE)
            term = original.group(0) if original else name
            if term not in self.must_preserve and self.preserve(start, end):
                self.must_preserve.append(term)
        # distinct names, not records: one name of two records ("The Hard Easy") compares nothing
        named = {(start, end) for start, end, *_ in self.products}
        if self.goal == "find":
            if (P.COMPARE.search(q) and len(named) >= 2) or (
                len(named) >= 2 and (P.COMPARE_CUE.search(q) or self.listed_together(named))
            ):
                self.goal = "compare"
            elif P.EXPLAIN.search(q):
                self.goal = "explain"

    def listed_together(self, named: set[tuple[int, int]]) -> bool:
        """Whether two named records are listed side by side with no cue word ("Cursor and
        Windsurf pricing", "Supabase, Firebase"): the user asks about those records, so they
        are compared (and pinned) rather than read as words of a search."""
        spans = sorted(named)
        return any(
            P.LISTED_WITH.fullmatch(self.q[a[1] : b[0]]) for a, b in itertools.pairwise(spans)
        )

    def preserve(self, start: int, end: int) -> bool:
        """Whether a product mention is kept verbatim for BM25: exact links are; a fuzzy one
        (a typo) is not, its record's name is asked instead (the reading's intent asks for it)."""
        if self.linking is None:
            return True
        span = self.q[start:end]
        return not any(
            lk.method == "fuzzy" and normalize_query(lk.surface) == span
            for lk in self.linking.entities
        )

    def price_ceilings(self) -> None:
        """ "under $20", "$15 or less", and "cheaper than <reference tool>" (its price)."""
        q, field = self.q, self.roles.price
        if field is None:
            return
        for m in list(P.PRICE.finditer(q)) + list(P.PRICE_OR_LESS.finditer(q)):
            amount = float(m.groupdict().get("amount") or m.groupdict().get("amount2"))
            op_text = m.groupdict().get("op") or "or less"
            op = "lte" if re.match(r"at most|max|up to|<=|no more|or less", op_text) else "lt"
            self.add(field, op, amount, m.group(0).strip())
            self.constraint(m.span())
        if self.reference and re.search(r"\bcheaper\b|\bless\s+expensive\b", q):
            rec = self.x.catalog.record(self.reference[0]) or {}
            price = rec.get(field)
            if isinstance(price, int | float) and price > 0:
                self.add(field, "lt", float(price), f"cheaper than {self.reference[1]}")
        # "cheap" / "affordable" alone stay soft: no reference price to compare against

    def temporal(self) -> None:
        """ "since 2023", "released in 2024", "in the last 6 months", "before 2020": range
        filters on the schema's date field (:mod:`agentic_search.logic.temporal`)."""
        spec = self.x.schema.temporal
        if spec is None or not self.x.catalog.dated:
            return
        for rng in year_ranges(self.q, self.x.today(), (spec.label,)):
            if not self.free(rng.span):
                continue
            origin = rng.phrase + self.x.catalog.dated_note(spec.label)
            if rng.start is not None:
                self.add(spec.field, "gte", float(rng.start), origin)
            if rng.end is not None:
                self.add(spec.field, "lt", float(rng.end), origin)
            self.constraint(rng.span)

    def pricing(self) -> None:
        """ "not paid", "open source" (or not), "free" (but not "free tier/trial/plan")."""
        q, roles = self.q, self.roles
        if roles.pricing and roles.paid_values and (m := P.NOT_PAID.search(q)):
            self.add(roles.pricing, "nin", list(roles.paid_values), m.group(0))
            self.constraint(m.span())
            self.negation_spans.append(m.span())
        if roles.open_source and (m := P.OPEN_SOURCE.search(q)):
            neg = P.NEG_BEFORE.search(q[: m.start()])
            start = neg.start() if neg else m.start()
            self.add(roles.open_source, "eq", not neg, q[start : m.end()])
            self.constraint((start, m.end()))
            if neg:
                self.negation_spans.append((start, m.end()))
        if not (roles.pricing and roles.free_values):
            return
        for m in P.FREE.finditer(q):
            if self.free(m.span()) and not re.search(r"free\s+(?:tier|trial|plan)", q[m.start() :]):
                self.add(roles.pricing, "in", list(roles.free_values), m.group(0))
                self.constraint(m.span())

    def deployment(self) -> None:
        """ "not cloud", "self-hosted", "works locally" (and their negations)."""
        q, roles = self.q, self.roles
        field = roles.deployment
        if field is None:
            return
        local, hosted = list(roles.local_values), list(roles.self_hosted_values)
        if (local or hosted) and (m := P.NOT_CLOUD.search(q)):
            self.add(field, "in", local + hosted, m.group(0))
            self.constraint(m.span())
            self.negation_spans.append(m.span())
        for pattern, values in ((P.SELF_HOSTED, hosted), (P.LOCAL, local)):
            if not values:
                continue
            for m in pattern.finditer(q):
                if self.free(m.span()):
                    neg = P.NEG_BEFORE.search(q[: m.start()])
                    span = (neg.start() if neg else m.start(), m.end())
                    self.add(field, "nin" if neg else "in", values, q[span[0] : span[1]])
                    self.constraint(span)
                    if neg:
                        self.negation_spans.append(span)

    def vocabulary(self) -> None:
        """Vocabulary values (soft matches), operating systems (hard), and "not <value>"
        exclusions (hard)."""
        q = self.q
        vocab_field = self.x.schema.vocabulary_fields
        vocab_spans: set[tuple[int, int]] = set()
        for phrase, vocab, canonical in self.x.vocab:
            if phrase not in q:  # (the pattern is the phrase, literally)
                continue
            for m in self.x.pattern(phrase, plural=True).finditer(q):
                # The same phrase may name values of several vocabularies ("tts" is a category
                # synonym and a functionality synonym): an identical span may match again.
                if not self.free(m.span()) and m.span() not in vocab_spans:
                    continue
                self.take(m.span())
                vocab_spans.add(m.span())
                neg = re.search(rf"\b{P.NEG}[\s-]+(?:an?\s+|the\s+)?$", q[: m.start()])
                field = vocab_field.get(vocab)
                if neg and field:
                    self.add(field, "nin", [canonical], q[neg.start() : m.end()])
                    self.constraint_spans.append((neg.start(), m.end()))
                    self.negation_spans.append((neg.start(), m.end()))
                    continue
                if canonical in self.x.hard_values.get(vocab, ()) and field:
                    self.add(field, "in", [canonical], m.group(0))
                    self.constraint_spans.append(m.span())
                if vocab in self.x.constraint_vocabularies:
                    continue  # handled as hard constraints above when stated
                bucket = self.found.setdefault(vocab, [])
                if canonical not in bucket:
                    bucket.append(canonical)

    def meaning(self) -> None:
        """A need named as a job, not a category ("make a short explainer video from my
        slides"): when no word of the query matched a capability vocabulary, its text (less
        the constraint phrases) is matched to the entries by meaning
        (:class:`~agentic_search.logic.capabilities.CapabilityMatcher`)."""
        matcher, spec = self.x.capabilities, self.x.schema.capabilities
        if matcher is None or spec is None or any(v in self.found for v in spec.vocabularies):
            return
        text = P.semantic_variant(self.q, self.constraint_spans) or self.q
        try:
            found = matcher.match(text)
        except (ImportError, RuntimeError, KeyError):
            # no embedder here (a function without the model, a failed model): rules alone
            return
        for m in found:
            bucket = self.found.setdefault(m.vocabulary, [])
            if m.value not in bucket:
                bucket.append(m.value)
                self.by_meaning.append(m)

    def intent(self) -> IntentState:
        """The IntentState: keywords, the semantic variant and a confidence from what was
        found, by the schema's ``tuning.intent``
        (:class:`~agentic_search.logic.tuning.IntentTuning`): a base, a share per vocabulary
        matched and per constraint, each up to a count, one for a reference tool, at most a
        cap; a confidence of its own when nothing was recognised, with content words or
        without."""
        q, reference = self.q, self.reference
        keywords = content_keywords(q, self.constraint_spans)
        variant = P.semantic_variant(q, self.constraint_spans)
        tuning = self.x.schema.tuning.intent
        confidence = tuning.base
        confidence += tuning.per_vocabulary * min(tuning.vocabularies_counted, len(self.found))
        confidence += tuning.reference if reference else 0.0
        confidence += tuning.per_constraint * min(tuning.constraints_counted, len(self.constraints))
        if not self.found and not reference and not self.constraints:
            confidence = tuning.keywords_only if keywords else tuning.nothing
        linked = self.linking.links if self.linking is not None else []
        fuzzy_names = [lk.name for lk in linked if lk.kind == "entity" and lk.method == "fuzzy"]
        for name in fuzzy_names:  # "copilt" is asked as "GitHub Copilot"
            if name not in self.must_preserve:
                self.must_preserve.append(name)
        return IntentState(
            query=self.query,
            normalized_query=q,
            primary_goal=self.goal,  # type: ignore[arg-type]
            reference_tool=reference[0] if reference else None,
            reference_tool_name=reference[1] if reference else None,
            reference_profile=self.profile,
            excluded_tools=self.excluded,
            negations=[q[s:e] for s, e in sorted(set(self.negation_spans))],
            matches=self.found,
            constraints=self.constraints,
            must_preserve_terms=self.must_preserve,
            must_match_exactly=bool(QUOTED.search(self.query)),
            keywords=keywords,
            by_meaning=self.by_meaning,
            semantic_variants=[variant] if variant and variant != q else [],
            confidence=round(min(tuning.cap, confidence), 2),
            extractor=self.x.name,
            entities=[lk for lk in linked if lk.kind != "entity" or lk.id in self._named()],
        )

    def _named(self) -> set[str]:
        return {rid for *_, rid in self.products}


#: Words that shape a query but name nothing a record should contain: question and function
#: words, goal words, and the comparison cue "vs" (stems, as the analyzer writes them).
_FILLER_WORDS = [*QUESTION_WORDS, *GOAL_WORDS, "vs", "v", "versus", "under", "over"]


def content_keywords(q: str, spans: list[tuple[int, int]]) -> list[str]:
    """The analyzer terms of the normalized query ``q`` that carry its meaning: the text of
    ``spans`` (constraint phrases: "under $20", "not an IDE") is left out, and so are
    :data:`_FILLER_WORDS`; in query order, each term once. Falls back to every term when
    nothing else is left ("how can I?")."""
    analyzer = default_analyzer()
    kept = list(q)
    for start, end in spans:
        kept[start:end] = " " * (end - start)
    filler = set(analyzer.terms(" ".join(_FILLER_WORDS)))
    terms = [t for t in analyzer.terms("".join(kept)) if t not in filler]
    return list(dict.fromkeys(terms or analyzer.terms(q)))
