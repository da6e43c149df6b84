"""Words of a query that are never coverage targets: what the user wants done (goal words)
and how the question is put (question and function words)."""

from __future__ import annotations

#: Question and function words: they shape the question, no evidence "contains" them.
QUESTION_WORDS = [
    "what",
    "which",
    "who",
    "whom",
    "whose",
    "where",
    "when",
    "why",
    "how",
    "did",
    "does",
    "do",
    "was",
    "were",
    "has",
    "have",
    "had",
    "can",
    "could",
    "would",
    "should",
    "both",
    "either",
    "neither",
    "than",
    "also",
    "other",
    "same",
    "one",
    # which of two came first ("Which magazine was started first, X or Y?")
    "first",
    "older",
    "oldest",
    "younger",
    "youngest",
    "earlier",
    "earliest",
]
#: Words that say what the user wants done, not what the evidence must contain.
GOAL_WORDS = [
    "alternative",
    "alternatives",
    "like",
    "similar",
    "instead",
    "replacement",
    "replace",
    "versus",
    "compare",
    "comparison",
    "best",
    "top",
    "good",
    "recommend",
    "recommended",
    "find",
    "looking",
    "need",
    "want",
]


__all__ = ["GOAL_WORDS", "QUESTION_WORDS"]
