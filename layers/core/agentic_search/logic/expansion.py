"""Pseudo-relevance feedback from the evidence found so far: RM3-style expansion terms for the
keyword side (the Rocchio query vector for the dense side is :mod:`.rocchio`).

Relevance model RM1 (Lavrenko and Croft, "Relevance-Based Language Models", SIGIR 2001), as
used in RM3 (Abdul-Jaleel et al., "UMass at TREC 2004"): ``P(w|R) ~ sum_d P(w|d) * P(d|q)``
with ``P(w|d) = tf(w, d) / |d|`` and ``P(d|q)`` the feedback document's normalized retrieval
weight. RM3's interpolation with the original query is done by the executor's fusion (the
feedback round's ranked lists get a lower weight than the original query's).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence

from agentic_search.logic.text import ENGLISH_STOPWORDS, Analyzer

_WORD = re.compile(r"(?u)\b[^\W\d_][\w-]{2,}\b")


def rm3_terms(
    query_terms: Iterable[str],
    feedback: Sequence[tuple[str, float]],
    n_terms: int,
    analyzer: Analyzer,
) -> list[str]:
    """Top ``n_terms`` expansion words for a query from ``feedback`` (text, weight) pairs.

    Terms already in ``query_terms`` (stems), stopwords and words shorter than 3 letters are
    left out. Each stem is returned as its most frequent surface form in the feedback texts
    (so it can be embedded as well as matched). Ties break by first appearance. Weights need
    not sum to 1; non-positive weights are ignored.
    """
    if n_terms <= 0 or not feedback:
        return []
    skip = set(query_terms)
    weight_sum = sum(w for _, w in feedback if w > 0) or 1.0
    scores: Counter[str] = Counter()
    surface: dict[str, dict[str, int]] = {}  # stem -> its words and their counts, in order
    order: dict[str, int] = {}
    texts = [(Counter(_WORD.findall(text.lower())), w) for text, w in feedback if w > 0]
    word_stems = _word_terms({word for words, _ in texts for word in words}, analyzer)
    for words, weight in texts:
        counts: dict[str, int] = {}  # the text's stems and their counts
        size = 0  # the text's length in stems
        # each distinct word once, in order of first appearance, with its count: the same
        # counts, surface forms and first appearances as word by word, in fewer steps
        for word, n in words.items():
            got = word_stems[word]
            for stem in got:
                counts[stem] = counts.get(stem, 0) + n
                forms = surface.get(stem)
                if forms is None:
                    forms = surface[stem] = {}
                    order[stem] = len(order)
                forms[word] = forms.get(word, 0) + n
            size += n * len(got)
        if not size:
            continue
        for stem, count in counts.items():
            scores[stem] += (count / size) * (weight / weight_sum)
    ranked = sorted(
        (s for s in scores if s not in skip and len(s) >= 3),
        key=lambda s: (-scores[s], order.get(s, 0)),
    )
    words: list[str] = []
    for stem in ranked:
        forms = surface[stem]
        word = max(forms, key=forms.__getitem__)  # the first of the most frequent
        if word not in words:  # "self-hosted" gives two stems but is one word
            words.append(word)
        if len(words) == n_terms:
            break
    return words


def _word_terms(words: Collection[str], analyzer: Analyzer) -> dict[str, list[str]]:
    """Each of ``words`` (lowercase ``_WORD`` matches) -> its analysed terms. A word of word
    characters only that is no stopword is one token with one term, so all of those are
    analysed in one call (one stemmer call for a few hundred words); the rest (hyphenated
    words, stopwords) one by one. Should the one call not give one term per word (an
    analyzer dropping other words), every word is analysed alone."""
    out: dict[str, list[str]] = {}
    plain = [w for w in words if "-" not in w and w not in ENGLISH_STOPWORDS]
    terms = analyzer.terms(" ".join(plain))
    if len(terms) == len(plain):
        out.update((w, [t]) for w, t in zip(plain, terms, strict=True))
    for w in words:
        if w not in out:
            out[w] = analyzer.terms(w)
    return out
