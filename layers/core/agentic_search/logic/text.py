"""Text preparation shared by ingest and search: aspect texts, keyword analysis, content hashes.

The :class:`Analyzer` is the one tokenizer the BM25 sparse vectors use in every engine (Qdrant
Edge, a Qdrant server, local mode), so a query is analysed exactly as the documents were:
lowercase, word tokens of 2+ characters, English stopwords removed, Snowball (Porter2) stems.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from typing import Any

import Stemmer

from agentic_search.logic.schema import DomainSchema
from agentic_search.wire.search import WORD_TOKEN

_TOKEN = WORD_TOKEN  # the tokens a query's length bound counts (state.search)

#: English stopwords: Lucene's ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`` (33 words), the set
#: bm25s and Elasticsearch's ``_english_`` use too, so the analysis matches theirs. Kept here,
#: not imported, so that analysing text never imports a search library (or numpy).
ENGLISH_STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    }
)


#: A Snowball English (Porter2) stem is its word with at most its last two characters changed
#: or added ("dying" -> "die", "academy" -> "academi", "hoping" -> "hope"), so a word whose
#: stem is ``s`` starts with ``s[:-STEM_SLACK]``. The algorithm only rewrites a word's end,
#: and each rewrite replaces a suffix that covers what earlier steps changed: step 1b adds
#: one "e", step 1c turns a final "y" into "i", a step 2 or 3 replacement differs from the
#: word in at most two characters ("-bility" -> "-ble"), step 4 and 5 only delete, and the
#: exceptions differ by two at most ("dying" -> "die"). Checked on every word of the SciFact,
#: HotpotQA and CACM corpora (65k words) and on 2.3 million words made of corpus words and
#: English suffixes (none differs by more than 2), and by ``tests/unit/logic/test_coverage.py``
#: (a stemmer that broke it would fail there).
STEM_SLACK = 2


class Analyzer:
    """Lowercase, tokenize (``\\b\\w\\w+\\b``), drop English stopwords, Snowball-stem.

    Deterministic and thread-safe (the stemmer cache is per instance, guarded by the GIL).
    ``stem_slack``: how many of a word's last characters its stem may change or add
    (:data:`STEM_SLACK` for English; None: not known for this language).
    """

    def __init__(self, language: str = "english") -> None:
        self._stemmer = Stemmer.Stemmer(language)
        self._stop = ENGLISH_STOPWORDS
        self.stem_slack: int | None = STEM_SLACK if language == "english" else None

    def terms(self, text: str) -> list[str]:
        """Analysed terms of ``text``, in order, duplicates kept (term frequency matters)."""
        words = [w for w in _TOKEN.findall(text.lower()) if w not in self._stop]
        return self._stemmer.stemWords(words)

    def written_forms(self, text: str) -> dict[str, str]:
        """Each analysed term of ``text`` -> the word it comes from as ``text`` writes it (its
        first occurrence, case kept), in the order of the text: ``"Bakeries"`` for
        ``bakeri``. Stopwords make no term, so they are not here."""
        out: dict[str, str] = {}
        for word in _TOKEN.findall(text):
            lower = word.lower()
            if lower not in self._stop:
                out.setdefault(self._stemmer.stemWord(lower), word)
        return out


@lru_cache(maxsize=1)
def default_analyzer() -> Analyzer:
    """The process-wide analyzer."""
    return Analyzer()


def field_text(value: Any) -> str:
    """Render a record value as text: lists joined by ", ", None as empty."""
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return ", ".join(field_text(v) for v in value if v is not None)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def aspect_text(schema: DomainSchema, aspect: str, record: dict[str, Any]) -> str:
    """The text embedded for one aspect of a record: its fields joined by ". "."""
    parts = [field_text(record.get(f)) for f in schema.aspect(aspect).fields]
    return ". ".join(p for p in parts if p)


#: The enriched fields the BM25 text reads (each a payload key; see logic/enrichment.py).
ENRICHED_KEYWORD_FIELDS = ("_category", "_needs", "_context")


def keyword_text(schema: DomainSchema, record: dict[str, Any]) -> str:
    """The text the BM25 index reads for a record: its ``keyword_fields``, then, when the
    domain declares ``enrichment``, the enrichment's words (category, needs, context) as a
    field of their own repeated ``keyword_weight`` times (an integer BM25F field weight)."""
    parts = [field_text(record.get(f)) for f in schema.keyword_fields]
    spec = schema.enrichment
    if spec is not None and spec.keyword_weight > 0:
        extra = " . ".join(
            t for t in (field_text(record.get(f)) for f in ENRICHED_KEYWORD_FIELDS) if t
        )
        if extra:
            parts += [extra] * spec.keyword_weight
    return " . ".join(p for p in parts if p)


def keyword_payload_fields(schema: DomainSchema) -> list[str]:
    """The payload keys :func:`keyword_text` reads (a scroll that rebuilds BM25 vectors)."""
    extra = list(ENRICHED_KEYWORD_FIELDS) if schema.enrichment is not None else []
    return [*schema.keyword_fields, *extra]


def aspect_hash(schema: DomainSchema, aspect: str, record: dict[str, Any]) -> str:
    """SHA-256 of an aspect's source fields (canonical JSON): re-embed only when it changes."""
    fields = schema.aspect(aspect).fields
    # an enriched field (a "_" key) counts only when present: declaring an enrichment does
    # not change the hash of a record that has none (no re-embedding on upgrade)
    values = {f: record.get(f) for f in fields if not f.startswith("_") or record.get(f)}
    blob = json.dumps(values, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def record_hash(record: dict[str, Any]) -> str:
    """SHA-256 of the whole record (canonical JSON): detects payload-only changes."""
    blob = json.dumps(record, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def contains_phrase(text: str, phrase: str) -> bool:
    """Whether ``phrase`` occurs in ``text`` as whole words, case-insensitively ("pair
    programmer" is not in "pair programmers")."""
    pattern = r"(?<!\w)" + re.escape(phrase.lower()) + r"(?!\w)"
    return re.search(pattern, text.lower()) is not None
