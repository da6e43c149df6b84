"""The phrases the rule-based intent extractor recognises, as regular expressions: negations,
reference-tool phrases, price ceilings, pricing, deployment, goals, filler words."""

from __future__ import annotations

import re

QUOTED = re.compile(r"\"([^\"]{2,100})\"|“([^”]{2,100})”")
NEG = (
    r"(?:not|no|non|without|except|excluding|never|avoid|isn't|aren't|doesn't|don't|isnt|"
    r"arent|doesnt|dont)"
)
REF_PATTERNS: list[tuple[str, str]] = [
    (r"\balternatives?\s+(?:to|for)\s+", "alternative-to"),
    (r"\breplacements?\s+(?:to|for)\s+", "alternative-to"),
    (r"\binstead\s+of\s+", "alternative-to"),
    (r"\bsimilar\s+to\s+", "alternative-to"),
    (r"\b(?:something|tools?|apps?|one)\s+like\s+", "alternative-to"),
    (r"\blike\s+", "alternative-to"),
    (r"\bcheaper\s+than\s+", "alternative-to"),
    (r"\bcompared?\s+(?:to|with)\s+", "compare"),
]
#: The words the reading's patterns turn on (reference, comparison, price and negation cues:
#: "alternative to", "like", "vs", "cheaper than", "without"), each as the patterns spell it.
#: The linker corrects a misspelling of one within the same edit budget as a name
#: (:mod:`agentic_search.logic.linking`), so "midjourny alternatve" reads as an alternative.
CUE_WORDS = (
    "alternative",
    "alternatives",
    "replacement",
    "replacements",
    "instead",
    "similar",
    "like",
    "than",
    "cheaper",
    "compare",
    "compared",
    "comparison",
    "versus",
    "difference",
    "between",
    "without",
    "except",
    "excluding",
)
PRICE = re.compile(
    r"(?P<op>under|below|less\s+than|cheaper\s+than|at\s+most|max(?:imum)?|up\s+to|<=?|"
    r"no\s+more\s+than)\s*"
    r"(?:\$\s*(?P<amount>\d+(?:\.\d+)?)(?!\w)|(?P<amount2>\d+(?:\.\d+)?)\s*"
    r"(?:\$|usd\b|dollars?\b|bucks\b|(?=\s*(?:/|a|per)\s*mo(?:nth)?\b)))"
    r"(?:\s*(?:/|a|per)\s*mo(?:nth)?\b)?",
)
PRICE_OR_LESS = re.compile(r"\$\s*(?P<amount>\d+(?:\.\d+)?)\s*(?:/\s*mo(?:nth)?)?\s+or\s+less")
MUST = re.compile(r"\b(?:must|only|strictly|required|has\s+to|have\s+to|needs?\s+to)\b")
EXPLAIN = re.compile(r"^\s*(?:what\s+is|what\s+are|how\s+does|how\s+do|explain|why)\b")
COMPARE = re.compile(r"\b(?:compare|comparison|difference\s+between|versus|vs\.?)\b")
#: What may stand between two named records listed side by side ("X and Y", "X, Y", "X & Y").
LISTED_WITH = re.compile(r"\s*(?:,\s*(?:and\s+)?|&|/|\+|\band\b)\s*")
#: With two or more named records, words that ask to weigh them against each other
#: ("X or Y for ...", "is X better than Y", "which is older, X or Y", "both X and Y").
COMPARE_CUE = re.compile(
    r"\b(?:or|both|same|either|neither|than|better|worse|more|most|less|least|older|oldest|"
    r"younger|first|earlier|later|larger|longer|higher|bigger|smaller|faster|slower|"
    r"cheaper|different|differ|common)\b"
)
FREE = re.compile(r"(?<![\w-])(?:free|free\s+of\s+charge|no\s+cost|gratis|costs?\s+nothing)\b")
NOT_PAID = re.compile(rf"\b{NEG}[\s-]+(?:paid|commercial|subscription)\b")
OPEN_SOURCE = re.compile(r"\b(?:open[\s-]?source|oss|foss)\b")
NEG_BEFORE = re.compile(rf"\b{NEG}[\s-]+(?:an?\s+|the\s+|be\s+)?$")
NOT_CLOUD = re.compile(rf"\b{NEG}[\s-]+(?:the\s+)?(?:cloud|saas|internet)(?:[\s-]+based)?\b")
LOCAL = re.compile(
    r"\b(?:local(?:ly)?|offline|on[\s-]device|on\s+my\s+(?:machine|laptop|computer|pc)|"
    r"without\s+internet|air[\s-]?gapped)\b"
)
SELF_HOSTED = re.compile(
    r"\b(?:self[\s-]?host(?:ed|able)?|on[\s-]?prem(?:ise|ises)?|own\s+(?:server|servers|"
    r"infrastructure|infra))\b"
)
FILLER = re.compile(
    r"\b(?:tools?|apps?|software|that|which|works?|running|runs?|please|find|me|some|any|"
    r"i|need|want|looking|for|a|an|the|with|good|best|but|what|are|is|s|cheaper|alternatives?|"
    r"similar|top|other|options?|something|like|instead|replacements?)\b"
)


def phrase_pattern(phrase: str, plural: bool = False) -> re.Pattern[str]:
    """A whole-word (hyphen-aware) pattern for ``phrase``, lowercased; ``plural`` admits a
    trailing s/es."""
    tail = r"(?:s|es)?" if plural else ""
    return re.compile(r"(?<![\w-])" + re.escape(phrase.lower()) + tail + r"(?![\w-])")


def is_product_mention(query: str, q: str, start: int, end: int) -> bool:
    """Whether a catalog name found at ``q[start:end]`` names the product, not a common word.

    Multi-word or non-alphabetic names always count; a plain word ("continue", "make", "void")
    counts when written with a capital letter or right after a reference phrase ("alternative
    to cursor").
    """
    name = q[start:end]
    if " " in name or not name.isalpha():
        return True
    original = re.search(re.escape(name), query, re.IGNORECASE)
    if original is not None and any(ch.isupper() for ch in original.group(0)):
        return True
    prefix = q[:start]
    return (
        any(re.search(pat + r"$", prefix) for pat, _ in REF_PATTERNS)
        or bool(re.match(r"(?:'s)?\s*(?:alternatives?|replacements?|vs\b|versus\b)", q[end:]))
        or bool(re.search(r"\b(?:vs\.?|versus|and|or)\s+$", prefix))
    )


def semantic_variant(q: str, spans: list[tuple[int, int]]) -> str:
    """The query with constraint phrases and filler words removed (for dense retrieval)."""
    keep = [True] * len(q)
    for s, e in spans:
        for i in range(s, e):
            keep[i] = False
    text = "".join(ch if keep[i] else " " for i, ch in enumerate(q))
    text = FILLER.sub(" ", text)
    text = re.sub(r"[^\w\s+#./-]", " ", text)
    return re.sub(r"\s+", " ", text).strip()
