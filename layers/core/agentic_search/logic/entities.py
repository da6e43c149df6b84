"""Records as named entities: name folding, the entity index (name -> record ids) and the
scan of a text for the names it mentions.

A record's names are the values of the schema's name fields (the title by default) and of its
alias field, each also without a trailing parenthetical qualifier ("Kiss and Tell (1945
film)" is also "Kiss and Tell"). Names are compared *folded*: Unicode NFKD with the combining
marks dropped (accent-insensitive), case-folded, every run of non-word characters a single
space ("Arthur's Magazine" -> ``arthur s magazine``).

A plain one-word name that the corpus also uses as an ordinary lowercase word ("Continue",
"Void", "Boston" is not one) is *ambiguous*: a text mentions the entity only where the word is
written with a capital letter and does not open a sentence. Names of one or two characters and
stopwords never count as mentions.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentic_search.logic.schema import DomainSchema
from agentic_search.logic.text import ENGLISH_STOPWORDS, field_text

_WORD = re.compile(r"\w+")
_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")
#: Longest name, in words, the scan looks for (longer names are still indexed, never found).
MAX_NAME_WORDS = 12
#: Words that never name an entity on their own, whatever the catalog holds.
_NEVER_ALONE = ENGLISH_STOPWORDS | {"i", "me", "my", "we", "you", "he", "she", "his", "her"}


def fold(text: str) -> str:
    """Accent-insensitive, case-folded, punctuation-free form of ``text`` (see the module
    docstring); ``"Café  Ñandú!"`` -> ``"cafe nandu"``. ASCII text skips the decomposition
    (NFKD leaves it as it is and it has no combining marks): a lookup folds every name of the
    catalog."""
    if text.isascii():
        plain = text
    else:
        decomposed = unicodedata.normalize("NFKD", text)
        plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(_WORD.findall(plain.casefold().replace("_", " ")))


@dataclass(frozen=True)
class Token:
    """A word of a text: its surface form, folded form and character span in the text."""

    surface: str
    folded: str
    start: int
    end: int


def tokens(text: str) -> list[Token]:
    """The words of ``text`` (``\\w+``) with their folded forms and spans; a word whose folded
    form splits (rare ligatures) yields one token per part, all with the word's span."""
    out: list[Token] = []
    for m in _WORD.finditer(text):
        for part in fold(m.group(0)).split():
            out.append(Token(m.group(0), part, m.start(), m.end()))
    return out


def name_variants(name: str) -> list[str]:
    """Folded variants of a name: itself and, when it ends in a parenthetical qualifier,
    without it. Empty names give none."""
    out = [fold(name)]
    bare = _QUALIFIER.sub("", name)
    if bare != name:
        out.append(fold(bare))
    return [n for n in dict.fromkeys(out) if n]


def record_names(schema: DomainSchema, record: Mapping[str, Any]) -> list[str]:
    """The folded names of a record (name fields, then aliases), first occurrence kept."""
    names: list[str] = []
    raw: list[Any] = [record.get(f) for f in schema.name_fields]
    if schema.entities is not None and schema.entities.aliases:
        aliases = record.get(schema.entities.aliases)
        raw += list(aliases) if isinstance(aliases, list) else [aliases]
    for value in raw:
        if isinstance(value, str) and value.strip():
            names += name_variants(value)
    return list(dict.fromkeys(names))


def lowercase_names(schema: DomainSchema, record: Mapping[str, Any]) -> list[str]:
    """The folded names a record spells all in lowercase (its official spelling)."""
    out = []
    for f in schema.name_fields:
        value = record.get(f)
        if isinstance(value, str) and value.strip() and value == value.lower():
            out += name_variants(value)
    return out


def link_text(schema: DomainSchema, record: Mapping[str, Any]) -> str:
    """The text of a record that is scanned for mentions of other records (its link fields,
    joined by ". ")."""
    if schema.entities is None:
        return ""
    parts = [field_text(record.get(f)) for f in schema.entities.link_fields]
    return ". ".join(p for p in parts if p)


