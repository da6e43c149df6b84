"""Knowing when nothing fits, per candidate: each candidate's own relevance evidence decides
whether it is *supported*, and the answer-level verdict summarises them.

A candidate's evidence (:class:`CandidateEvidence`):

* its cosine to the query (``relevance``: the absolute match; fused scores are relative and
  always start at 1);
* whether it holds a vocabulary value the query asked for (a category, a capability: the
  query's words linked to the catalog's own terms);
* whether it contains every searchable word of the query (a lexical match the embedding may
  not see: a rare term, a long document's later passage);
* whether it is a record the query named (an entity link).

Its cosine is the best of the dense sources that scored it with the query's own text (the
main aspect's, or another aspect's: a job phrased as a task matches a record's use cases
better than its description; :func:`best_cosine`).

How the query reads against the catalog (:class:`QueryReading`, from which of its content
words some record holds) sets the cosine a candidate needs:

* half of its content words in no record, written in letters outside ASCII (another
  language): the embedder reads the query poorly and no keyword can match, so a low cosine
  is no evidence of absence: ``unread_relevance``;
* the catalog reads the query but a content word is in no record ("backup", "Spotify",
  "sprint"): the need may be one the catalog does not cover, so a candidate needs a good
  match (``missing_word_relevance``) and the coverage of the other words does not make an
  answer;
* otherwise ``candidate_relevance``.

A candidate is **supported** when it was named, holds every query word, holds an asked
vocabulary value, or its cosine clears that threshold. The answer:

* ``none`` ("no good match"): no candidate among the first :data:`SUPPORT_WINDOW` is
  supported and the evidence's coverage is under ``min_coverage`` (or a content word is
  in no record): nothing is returned;
* otherwise the candidates are returned but those with no evidence at all (cosine under
  ``candidate_floor``, no vocabulary value, not every word, not named) are withheld: a good
  answer is not padded with unrelated records;
* the summary verdict: ``good`` when records the query named were found, or the best cosine
  clears ``min_relevance`` and the coverage ``min_coverage``; ``weak`` otherwise.

``score`` in [0, 1] is the mean of ``relevance / min_relevance`` and ``coverage /
min_coverage``, each capped at 1 (1.0 for named records found). A query by example alone (no
embedded text: "alternative to Pinecone") has no relevance to read: it is judged by coverage
alone and nothing is withheld. The thresholds are the domain schema's ``quality``, each
schema file says on what data they were chosen.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from agentic_search.logic.function_words import GOAL_WORDS, PRONOUNS, QUESTION_WORDS
from agentic_search.logic.keywords import as_written
from agentic_search.logic.schema import QualitySpec
from agentic_search.wire import AnswerQuality, SourceHit

#: An answer needs a supported candidate among its first this many.
SUPPORT_WINDOW = 10

#: A query is unread when at least this share of its content words is in no record and
#: one of those is written with letters outside ASCII (an accent, another script): the
#: catalog and the embedder read English. An English need the catalog lacks has words in no
#: record too ("3D printing slicer for my printer": three of four), but it is read: its
#: missing words say the catalog does not cover it.
UNREAD_SHARE = 0.5

#: Query words that say nothing about the need whether a record holds them or not.
_NOT_CONTENT = frozenset(w.lower() for w in (*GOAL_WORDS, *QUESTION_WORDS, *PRONOUNS))


@dataclass(frozen=True)
class QueryReading:
    """Which of the query's content words (its keyword terms, analysed, less goal, question
    and function words and numbers) some record of the catalog holds: ``words`` all of
    them, ``unknown`` those no record holds.

    ``unread``: at least :data:`UNREAD_SHARE` of the words are unknown and one of those has
    a letter outside ASCII (the query is in another language than the catalog's);
    ``missing``: read, and some unknown word is not ``incidental`` (a word whose own
    embedding is about as unrelated to the query's as an unsupported record is: "figure"
    in "figure out which microservice is making our requests slow"). ``written``: each
    word's form as the query writes it, what messages show ("bakeries" for "bakeri")."""

    words: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    incidental: tuple[str, ...] = ()
    written: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def unread(self) -> bool:
        """At least :data:`UNREAD_SHARE` of the content words are in no record, one of them
        written with a letter outside ASCII."""
        if not self.words or len(self.unknown) < UNREAD_SHARE * len(self.words):
            return False
        return any(not w.isascii() for w in self.unknown)

    @property
    def missing(self) -> bool:
        """The query is read, but one of its content words that carries the need is in no
        record."""
        return not self.unread and any(w not in self.incidental for w in self.unknown)


def content_words(terms: Iterable[str], analyzed_function_words: Iterable[str] = ()) -> list[str]:
    """The content words of a query's analysed keyword ``terms``, in order, each once: less
    numbers and the goal, question and function words (given raw and, as
    ``analyzed_function_words``, through the domain's analyzer)."""
    skip = _NOT_CONTENT | set(analyzed_function_words)
    return [t for t in dict.fromkeys(terms) if t not in skip and not t.isdigit()]


def function_word_text() -> str:
    """The goal, question and function words as one text, for the domain's analyzer."""
    return " ".join(sorted(_NOT_CONTENT))


def read_query(
    words: Sequence[str],
    known: set[str] | None,
    word_relevance: Mapping[str, float] | None = None,
    min_word_relevance: float = -1.0,
    written: Mapping[str, str] | None = None,
) -> QueryReading:
    """The reading of a query whose content words are ``words`` when the index holds
    ``known`` of them (None: the index cannot tell, every word taken as held); an unknown
    word whose cosine to the query (``word_relevance``, when measured) is under
    ``min_word_relevance`` is incidental. ``written``: term -> the word as the query
    writes it (:meth:`~agentic_search.logic.text.Analyzer.written_forms`), for messages."""
    shown = dict(written or {})
    if known is None:
        return QueryReading(words=tuple(words), written=shown)
    unknown = tuple(w for w in words if w not in known)
    scores = word_relevance or {}
    incidental = tuple(w for w in unknown if w in scores and scores[w] < min_word_relevance)
    return QueryReading(words=tuple(words), unknown=unknown, incidental=incidental, written=shown)


def best_cosine(relevance: float | None, hits: Iterable[SourceHit]) -> float | None:
    """A candidate's cosine to the query: the best of ``relevance`` (its main aspect's) and
    the raw scores of its dense hits that embedded the query's text (``aspect`` set,
    ``query_vector_source`` "query_text": a dense source's raw score is that cosine); None
    when neither was measured."""
    scores = [relevance] if relevance is not None else []
    scores += [h.raw_score for h in hits if h.aspect and h.query_vector_source == "query_text"]
    return round(max(scores), 4) if scores else None


@dataclass(frozen=True)
class CandidateEvidence:
    """One candidate's own relevance evidence: ``relevance`` its cosine to the query (None
    when not measured), ``vocabulary`` it holds a vocabulary value the query asked for,
    ``lexical`` it contains every query word, ``named`` the query named it."""

    id: str
    relevance: float | None = None
    vocabulary: bool = False
    lexical: bool = False
    named: bool = False


def _ratio(value: float, threshold: float) -> float:
    return 1.0 if threshold <= 0 else max(0.0, min(1.0, value / threshold))


def needed_relevance(spec: QualitySpec, reading: QueryReading | None = None) -> float:
    """The cosine a candidate needs for a query read as ``reading`` (see the module
    docstring): ``unread_relevance``, ``missing_word_relevance`` or ``candidate_relevance``."""
    if reading is not None and reading.unread and spec.unread_relevance is not None:
        return spec.unread_relevance
    if reading is not None and reading.missing and spec.missing_word_relevance is not None:
        return spec.missing_word_relevance
    return spec.candidate_relevance


def supported(
    spec: QualitySpec, ev: CandidateEvidence, reading: QueryReading | None = None
) -> bool:
    """Whether ``ev``'s own evidence says it answers the query read as ``reading`` (see the
    module docstring)."""
    if ev.named or ev.lexical or ev.vocabulary:
        return True
    return ev.relevance is not None and ev.relevance >= needed_relevance(spec, reading)


def above_floor(
    spec: QualitySpec, ev: CandidateEvidence, reading: QueryReading | None = None
) -> bool:
    """Whether ``ev`` may be returned beside supported candidates: supported, not measured,
    or its cosine at least ``candidate_floor``."""
    if supported(spec, ev, reading) or ev.relevance is None:
        return True
    return ev.relevance >= spec.candidate_floor


def answer_quality(
    spec: QualitySpec,
    evidence: Sequence[CandidateEvidence],
    coverage: float,
    reading: QueryReading | None = None,
) -> AnswerQuality:
    """The summary verdict of a ranking whose candidates (in rank order) have ``evidence``,
    whose evidence pack has ``coverage`` confidence, for a query read as ``reading`` (see
    the module docstring)."""
    named = [ev.id for ev in evidence if ev.named]
    if named:
        return AnswerQuality(
            verdict="good", score=1.0, reason=f"named records found: {', '.join(named)}"
        )
    measured = [ev.relevance for ev in evidence if ev.relevance is not None]
    cov_ok = coverage >= spec.min_coverage
    if not measured:
        score = _ratio(coverage, spec.min_coverage)
        return AnswerQuality(
            verdict="good" if cov_ok else "weak",
            score=round(score, 3),
            reason=f"coverage {coverage:.2f} (no query text embedded to measure relevance)",
        )
    top = max(measured)
    rel_ok = top >= spec.min_relevance
    score = round(
        0.5 * _ratio(top, spec.min_relevance) + 0.5 * _ratio(coverage, spec.min_coverage), 3
    )
    window = evidence[:SUPPORT_WINDOW]
    backed = [ev for ev in window if supported(spec, ev, reading)]
    detail = (
        f"best match {top:.3f} {'>=' if rel_ok else '<'} {spec.min_relevance:.3f}, "
        f"coverage {coverage:.2f} {'>=' if cov_ok else '<'} {spec.min_coverage:.2f}, "
        f"{len(backed)} of the first {len(window)} supported by their own evidence"
    )
    if reading is not None and spec.reads_words and reading.unknown:
        unknown = [w for w in reading.unknown if w not in reading.incidental][:5]
        said = ", ".join(as_written(unknown, reading.written))
        if reading.unread:
            detail += (
                f" (cosine {needed_relevance(spec, reading):.2f}: most words in no record: {said})"
            )
        else:
            detail += f" (cosine {needed_relevance(spec, reading):.2f}: in no record: {said})"
            if spec.missing_word_relevance is not None:
                cov_ok = False  # the other words' coverage is not the need's
    if not backed and not cov_ok:
        return AnswerQuality(verdict="none", score=score, reason=detail)
    return AnswerQuality(
        verdict="good" if rel_ok and cov_ok else "weak", score=score, reason=detail
    )


def ids_to_return(
    spec: QualitySpec,
    verdict: AnswerQuality,
    evidence: Sequence[CandidateEvidence],
    reading: QueryReading | None = None,
) -> list[str]:
    """The ids to return, in order: none on "no good match"; otherwise those above the
    floor (:func:`above_floor`); all of them when no relevance was measured."""
    if verdict.verdict == "none":
        return []
    if all(ev.relevance is None for ev in evidence):
        return [ev.id for ev in evidence]
    return [ev.id for ev in evidence if above_floor(spec, ev, reading)]


__all__ = [
    "SUPPORT_WINDOW",
    "UNREAD_SHARE",
    "CandidateEvidence",
    "QueryReading",
    "above_floor",
    "answer_quality",
    "best_cosine",
    "content_words",
    "function_word_text",
    "ids_to_return",
    "needed_relevance",
    "read_query",
    "supported",
]
