"""Query complexity (the planner design note's SIMPLE / MODERATE / COMPLEX) and the bridge
cue, from the extracted intent; they set how much work the executor does.

* **bridge**: a question (a wh-word, or a final "?") that is not a comparison or a
  query by example: its answer is about something the question describes rather than names
  ("the woman who portrayed Corliss Archer", "the director of Big Stone Gap"), so a later
  round may walk from the evidence to the entities it mentions (HotpotQA's bridge questions).
  A pasted paragraph (:func:`is_long`) is never one, whatever question it ends with: it
  states a need, and a walk from its first results places records it never asked about.
* **complex**: a comparison, a bridge question, or four or more stated conditions (constraints
  and vocabulary values): every round the caps allow, graph hops for bridges.
* **lookup**: "what is X" where X is the one record the query names: not a bridge (a walk
  from round 1's first result put unrelated records at #2), a SIMPLE query: X is fetched.
* **simple**: a lookup: "what is X" as above, or no constraint, not a question, and either a
  single named record with at most two other words ("ollama", "cursor pricing", "windsurf
  ide") or, naming nothing and matching no vocabulary value, at most two content words in
  all. One round, evidence read
  from its first 10 candidates only (:func:`caps_for`).
* **moderate**: everything else (the coverage rounds as before).
"""

from __future__ import annotations

import re

from agentic_search.logic.coverage import MAX_TERM_TARGETS
from agentic_search.logic.text import Analyzer
from agentic_search.wire import Complexity, ExecutorCaps, IntentState

_WH = re.compile(r"\b(?:what|which|who|whom|whose|where|when|how|why)\b")
#: Words of a lookup that only say which facet of the named record is wanted.
_FACETS = frozenset(
    {
        "pricing",
        "price",
        "prices",
        "cost",
        "plan",
        "plans",
        "features",
        "feature",
        "docs",
        "documentation",
        "download",
        "review",
        "reviews",
        "api",
        "app",
        "website",
        "login",
        "license",
        "tool",
        "ai",
    }
)


def is_long(intent: IntentState) -> bool:
    """Whether the query is a pasted paragraph rather than a search: more distinct content
    words than a question or a keyword query has (:data:`MAX_TERM_TARGETS`, 24; SciFact's and
    HotpotQA's queries have at most 23 terms, the tools queries' paragraphs 64 or more)."""
    return len(intent.keywords) > MAX_TERM_TARGETS


def is_question(query: str) -> bool:
    """A wh-word anywhere, or a final question mark."""
    q = query.strip().lower()
    return q.endswith("?") or bool(_WH.search(q))


#: "what is X", "what are X", "tell me about X", "explain X": a lookup of X when X is all the
#: rest of the query names.
_LOOKUP = re.compile(
    r"^\s*(?:what\s+is|what\s+are|what's|tell\s+me\s+about|explain)\s+(?:(?:an?|the)\s+)?",
    re.IGNORECASE,
)


def is_lookup(intent: IntentState, analyzer: Analyzer) -> bool:
    """ "what is X" where X is one record the query names and nothing else is asked (facet
    words aside: "what is Ollama pricing"): a lookup of X, answered by fetching it, never a
    walk of the graph from whatever round 1 ranked first."""
    linked = intent.linked
    if len({lk.id for lk in linked}) != 1:
        return False
    cue = _LOOKUP.match(intent.normalized_query)
    if cue is None:
        return False
    rest = set(analyzer.terms(intent.normalized_query[cue.end() :]))
    name = set(analyzer.terms(" ".join(lk.surface for lk in linked)))
    facets = set(analyzer.terms(" ".join(_FACETS)))
    return not rest - name - facets


def is_bridge(intent: IntentState, analyzer: Analyzer | None = None) -> bool:
    """A question that neither compares named records nor asks by example (see the module
    docstring), nor looks one up (:func:`is_lookup`, when an ``analyzer`` is given), nor is
    a pasted paragraph (:func:`is_long`)."""
    if intent.primary_goal in ("compare", "alternative-to") or is_long(intent):
        return False
    if analyzer is not None and is_lookup(intent, analyzer):
        return False
    return is_question(intent.query)


def complexity(intent: IntentState, analyzer: Analyzer) -> Complexity:
    """SIMPLE / MODERATE / COMPLEX of an intent (see the module docstring)."""
    conditions = len(intent.constraints) + sum(len(v) for v in intent.matches.values())
    if not intent.constraints and is_lookup(intent, analyzer):
        return "simple"
    if intent.primary_goal == "compare" or is_bridge(intent, analyzer) or conditions >= 4:
        return "complex"
    if intent.constraints or intent.reference_tool or is_question(intent.query):
        return "moderate"
    words = [w for w in analyzer.terms(intent.normalized_query)]
    linked = intent.linked
    if len({lk.id for lk in linked}) == 1:
        name_terms = set(analyzer.terms(" ".join(lk.surface for lk in linked)))
        facets = set(analyzer.terms(" ".join(_FACETS)))
        rest = [w for w in words if w not in name_terms and w not in facets]
        if len(rest) <= 2:
            return "simple"
    if not linked and not conditions and len(set(words)) <= 2:
        return "simple"
    return "moderate"


#: What a SIMPLE query (a lookup) reads for evidence: its first few candidates only.
SIMPLE_POOL = 10


def caps_for(intent: IntentState, caps: ExecutorCaps) -> ExecutorCaps:
    """The caps a query's complexity allows: a SIMPLE one (a lookup) gets one round and reads
    only its first :data:`SIMPLE_POOL` candidates for evidence (no grading work beyond them);
    MODERATE and COMPLEX ones keep the caps given (COMPLEX queries are the ones that use the
    later rounds: comparisons are answered by pins, bridge questions by the graph walk)."""
    if intent.complexity != "simple":
        return caps
    return caps.model_copy(
        update={
            "max_rounds": 1,
            "selection_pool": min(caps.selection_pool, SIMPLE_POOL),
            "rerank_top_n": min(caps.rerank_top_n, SIMPLE_POOL),
        }
    )


def with_complexity(intent: IntentState, analyzer: Analyzer) -> IntentState:
    """The intent with its ``complexity`` and ``bridge`` set."""
    return intent.model_copy(
        update={
            "complexity": complexity(intent, analyzer),
            "bridge": is_bridge(intent, analyzer),
        }
    )


__all__ = [
    "SIMPLE_POOL",
    "caps_for",
    "complexity",
    "is_bridge",
    "is_long",
    "is_lookup",
    "is_question",
    "with_complexity",
]