def is_plain_word(name: str) -> bool:
    """A one-word, purely alphabetic folded name (the kind that can be an ordinary word)."""
    return " " not in name and name.isalpha()


@dataclass(frozen=True)
class Mention:
    """A name found in a text: the folded name, the ids it names, the surface text and the
    token span ``[first, last)`` in the text's :func:`tokens`."""

    name: str
    ids: tuple[str, ...]
    surface: str
    first: int
    last: int
    start: int
    end: int


class EntityIndex:
    """Folded name -> record ids, with the names that are also ordinary words.

    ``names``: {folded name: record ids}; ``common``: folded plain-word names the corpus also
    uses as lowercase ordinary words (see the module docstring). Immutable once built.
    """

    def __init__(self, names: Mapping[str, Sequence[str]], common: Iterable[str] = ()) -> None:
        self._names: dict[str, tuple[str, ...]] = {
            n: tuple(dict.fromkeys(ids)) for n, ids in names.items() if n and ids
        }
        self.common = frozenset(common) & set(self._names)
        # longest name (in words) starting with each first word: the scan tries no longer
        self._first: dict[str, int] = {}
        for n in self._names:
            words = n.split(" ")
            self._first[words[0]] = max(self._first.get(words[0], 0), len(words))
        self._by_id: dict[str, list[str]] = {}
        for n, ids in self._names.items():
            for rid in ids:
                self._by_id.setdefault(rid, []).append(n)

    @classmethod
    def from_records(
        cls, named: Iterable[tuple[str, Sequence[str]]], common: Iterable[str] = ()
    ) -> EntityIndex:
        """Build from (record id, folded names) pairs."""
        names: dict[str, list[str]] = {}
        for rid, rnames in named:
            for n in rnames:
                names.setdefault(n, []).append(rid)
        return cls(names, common)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    @property
    def names(self) -> list[str]:
        """Every folded name, sorted."""
        return sorted(self._names)

    def ids(self, name: str) -> tuple[str, ...]:
        """The records a folded name names (empty when none)."""
        return self._names.get(name, ())

    def names_of(self, record_id: str) -> list[str]:
        """The folded names of a record (empty when it has none)."""
        return list(self._by_id.get(record_id, ()))

    def linkable(self, name: str) -> bool:
        """Whether a name may be found as a mention at all (not a stopword, 3+ characters)."""
        return len(name) >= 3 and name not in _NEVER_ALONE

    def scan(self, text: str, *, cased: bool = True) -> list[Mention]:
        """The names mentioned in ``text``, longest match first, non-overlapping, in text order.

        With ``cased`` (texts written by people: descriptions, abstracts), an ambiguous name
        (see the module docstring) counts only when capitalized and not at a sentence start;
        without it every linkable name counts (callers apply their own context rules).
        """
        toks = tokens(text)
        out: list[Mention] = []
        i = 0
        while i < len(toks):
            found: Mention | None = None
            longest = self._first.get(toks[i].folded, 0)
            for n in range(min(longest, MAX_NAME_WORDS, len(toks) - i), 0, -1):
                name = " ".join(t.folded for t in toks[i : i + n])
                ids = self._names.get(name)
                if not ids or not self.linkable(name):
                    continue
                if n == 1 and cased and not self._cased_ok(text, toks, i, name):
                    continue
                start, end = toks[i].start, toks[i + n - 1].end
                found = Mention(name, ids, text[start:end], i, i + n, start, end)
                break
            if found is None:
                i += 1
            else:
                out.append(found)
                i = found.last
        return out

    def _cased_ok(self, text: str, toks: Sequence[Token], i: int, name: str) -> bool:
        if name not in self.common:
            return True
        surface = toks[i].surface
        if not surface[:1].isupper():
            return False
        return not opens_sentence(text[: toks[i].start])


