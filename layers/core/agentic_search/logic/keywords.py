"""The query's words a person is shown as matched keywords or as words no record holds.

Matching runs on analysed terms (lowercased, stopwords dropped, Snowball stems: see
:class:`~agentic_search.logic.text.Analyzer`); what is shown are the words as the user wrote
them ("bakeries", not "bakeri"), never a word that only shapes the question (a goal,
question or function word such as "to", "vs", "best", "my").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from agentic_search.logic.function_words import GOAL_WORDS, PRONOUNS, QUESTION_WORDS
from agentic_search.logic.text import ENGLISH_STOPWORDS

#: Words never shown as a match: they shape the question, not the need ("vs" is how a
#: comparison is asked; the goal words list its spelt-out "versus").
NEVER_SHOWN = frozenset(
    w.lower() for w in (*ENGLISH_STOPWORDS, *GOAL_WORDS, *QUESTION_WORDS, *PRONOUNS, "vs")
)


def shown_words(terms: Iterable[str], written: Mapping[str, str]) -> list[str]:
    """The words as written (``written``: term -> word, in query order, from
    :meth:`~agentic_search.logic.text.Analyzer.written_forms`) of the analysed ``terms`` the
    query holds, in query order, less :data:`NEVER_SHOWN`; a term the query does not hold
    (one from a rewrite of it) is not shown."""
    have = set(terms)
    return [w for t, w in written.items() if t in have and w.lower() not in NEVER_SHOWN]


def as_written(terms: Iterable[str], written: Mapping[str, str]) -> list[str]:
    """Each of ``terms`` as the query wrote it (the term itself when the query does not hold
    it: a word of a rewrite), in the order given."""
    return [written.get(t, t) for t in terms]


__all__ = ["NEVER_SHOWN", "as_written", "shown_words"]
