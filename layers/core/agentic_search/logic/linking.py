"""Entity linking of a query: the records it names, exactly or with a typo, and the vocabulary
phrases it misspells.

1. **Exact** (:meth:`EntityIndex.scan` on the folded query: case- and accent-insensitive,
   longest name first). A plain one-word name the corpus also uses as an ordinary word
   ("whisper") links only when written with a capital letter or in a naming context: after a
   reference phrase ("alternative to", "like"), next to "vs", "versus", "and", "or" or a comma
   between names, or before "vs" / "alternatives" (score 0.9). Any plain one-word name right
   after a pronoun, modal or "to" ("I can continue using", "want to make a video"), or opening
   the query before a determiner ("make a jingle for my shop"), is read as the ordinary word
   unless capitalized or in a naming context. Score 1.0 otherwise.
2. **Fuzzy** (rapidfuzz's optimal string alignment distance over the names, the schema's
   vocabulary phrases and the reading's cue words: Levenshtein with an adjacent
   transposition counted as one edit, Damerau 1964, so "stabel difusion" is two edits from
   "stable diffusion", not three): only for query words the corpus does not know (no
   analysed term in the keyword index, no word of a name, phrase or cue), 4+ letters, not
   stopwords. Around such a word, the n-grams of one word up to the longest choice's words
   are compared with the choices at most 1 edit away (up to 7 characters) or 2 (longer); the
   longest n-gram that matches wins ("stabel difusion web ui" is Stable Diffusion web UI, not
   Stable Diffusion), among equally long ones the best score, ``1 - distance / length``
   (0.71..0.94). A fuzzy vocabulary phrase or cue word is returned as a correction the
   extractor reads instead of the typo ("vectr databse" -> "vector database", "alternatve"
   -> "alternative": :data:`~agentic_search.logic.intent_patterns.CUE_WORDS`). A word whose
   best choice is a one-word name is corrected to the catalog's ordinary word one edit away
   instead, when there is one ("pdf tabel extraction" is table, not the record Babel; a word
   under ``ordinary_min_letters`` letters is then left as written), and a capitalized word
   inside the query is linked to a one-word name only from ``capitalized_min_score``
   ("life on Mars" is not the record mgrs). A fuzzy link or correction scores at least
   ``fuzzy_min_score``. The three are the schema's ``tuning.linking``
   (:class:`~agentic_search.logic.tuning.LinkingTuning`).
3. **Short names** (:class:`~agentic_search.logic.entities.ShortNames`): where a brand word
   opens many of the catalog's names ("Amazon", "AWS"), a query names a record without it
   ("alternative to DynamoDB"), or by the initials of the rest ("SQS": Amazon Simple Queue
   Service). Such a name is linked (score 0.9, method ``exact``) only where a query writes it
   as a name: in a naming context as above, with a capital inside it or a digit ("DynamoDB",
   "Route 53"), or capitalized inside the query; initials only in capitals. "connect to a
   database" is not Amazon Connect. Full names are scanned first and win.

Links are reported with their surface form, method and score (``--explain`` shows them).
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from agentic_search.logic.entities import (
    MAX_NAME_WORDS,
    EntityIndex,
    Mention,
    ShortNames,
    Token,
    fold,
    is_plain_word,
    opens_sentence,
    tokens,
)
from agentic_search.logic.text import ENGLISH_STOPWORDS, Analyzer
from agentic_search.logic.tuning import LinkingTuning
from agentic_search.wire import EntityLink

#: Phrases before a name that make a plain word name the product.
_NAMING_BEFORE = re.compile(
    r"(?:alternatives?\s+(?:to|for)|replacements?\s+(?:to|for)|instead\s+of|similar\s+to|like|"
    r"than|vs\.?|versus|and|or|compare|between|,)\s*$"
)
_NAMING_AFTER = re.compile(
    r"^\s*(?:'s\b|alternatives?\b|replacements?\b|vs\b|versus\b|,|or\b|and\b)"
)
#: Words before a plain word that make it a verb or an ordinary word ("I can continue using",
#: "want to make a video"), not a name.
_ORDINARY_BEFORE = re.compile(
    r"\b(?:to|can|could|will|would|should|must|may|might|i|we|you|they|please|let's|lets|"
    r"don't|dont|not|never|also)\s*$"
)
#: Words after a lowercase plain word opening the query that make it an imperative verb
#: ("make a jingle for my shop", "continue the story"), not a name.
_DETERMINER_AFTER = re.compile(
    r"^\s+(?:a|an|the|my|our|your|his|her|their|its|this|that|these|those|some|me|us|it)\b"
)
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
#: Cue words this short ("like", "than") are corrected only from a swap of two letters.
SHORT_CUE = 4


@dataclass
class Linking:
    """The links of one query and the corrections of misspelled vocabulary phrases and cue
    words (surface text -> the phrase or word it stands for)."""

    links: list[EntityLink] = field(default_factory=list)
    corrections: dict[str, str] = field(default_factory=dict)

    @property
    def entities(self) -> list[EntityLink]:
        """The record links, in query order."""
        return [lk for lk in self.links if lk.kind == "entity"]


def _max_edits(length: int) -> int:
    return 1 if length <= 7 else 2


class QueryLinker:
    """Links queries to one collection's entities and vocabulary (see the module docstring).

    ``index``: the entity index; ``titles``: record id -> display name; ``phrases``: folded
    vocabulary phrase -> its canonical value (synonyms included); ``known``: analysed terms ->
    those the keyword index holds (None: every word counts as known, no fuzzy linking of
    words); ``analyzer``: the keyword analyzer the ``known`` terms come from; ``cues``: the
    words the reading turns on ("alternative", "cheaper"), corrected like phrases;
    ``tuning``: the thresholds, the schema's ``tuning.linking`` (each field says why);
    ``short``: the names typed without the catalog's brand word (none by default).
    """

    def __init__(
        self,
        index: EntityIndex,
        titles: Mapping[str, str],
        phrases: Mapping[str, str] | None = None,
        known: Callable[[Sequence[str]], set[str]] | None = None,
        analyzer: Analyzer | None = None,
        cues: Iterable[str] = (),
        *,
        tuning: LinkingTuning,
        short: ShortNames | None = None,
    ) -> None:
        self.index = index
        self._shortnames = short
        self._short = (
            EntityIndex({n: [rid] for n, rid in (*short.names.items(), *short.acronyms.items())})
            if short
            else None
        )
        self.tuning = tuning
        self.titles = dict(titles)
        self.phrases = dict(phrases or {})
        self.known = known
        self.analyzer = analyzer
        named = {*index.names, *self.phrases}
        self.cues = sorted({fold(c) for c in cues} - named - {""})
        self._cue_set = frozenset(self.cues)
        self._choices = [*index.names, *self.phrases, *self.cues]
        self._words = {w for n in self._choices for w in n.split()}
        #: the words of names that are no ordinary word, and their terms (on first use)
        self._name_terms: frozenset[str] | None = None
        #: the most words of a choice: the longest n-gram worth comparing
        self._max_words = min(
            MAX_NAME_WORDS, max((len(c.split()) for c in self._choices), default=1)
        )
        #: length -> the positions of the choices that long, in order
        self._by_length: dict[int, list[int]] = {}
        for i, choice in enumerate(self._choices):
            self._by_length.setdefault(len(choice), []).append(i)

    def _within_length(self, length: int, edits: int) -> list[str]:
        """The choices whose length is within ``edits`` of ``length`` (no other can be within
        ``edits`` edits), in their order: rapidfuzz's OSA has no length filter of its own
        (over SciFact's titles it was an order of magnitude slower than Levenshtein's:
        docs/benchmarks.md)."""
        buckets = (self._by_length.get(n, []) for n in range(length - edits, length + edits + 1))
        return [self._choices[i] for i in heapq.merge(*buckets)]

    def link(self, query: str) -> Linking:
        """The entity links and vocabulary corrections of ``query``."""
        out = Linking()
        toks = tokens(query)
        taken = [False] * len(toks)
        for m in self.index.scan(query, cased=False):
            score = self._exact_score(query, toks, m.first, m.last, m.name)
            if score is None:
                continue
            for i in range(m.first, m.last):
                taken[i] = True
            for rid in m.ids:
                out.links.append(
                    EntityLink(
                        id=rid,
                        name=self.titles.get(rid, m.surface),
                        surface=m.surface,
                        score=score,
                        method="exact",
                    )
                )
        if self._short is not None:
            self._short_links(query, toks, taken, out)
        if self.known is not None:
            self._fuzzy(query, toks, taken, out)
        out.links.sort(key=lambda lk: query.casefold().find(lk.surface.casefold()))
        return out

    def _exact_score(
        self, query: str, toks: Sequence[Token], first: int, last: int, name: str
    ) -> float | None:
        if not is_plain_word(name):
            return 1.0
        surface = toks[first].surface
        before = query[: toks[first].start].casefold()
        after = query[toks[last - 1].end :].casefold()
        if surface[:1].isupper():
            return 1.0 if name not in self.index.common else 0.9
        if _NAMING_BEFORE.search(before) or _NAMING_AFTER.match(after):
            return 1.0 if name not in self.index.common else 0.9
        if name in self.index.common or _ORDINARY_BEFORE.search(before):
            return None  # an ordinary word here ("I can continue using", "to make a video")
        if not before.strip() and _DETERMINER_AFTER.match(after):
            return None  # an imperative opening the query ("make a jingle for my shop")
        return 1.0

    def _short_links(
        self, query: str, toks: Sequence[Token], taken: list[bool], out: Linking
    ) -> None:
        """Links of the short names (see the module docstring) outside the taken words."""
        assert self._short is not None
        for m in self._short.scan(query, cased=False):
            if any(taken[m.first : m.last]) or not self._written_as_name(query, toks, m):
                continue
            for i in range(m.first, m.last):
                taken[i] = True
            for rid in m.ids:
                name = self.titles.get(rid, m.surface)
                out.links.append(
                    EntityLink(id=rid, name=name, surface=m.surface, score=0.9, method="exact")
                )

    def _written_as_name(self, query: str, toks: Sequence[Token], m: Mention) -> bool:
        surface = m.surface
        short = self._shortnames
        if short is not None and m.name in short.acronyms:
            return surface.isupper() and short.confirmed(m.name)
        before = query[: toks[m.first].start].casefold()
        after = query[toks[m.last - 1].end :].casefold()
        if _NAMING_BEFORE.search(before) or _NAMING_AFTER.match(after):
            return True
        if any(c.isupper() for c in surface[1:]) or any(c.isdigit() for c in surface):
            return True
        return surface[:1].isupper() and not opens_sentence(before)

    def _unknown(self, toks: Sequence[Token], taken: Sequence[bool]) -> list[int]:
        cands = [
            i
            for i, t in enumerate(toks)
            if not taken[i]
            and t.folded.isalpha()
            and len(t.folded) >= 4
            and t.folded not in ENGLISH_STOPWORDS
            and t.folded not in self._words
        ]
        if not cands or self.known is None:
            return []
        stems = {
            i: (self.analyzer.terms(toks[i].folded) if self.analyzer else [toks[i].folded])
            for i in cands
        }
        known = self.known(sorted({s for v in stems.values() for s in v}))
        return [i for i in cands if not any(s in known for s in stems[i])]

    def _plausible_cue(self, text: str, choice: str) -> bool:
        """Whether ``text`` may be corrected to ``choice``: any name or phrase within the
        budget may; a cue word of :data:`SHORT_CUE` letters or fewer only from two adjacent
        letters swapped ("liek"), as one other edit of so short a word is as often a word of
        its own the catalog lacks ("lime", "lake")."""
        if len(choice) > SHORT_CUE or choice not in self._cue_set:
            return True
        from rapidfuzz.distance import Levenshtein

        return Levenshtein.distance(text, choice) == 2 and sorted(text) == sorted(choice)

    def _ordinary_word(self, word: str) -> str | None:
        """The catalog's ordinary word one edit from ``word`` (Norvig's candidates: a swap of
        two adjacent letters first, then a letter dropped, changed, added), if any: a word
        the keyword index holds that is neither a word of a name nor its stem (a name the
        catalog uses as an ordinary word, :attr:`EntityIndex.common`, is a word). None
        without one, or without a keyword index to ask."""
        if self.known is None:
            return None
        n = len(word)
        swaps = [word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in range(n - 1)]
        drops = [word[:i] + word[i + 1 :] for i in range(n)]
        changes = [word[:i] + c + word[i + 1 :] for i in range(n) for c in _LETTERS]
        adds = [word[:i] + c + word[i:] for i in range(n + 1) for c in _LETTERS]
        terms = self.analyzer.terms if self.analyzer else (lambda w: [w])
        if self._name_terms is None:  # the terms of names that are no ordinary word
            common = self.index.common
            words = {w for n in self.index.names if n not in common for w in n.split()}
            self._name_terms = frozenset(t for w in words for t in terms(w)) | words
        candidates = [
            w
            for w in dict.fromkeys([*swaps, *drops, *changes, *adds])
            if w != word and len(w) >= 3 and w not in self._name_terms
        ]
        stems = {w: terms(w) for w in candidates}
        known = self.known(sorted({t for ts in stems.values() for t in ts})) if stems else set()
        for w in candidates:
            ts = stems[w]
            # a name's own stem ("camelote" is camelot's) is no ordinary word
            if ts and all(t in known for t in ts) and not set(ts) <= self._name_terms:
                return w
        return None

    def _fuzzy(self, query: str, toks: Sequence[Token], taken: list[bool], out: Linking) -> None:
        from rapidfuzz import process
        from rapidfuzz.distance import OSA

        least = self.tuning.fuzzy_min_score
        capitalized = self.tuning.capitalized_min_score
        ordinary = self.tuning.ordinary_min_letters
        for i in self._unknown(toks, taken):
            if taken[i]:
                continue
            # (words of the n-gram, score, start, end, choice): the longest n-gram that
            # matches a choice wins, then the best score
            best: tuple[int, float, int, int, str] | None = None
            for n in range(min(self._max_words, len(toks)), 0, -1):
                for start in range(max(0, i - n + 1), min(i, len(toks) - n) + 1):
                    span = range(start, start + n)
                    if any(taken[j] for j in span):
                        continue
                    text = " ".join(toks[j].folded for j in span)
                    hit = process.extractOne(
                        text,
                        self._within_length(len(text), _max_edits(len(text))),
                        scorer=OSA.distance,
                        score_cutoff=_max_edits(len(text)),
                    )
                    if hit is None:
                        continue
                    choice, dist = hit[0], hit[1]
                    if not self._plausible_cue(text, choice):
                        continue
                    score = 1.0 - dist / max(len(choice), len(text))
                    if score >= least and (best is None or (n, score) > best[:2]):
                        best = (n, score, start, start + n, choice)
                if best is not None:
                    break  # a longer n-gram matched: no shorter one is compared
            if best is None:
                continue
            _, score, a, b, choice = best
            surface = query[toks[a].start : toks[b - 1].end]
            if choice in self.index and b - a == 1:
                if a > 0 and toks[a].surface.istitle() and score < capitalized:
                    continue  # "life on Mars": a capitalized word, not a misspelt name
                word = self._ordinary_word(toks[a].folded)
                if word is not None:  # "pdf tabel extraction": table, not the record babel
                    taken[a] = True
                    if len(toks[a].folded) >= ordinary:
                        out.corrections[surface] = word
                    continue  # a shorter word ("bout": about, out) is left as written
            for j in range(a, b):
                taken[j] = True
            if choice in self.index:
                for rid in self.index.ids(choice):
                    out.links.append(
                        EntityLink(
                            id=rid,
                            name=self.titles.get(rid, choice),
                            surface=surface,
                            score=round(score, 3),
                            method="fuzzy",
                        )
                    )
            else:
                out.corrections[surface] = choice
                vocabulary = choice in self.phrases
                out.links.append(
                    EntityLink(
                        id=self.phrases[choice] if vocabulary else choice,
                        name=choice,
                        surface=surface,
                        score=round(score, 3),
                        method="fuzzy",
                        kind="vocabulary" if vocabulary else "cue",
                    )
                )


def vocabulary_phrases(vocabularies: Mapping[str, Mapping[str, Sequence[str]]]) -> dict[str, str]:
    """Folded vocabulary phrase (canonical values and synonyms) -> canonical value."""
    out: dict[str, str] = {}
    for values in vocabularies.values():
        for canonical, synonyms in values.items():
            for phrase in (canonical, *synonyms):
                folded = fold(phrase)
                if folded:
                    out.setdefault(folded, canonical)
    return out


def apply_corrections(text: str, corrections: Mapping[str, str]) -> str:
    """``text`` with each misspelled surface replaced by the phrase it stands for."""
    for surface, phrase in corrections.items():
        text = re.sub(re.escape(surface), phrase, text, flags=re.IGNORECASE)
    return text


__all__ = [
    "SHORT_CUE",
    "Linking",
    "QueryLinker",
    "apply_corrections",
    "vocabulary_phrases",
]