def opens_sentence(before: str) -> bool:
    """Whether a word after ``before`` (the text before it) opens a sentence: nothing but
    space before it, or a sentence mark (``. ! ? : ;`` or an opening quote) right before."""
    stripped = before.rstrip()
    return not stripped or stripped[-1] in '.!?:;"“'


#: A name its own record spells in lowercase is an ordinary word of the catalog when at least
#: this many other records write it in lowercase ("excel files", "para leer"); on the bundled
#: tools catalog its lowercase names are written so by at most 2 other records (pgvector).
ORDINARY_MIN_RECORDS = 3


def _inflections(name: str) -> set[str]:
    """The forms an ordinary word takes that a name does not: plural, past, gerund, agent
    ("parse": parses, parsed, parsing, parser; "tables": table)."""
    forms = {name + t for t in ("s", "es", "ed", "d", "ing", "er", "ers")}
    if name.endswith("e"):
        forms |= {name[:-1] + t for t in ("ing", "ed", "er", "ers")}
    if name.endswith("s") and len(name) > 3:
        forms.add(name[:-1])
    return forms - {name}


def common_words(
    index_names: Iterable[str],
    texts: Iterable[str | tuple[Iterable[str], str]],
    lowercase_names: Iterable[str] = (),
) -> set[str]:
    """The plain-word names among ``index_names`` that the catalog uses as ordinary
    lowercase words (ambiguous names, linked only when capitalized or in a naming context).

    ``texts``: the records' link texts, each optionally with its record's folded names
    (``(names, text)``). A name is common when some text writes it in lowercase; a name a
    record itself spells in lowercase (``lowercase_names``: "pgvector", "parse") is common
    only when other records' texts write an inflection of it in lowercase ("parsing",
    "schemas", "table" for tables) or write it in lowercase in at least
    :data:`ORDINARY_MIN_RECORDS` of them ("excel files", "para leer"); otherwise its
    lowercase use is the name."""
    lower = set(lowercase_names)
    plain = {n for n in index_names if is_plain_word(n)}
    inflected = {form: n for n in plain & lower for form in _inflections(n)}
    seen: set[str] = set()
    uses: dict[str, int] = {}
    for item in texts:
        own, text = (set(), item) if isinstance(item, str) else (set(item[0]), item[1])
        used: set[str] = set()
        for m in _WORD.finditer(text):
            word = m.group(0)
            if not word.islower():
                continue
            folded = fold(word)
            if folded in plain and folded not in lower:
                seen.add(folded)
            elif folded in plain and folded not in own:
                used.add(folded)
            name = inflected.get(folded)
            if name is not None and name not in own:
                seen.add(name)
        for name in used:
            uses[name] = uses.get(name, 0) + 1
    return seen | {n for n, k in uses.items() if k >= ORDINARY_MIN_RECORDS}


def named_after(names: Sequence[str], seed_names: Sequence[str]) -> bool:
    """Whether a record's folded ``names`` hold one of ``seed_names`` (folded) as whole words:
    "amazon dynamodb streams" is named after "amazon dynamodb", "webpack cli" after
    "webpack"; "dynamodbx" is not."""
    padded = [f" {n} " for n in names]
    return any(f" {s} " in p for s in seed_names if s for p in padded)


