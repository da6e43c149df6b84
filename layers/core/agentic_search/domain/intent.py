"""Intent extraction: natural-language query -> :class:`IntentState` in schema vocabularies.

The rule-based extractor here is the deterministic default (the LLM extractor sits behind the
same :class:`IntentExtractor` protocol). It finds, in order:

1. quoted phrases and catalog product names (must-preserve terms);
2. a reference tool ("like Cursor", "alternative to Copilot", "cheaper than Cursor") and the
   primary goal (find / compare / alternative-to / explain);
3. vocabulary values by canonical name or synonym, longest phrase first, whole words only;
4. hard constraints with negations: pricing ("free", "not paid", "open source"), deployment
   ("works locally", "self-hosted", "not cloud"), price ceilings ("under $20", "cheaper than
   Cursor"), operating systems ("for Linux"), and "not <vocabulary value>" exclusions;
5. a semantic variant (the query without its constraint phrases) and a confidence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from agentic_search.domain.schema import DomainSchema
from agentic_search.domain.text import default_analyzer
from agentic_search.state import Filter, IntentState

MAX_QUERY_CHARS = 1000


class IntentExtractor(Protocol):
    """Turns a query into an IntentState for a domain."""

    name: str

    def extract(self, query: str) -> IntentState:
        """Extract the intent of ``query``."""
        ...


@dataclass(frozen=True)
class CatalogLookup:
    """What the extractor may know of the catalog: names -> ids, and records by id."""

    names: Mapping[str, str]
    record: Callable[[str], dict[str, Any] | None]

    @staticmethod
    def empty() -> CatalogLookup:
        """A lookup that knows no tools."""
        return CatalogLookup(names={}, record=lambda _id: None)


_QUOTED = re.compile(r"\"([^\"]{2,100})\"|“([^”]{2,100})”")
_NEG = (
    r"(?:not|no|non|without|except|excluding|never|avoid|isn't|aren't|doesn't|don't|isnt|"
    r"arent|doesnt|dont)"
)
_REF_PATTERNS: list[tuple[str, str]] = [
    (r"\balternatives?\s+(?:to|for)\s+", "alternative-to"),
    (r"\breplacements?\s+(?:to|for)\s+", "alternative-to"),
    (r"\binstead\s+of\s+", "alternative-to"),
    (r"\bsimilar\s+to\s+", "alternative-to"),
    (r"\b(?:something|tools?|apps?|one)\s+like\s+", "alternative-to"),
    (r"\blike\s+", "alternative-to"),
    (r"\bcheaper\s+than\s+", "alternative-to"),
    (r"\bcompared?\s+(?:to|with)\s+", "compare"),
]
_PRICE = re.compile(
    r"(?P<op>under|below|less\s+than|cheaper\s+than|at\s+most|max(?:imum)?|up\s+to|<=?|"
    r"no\s+more\s+than)\s*"
    r"(?:\$\s*(?P<amount>\d+(?:\.\d+)?)(?!\w)|(?P<amount2>\d+(?:\.\d+)?)\s*"
    r"(?:\$|usd\b|dollars?\b|bucks\b|(?=\s*(?:/|a|per)\s*mo(?:nth)?\b)))"
    r"(?:\s*(?:/|a|per)\s*mo(?:nth)?\b)?",
)
_PRICE_OR_LESS = re.compile(r"\$\s*(?P<amount>\d+(?:\.\d+)?)\s*(?:/\s*mo(?:nth)?)?\s+or\s+less")
_MUST = re.compile(r"\b(?:must|only|strictly|required|has\s+to|have\s+to|needs?\s+to)\b")
_EXPLAIN = re.compile(r"^\s*(?:what\s+is|what\s+are|how\s+does|how\s+do|explain|why)\b")
_COMPARE = re.compile(r"\b(?:compare|comparison|difference\s+between|versus|vs\.?)\b")
_OS_VALUES = {"Windows", "macOS", "Linux", "iOS", "Android"}
_FREE = re.compile(r"(?<![\w-])(?:free|free\s+of\s+charge|no\s+cost|gratis|costs?\s+nothing)\b")
_NOT_PAID = re.compile(rf"\b{_NEG}[\s-]+(?:paid|commercial|subscription)\b")
_OPEN_SOURCE = re.compile(r"\b(?:open[\s-]?source|oss|foss)\b")
_NEG_BEFORE = re.compile(rf"\b{_NEG}[\s-]+(?:an?\s+|the\s+|be\s+)?$")
_NOT_CLOUD = re.compile(rf"\b{_NEG}[\s-]+(?:the\s+)?(?:cloud|saas|internet)(?:[\s-]+based)?\b")
_LOCAL = re.compile(
    r"\b(?:local(?:ly)?|offline|on[\s-]device|on\s+my\s+(?:machine|laptop|computer|pc)|"
    r"without\s+internet|air[\s-]?gapped)\b"
)
_SELF_HOSTED = re.compile(
    r"\b(?:self[\s-]?host(?:ed|able)?|on[\s-]?prem(?:ise|ises)?|own\s+(?:server|servers|"
    r"infrastructure|infra))\b"
)
_FILLER = re.compile(
    r"\b(?:tools?|apps?|software|that|which|works?|running|runs?|please|find|me|some|any|"
    r"i|need|want|looking|for|a|an|the|with|good|best|but|what|are|is|s|cheaper|alternatives?|"
    r"similar|top|other|options?|something|like|instead|replacements?)\b"
)


def normalize_query(query: str) -> str:
    """Lowercase, unify quotes and dashes, collapse whitespace."""
    q = query.replace("’", "'").replace("–", "-").replace("—", "-")
    return re.sub(r"\s+", " ", q.strip().lower())


def quoted_phrases(query: str) -> list[str]:
    """The phrases the query puts in straight or curly double quotes (2..100 characters)."""
    return [next(g for g in m.groups() if g) for m in _QUOTED.finditer(query)]


def reference_profile(schema: DomainSchema, record: Mapping[str, Any]) -> dict[str, list[str]]:
    """The reference tool's category and functionality values (query by example), by
    vocabulary name; empty vocabularies are left out."""
    profile: dict[str, list[str]] = {}
    for vocab in ("categories", "functionality"):
        fname = schema.vocabulary_fields.get(vocab)
        value = record.get(fname) if fname else None
        values = value if isinstance(value, list) else [value] if value else []
        if values:
            profile[vocab] = [str(v) for v in values]
    return profile


def _phrase_pattern(phrase: str, plural: bool = False) -> re.Pattern[str]:
    tail = r"(?:s|es)?" if plural else ""
    return re.compile(r"(?<![\w-])" + re.escape(phrase.lower()) + tail + r"(?![\w-])")


class RuleBasedIntentExtractor:
    """Deterministic extractor over a domain's vocabularies (see module docstring)."""

    name = "rules"

    def __init__(self, schema: DomainSchema, catalog: CatalogLookup | None = None) -> None:
        self.schema = schema
        self.catalog = catalog or CatalogLookup.empty()
        # (phrase, vocabulary, canonical), longest phrase first.
        entries: list[tuple[str, str, str]] = []
        for vocab, values in schema.vocabularies.items():
            for canonical, synonyms in values.items():
                for phrase in {canonical.lower(), *(s.lower() for s in synonyms)}:
                    entries.append((phrase, vocab, canonical))
        entries.sort(key=lambda e: (-len(e[0]), e[0]))
        self._vocab = [(_phrase_pattern(p, plural=True), v, c) for p, v, c in entries]
        names = sorted(self.catalog.names.items(), key=lambda kv: -len(kv[0]))
        self._names = [(_phrase_pattern(n), n, rid) for n, rid in names if len(n) >= 2]

    # ------------------------------------------------------------------------------------------

    def extract(self, query: str) -> IntentState:
        """Extract the intent of ``query`` (1..1000 characters).

        Raises:
            ValueError: on an empty or over-long query.
        """
        if not query or not query.strip():
            raise ValueError("query is empty")
        if len(query) > MAX_QUERY_CHARS:
            raise ValueError(f"query is over {MAX_QUERY_CHARS} characters")
        q = normalize_query(query)
        consumed = [False] * len(q)
        constraint_spans: list[tuple[int, int]] = []

        def take(span: tuple[int, int]) -> None:
            for i in range(*span):
                consumed[i] = True

        def free(span: tuple[int, int]) -> bool:
            return not any(consumed[span[0] : span[1]])

        must_preserve = quoted_phrases(query)

        # Product names (longest first), then the reference tool among them.
        products: list[tuple[int, int, str, str]] = []
        for pattern, name, rid in self._names:
            for m in pattern.finditer(q):
                if free(m.span()) and self._is_product_mention(query, q, m.start(), m.end()):
                    products.append((m.start(), m.end(), name, rid))
                    take(m.span())
        products.sort()
        reference: tuple[str, str] | None = None
        goal = "find"
        ref_phrase_span: tuple[int, int] | None = None
        for start, end, _name, rid in products:
            prefix = q[:start]
            for pat, kind in _REF_PATTERNS:
                m = re.search(pat + r"$", prefix)
                if m is not None:
                    reference = (rid, q[start:end])
                    goal = kind
                    ref_phrase_span = (m.start(), end)
                    break
            if reference:
                break
        if reference is None:
            for start, end, _name, rid in products:
                after = re.match(r"(?:'s)?\s*(?:alternatives?|replacements?)\b", q[end:])
                if after:
                    reference, goal = (rid, q[start:end]), "alternative-to"
                    ref_phrase_span = (start, end + len(after[0]))
                    break
        if ref_phrase_span:
            take(ref_phrase_span)
            constraint_spans.append(ref_phrase_span)
        excluded: list[str] = []
        for start, end, _name, rid in products:
            neg = _NEG_BEFORE.search(q[:start])
            if neg and (reference is None or rid != reference[0]):
                excluded.append(rid)
                constraint_spans.append((neg.start(), end))
        profile: dict[str, list[str]] = {}
        if reference:
            profile = reference_profile(self.schema, self.catalog.record(reference[0]) or {})
        for _, _, name, _ in products:
            original = re.search(re.escape(name), query, re.IGNORECASE)
            term = original.group(0) if original else name
            if term not in must_preserve:
                must_preserve.append(term)
        if goal == "find":
            if _EXPLAIN.search(q):
                goal = "explain"
            elif _COMPARE.search(q) and len(products) >= 2:
                goal = "compare"

        constraints: list[Filter] = []
        must = bool(_MUST.search(q))

        def add(field: str, op: str, value: Any, origin: str) -> None:
            if field not in self.schema.fields or op not in self.schema.fields[field].filter:
                return
            flt = Filter(field=field, operator=op, value=value, must=must, origin=origin)
            key = (field, op, repr(value))
            if all((f.field, f.operator, repr(f.value)) != key for f in constraints):
                constraints.append(flt)

        def negated(start: int) -> bool:
            return _NEG_BEFORE.search(q[:start]) is not None

        # Price ceilings.
        for m in list(_PRICE.finditer(q)) + list(_PRICE_OR_LESS.finditer(q)):
            amount = float(m.groupdict().get("amount") or m.groupdict().get("amount2"))
            op_text = m.groupdict().get("op") or "or less"
            op = "lte" if re.match(r"at most|max|up to|<=|no more|or less", op_text) else "lt"
            add("price_monthly_usd", op, amount, m.group(0).strip())
            take(m.span())
            constraint_spans.append(m.span())
        # Cheaper than the reference tool.
        if reference and re.search(r"\bcheaper\b|\bless\s+expensive\b", q):
            rec = self.catalog.record(reference[0]) or {}
            price = rec.get("price_monthly_usd")
            if isinstance(price, int | float) and price > 0:
                add("price_monthly_usd", "lt", float(price), f"cheaper than {reference[1]}")
        elif re.search(r"\b(?:cheap|cheaper|affordable|inexpensive|budget)\b", q):
            pass  # soft: no reference price to compare against

        # Pricing.
        if m := _NOT_PAID.search(q):
            add("pricing_model", "nin", ["Paid"], m.group(0))
            take(m.span())
            constraint_spans.append(m.span())
        if m := _OPEN_SOURCE.search(q):
            neg = _NEG_BEFORE.search(q[: m.start()])
            add("open_source", "eq", not neg, q[neg.start() if neg else m.start() : m.end()])
            take((neg.start() if neg else m.start(), m.end()))
            constraint_spans.append((neg.start() if neg else m.start(), m.end()))
        for m in _FREE.finditer(q):
            if free(m.span()) and not re.search(r"free\s+(?:tier|trial|plan)", q[m.start() :]):
                add("pricing_model", "in", ["Free", "Freemium", "Open Source"], m.group(0))
                take(m.span())
                constraint_spans.append(m.span())

        # Deployment.
        if m := _NOT_CLOUD.search(q):
            add("deployment", "in", ["Local", "Self-hosted"], m.group(0))
            take(m.span())
            constraint_spans.append(m.span())
        for pattern, value in ((_SELF_HOSTED, "Self-hosted"), (_LOCAL, "Local")):
            for m in pattern.finditer(q):
                if free(m.span()):
                    neg = _NEG_BEFORE.search(q[: m.start()])
                    span = (neg.start() if neg else m.start(), m.end())
                    add("deployment", "nin" if neg else "in", [value], q[span[0] : span[1]])
                    take(span)
                    constraint_spans.append(span)

        # Vocabulary values (soft matches), and "not <value>" exclusions (hard).
        vocab_field = self.schema.vocabulary_fields
        found: dict[str, list[str]] = {}
        vocab_spans: set[tuple[int, int]] = set()
        for pattern, vocab, canonical in self._vocab:
            for m in pattern.finditer(q):
                # The same phrase may name values of several vocabularies ("tts" is a category
                # synonym and a functionality synonym): an identical span may match again.
                if not free(m.span()) and m.span() not in vocab_spans:
                    continue
                take(m.span())
                vocab_spans.add(m.span())
                neg = re.search(rf"\b{_NEG}[\s-]+(?:an?\s+|the\s+)?$", q[: m.start()])
                field = vocab_field.get(vocab)
                if neg and field:
                    add(field, "nin", [canonical], q[neg.start() : m.end()])
                    constraint_spans.append((neg.start(), m.end()))
                    continue
                if vocab == "platforms" and canonical in _OS_VALUES and field:
                    add(field, "in", [canonical], m.group(0))
                    constraint_spans.append(m.span())
                if vocab in ("deployment", "pricing_models"):
                    continue  # handled as hard constraints above when stated
                bucket = found.setdefault(vocab, [])
                if canonical not in bucket:
                    bucket.append(canonical)

        analyzer = default_analyzer()
        keywords = list(dict.fromkeys(analyzer.terms(q)))
        variant = self._variant(q, constraint_spans)
        confidence = 0.35
        confidence += 0.15 * min(3, len(found))
        confidence += 0.1 if reference else 0.0
        confidence += 0.05 * min(2, len(constraints))
        if not found and not reference and not constraints:
            confidence = 0.3 if keywords else 0.1
        return IntentState(
            query=query,
            normalized_query=q,
            primary_goal=goal,  # type: ignore[arg-type]
            reference_tool=reference[0] if reference else None,
            reference_tool_name=reference[1] if reference else None,
            reference_profile=profile,
            excluded_tools=excluded,
            matches=found,
            constraints=constraints,
            must_preserve_terms=must_preserve,
            must_match_exactly=bool(_QUOTED.search(query)),
            keywords=keywords,
            semantic_variants=[variant] if variant and variant != q else [],
            confidence=round(min(0.95, confidence), 2),
            extractor=self.name,
        )

    @staticmethod
    def _is_product_mention(query: str, q: str, start: int, end: int) -> bool:
        """Whether a catalog name found at ``q[start:end]`` names the product, not a common word.

        Multi-word or non-alphabetic names always count; a plain word ("continue", "make",
        "void") counts when written with a capital letter or right after a reference phrase
        ("alternative to cursor").
        """
        name = q[start:end]
        if " " in name or not name.isalpha():
            return True
        original = re.search(re.escape(name), query, re.IGNORECASE)
        if original is not None and any(ch.isupper() for ch in original.group(0)):
            return True
        prefix = q[:start]
        return (
            any(re.search(pat + r"$", prefix) for pat, _ in _REF_PATTERNS)
            or bool(re.match(r"(?:'s)?\s*(?:alternatives?|replacements?|vs\b|versus\b)", q[end:]))
            or bool(re.search(r"\b(?:vs\.?|versus|and|or)\s+$", prefix))
        )

    @staticmethod
    def _variant(q: str, spans: list[tuple[int, int]]) -> str:
        """The query with constraint phrases and filler words removed (for dense retrieval)."""
        keep = [True] * len(q)
        for s, e in spans:
            for i in range(s, e):
                keep[i] = False
        text = "".join(ch if keep[i] else " " for i, ch in enumerate(q))
        text = _FILLER.sub(" ", text)
        text = re.sub(r"[^\w\s+#./-]", " ", text)
        return re.sub(r"\s+", " ", text).strip()