@dataclass
class ShortNames:
    """The names users type for records whose names open with the catalog's brand word
    ("Amazon DynamoDB" is "DynamoDB", "Amazon Simple Queue Service" also "SQS").

    ``names``: folded remainder -> record id; ``acronyms``: folded initials of a remainder's
    words (3+ words, stopwords skipped) -> record id, candidates only: an initialism names its
    record only where the record's own text (``text_of(record id)``, its link text) writes it
    in capitals as a word ("Amazon SQS is ..."), as most initials of a long name are nobody's
    abbreviation and some are another thing's ("CSV"). That is read when a query writes one
    (:meth:`confirmed`), not for every candidate when the lookup is built. Each names one
    record and no full name of the catalog.
    """

    names: Mapping[str, str]
    acronyms: Mapping[str, str]
    text_of: Callable[[str], str] | None = None
    _confirmed: dict[str, bool] = field(default_factory=dict, repr=False)

    def __bool__(self) -> bool:
        return bool(self.names or self.acronyms)

    def confirmed(self, acronym: str) -> bool:
        """Whether the folded ``acronym``'s record writes it in capitals in its own text
        (read once, then remembered); False without ``text_of``."""
        if acronym not in self._confirmed:
            rid = self.acronyms.get(acronym)
            text = self.text_of(rid) if rid is not None and self.text_of is not None else ""
            self._confirmed[acronym] = re.search(rf"\b{acronym.upper()}\b", text) is not None
        return self._confirmed[acronym]


def brand_prefixes(titles: Iterable[str], *, min_share: float, min_names: int) -> set[str]:
    """The folded first words that open at least ``min_names`` and ``min_share`` (a fraction)
    of the multi-word folded ``titles``' (a brand or scope word: "aws", "amazon", npm's
    "@types/"); stopwords and numbers never count."""
    titles = list(titles)
    counts: dict[str, int] = {}
    for t in titles:
        words = t.split(" ")
        if len(words) > 1:
            counts[words[0]] = counts.get(words[0], 0) + 1
    least = max(min_names, min_share * len(titles))
    return {
        w for w, k in counts.items() if k >= least and w not in _NEVER_ALONE and not w.isdigit()
    }


def short_names(
    named: Sequence[tuple[str, Sequence[str]]],
    *,
    min_share: float,
    min_names: int,
    text_of: Callable[[str], str] | None = None,
) -> ShortNames:
    """The :class:`ShortNames` of a catalog: ``named`` holds (record id, folded names, the
    title first) pairs; the brand words are :func:`brand_prefixes` of the titles. A remainder
    that opens with a stopword, is not linkable (under 3 characters, a stopword) or names two
    records is dropped, as is any that is a full name of some record. Initials are candidates
    that :meth:`ShortNames.confirmed` checks against ``text_of`` when a query writes them;
    without ``text_of`` none is ever confirmed."""
    prefixes = brand_prefixes(
        (names[0] for _, names in named if names), min_share=min_share, min_names=min_names
    )
    if not prefixes:
        return ShortNames({}, {}, text_of)
    full = {n for _, names in named for n in names}
    found: dict[str, set[str]] = {}
    initials: dict[str, set[str]] = {}
    for rid, names in named:
        for name in names:
            words = name.split(" ")
            if len(words) < 2 or words[0] not in prefixes or words[1] in ENGLISH_STOPWORDS:
                continue
            rest = words[1:]
            found.setdefault(" ".join(rest), set()).add(rid)
            content = [w for w in rest if w not in ENGLISH_STOPWORDS]
            if len(content) >= 3 and all(w[0].isalpha() for w in content):
                initials.setdefault("".join(w[0] for w in content), set()).add(rid)

    def unique(candidates: Mapping[str, set[str]]) -> dict[str, str]:
        return {
            n: next(iter(ids))
            for n, ids in sorted(candidates.items())
            if len(ids) == 1 and n not in full and len(n) >= 3 and n not in _NEVER_ALONE
        }

    names = unique(found)
    acronyms = {a: rid for a, rid in unique(initials).items() if a not in names}
    return ShortNames(names, acronyms, text_of)


__all__ = [
    "MAX_NAME_WORDS",
    "ORDINARY_MIN_RECORDS",
    "EntityIndex",
    "Mention",
    "ShortNames",
    "Token",
    "brand_prefixes",
    "common_words",
    "fold",
    "is_plain_word",
    "link_text",
    "lowercase_names",
    "name_variants",
    "named_after",
    "opens_sentence",
    "record_names",
    "short_names",
    "tokens",
]
