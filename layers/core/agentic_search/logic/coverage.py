"""Coverage grading: which parts of the request the selected evidence explicitly supports.

Deterministic and conservative: a target counts as covered only when some selected evidence
supports it literally (a structured value that satisfies the constraint, a preference value
present in the field, a quoted phrase verbatim, a query term among the evidence's stems).
An LLM grader can replace :func:`grade_coverage` behind the :class:`CoverageGrader` protocol.
"""

from __future__ import annotations

import re
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from agentic_search.logic.filters import matches
from agentic_search.logic.function_words import GOAL_WORDS, QUESTION_WORDS
from agentic_search.logic.schema import DomainSchema
from agentic_search.logic.text import Analyzer, contains_phrase, field_text
from agentic_search.wire import (
    Contradiction,
    Coverage,
    CoverageItem,
    CoverageTarget,
    Evidence,
    IntentState,
)


class CoverageGrader(Protocol):
    """Grades selected evidence against the request's targets."""

    name: str

    def grade(self, targets: Sequence[CoverageTarget], evidence: Sequence[Evidence]) -> Coverage:
        """The coverage map of ``evidence`` for ``targets``."""
        ...


#: The most query terms graded as targets. A question or a keyword query has fewer (SciFact
#: and HotpotQA queries: at most 23 terms); a pasted paragraph has a hundred or more, which
#: no evidence pack covers, so every such query would look unanswered and run every round.
MAX_TERM_TARGETS = 24


def coverage_targets(
    intent: IntentState, schema: DomainSchema, analyzer: Analyzer
) -> list[CoverageTarget]:
    """What the evidence should support, from the intent.

    * each hard constraint (``kind="constraint"``, ``must`` as stated);
    * each soft vocabulary match mapped to a record field (``preference``: any of the values);
    * each quoted phrase / must-preserve term (``phrase``, must);
    * each record the query names (``entity``, must): covered only by that record's own
      evidence, never by another record that mentions it;
    * each remaining analysed query term (``term``), leaving out terms of constraint phrases,
      of the reference and excluded tools, of the named records, of the preference values
      already targeted, and question and function words (:data:`QUESTION_WORDS`). A long
      query (a pasted paragraph) keeps its :data:`MAX_TERM_TARGETS` key terms: those it says
      most often, ties in the order said.
    """
    targets: list[CoverageTarget] = []
    skip: set[str] = set()
    ref_id = intent.reference_tool if intent.primary_goal == "alternative-to" else None
    named: dict[str, list[str]] = {}
    surfaces: dict[str, str] = {}
    for link in intent.linked:
        if link.id in intent.excluded_tools or link.id == ref_id:
            continue
        named.setdefault(link.name, []).append(link.id)
        surfaces.setdefault(link.name, link.surface)
    for name, ids in named.items():
        targets.append(
            CoverageTarget(kind="entity", label=name, values=list(ids), text=name, must=True)
        )
        skip.update(analyzer.terms(f"{name} {surfaces[name]}"))
    for flt in intent.constraints:
        targets.append(
            CoverageTarget(kind="constraint", label=flt.label(), filter=flt, must=flt.must)
        )
        skip.update(analyzer.terms(flt.origin or ""))
        skip.update(analyzer.terms(field_text(flt.value)))
    for vocab, values in intent.matches.items():
        fname = schema.vocabulary_fields.get(vocab)
        if not fname or not values:
            continue
        targets.append(
            CoverageTarget(
                kind="preference",
                label=f"{fname} ~ {' | '.join(map(str, values))}",
                field=fname,
                values=list(values),
            )
        )
        for v in values:
            skip.update(analyzer.terms(str(v)))
        synonyms = schema.vocabularies.get(vocab, {})
        for v in values:
            for syn in synonyms.get(str(v), []):
                skip.update(analyzer.terms(syn))
    ref = (intent.reference_tool_name or "").lower()
    named_surfaces = {s.lower() for s in surfaces.values()} | {n.lower() for n in named}
    for phrase in intent.must_preserve_terms:
        if phrase.lower() == ref:
            continue  # "alternative to Cursor": evidence about Cursor itself is not wanted
        if phrase.lower() in named_surfaces:
            continue  # a named record: its own target above
        targets.append(CoverageTarget(kind="phrase", label=f'"{phrase}"', text=phrase, must=True))
        skip.update(analyzer.terms(phrase))
    for name in [intent.reference_tool_name or "", intent.reference_tool or ""]:
        skip.update(analyzer.terms(name))
    for tool in intent.excluded_tools:
        skip.update(analyzer.terms(tool.replace("-", " ")))
    skip.update(analyzer.terms(" ".join(GOAL_WORDS)))
    skip.update(analyzer.terms(" ".join(QUESTION_WORDS)))
    terms = [t for t in dict.fromkeys(intent.keywords) if t not in skip and len(t) >= 3]
    if len(terms) > MAX_TERM_TARGETS:
        said = Counter(analyzer.terms(intent.query))
        keep = set(sorted(terms, key=lambda t: -said[t])[:MAX_TERM_TARGETS])  # stable: ties
        terms = [t for t in terms if t in keep]
    targets.extend(CoverageTarget(kind="term", label=t, text=t) for t in terms)
    return targets


#: Evidences one :class:`EvidenceMatcher` keeps what it read of (least recently used out).
MATCHER_CACHE_ENTRIES = 4096


_WORD_CHAR = re.compile(r"\w")  # the analyzer's word characters (its tokens are \w runs)
_WORD_RUN = re.compile(r"\w*")


@dataclass(slots=True)
class _Read:
    """What a matcher read of one evidence: its title and text (the cache is valid while they
    are unchanged), the two lowercased as the analyzer reads them, their analysed terms once
    every term was needed, and the answers given."""

    title: str | None
    text: str
    lowered: str
    terms: frozenset[str] | None = None
    has_term: dict[str, bool] = field(default_factory=dict)  # stem -> answer
    has_phrase: dict[str, bool] = field(default_factory=dict)  # phrase -> answer


class EvidenceMatcher:
    """Decides whether one evidence supports one target.

    What it reads of an evidence's title and text (the text lowercased, the answers, the
    analysed terms when needed) is cached per evidence id together with the title and text
    it came from, and used only while those are unchanged: the matcher lives as long as the
    process (a warm Lambda, ``serve``), and a record re-written under the same id must be read
    anew. At most :data:`MATCHER_CACHE_ENTRIES` evidences are kept (least recently used out),
    so a long-running server's memory stays bounded.

    A term target (a stem) is looked for in the words that start with the stem less its last
    ``analyzer.stem_slack`` characters (:data:`~agentic_search.logic.text.STEM_SLACK`,
    :func:`has_term`): a missing term costs one substring search and the analysis of the
    few words found, not the analysis of the whole text (a long abstract's: docs/benchmarks.md);
    the answer is the analysis's
    (``stem in terms(ev)``). An analyzer whose ``stem_slack`` is None (not Snowball English)
    has every text analysed whole.
    """

    def __init__(self, schema: DomainSchema, analyzer: Analyzer) -> None:
        self.schema = schema
        self.analyzer = analyzer
        self.stem_slack = analyzer.stem_slack
        self._terms: OrderedDict[str, _Read] = OrderedDict()

    def _read(self, ev: Evidence) -> _Read:
        got = self._terms.get(ev.id)
        if got is None or got.title != ev.title or got.text != ev.text:
            got = _Read(ev.title, ev.text, f"{ev.title or ''} {ev.text}".lower())
            self._terms[ev.id] = got
        self._terms.move_to_end(ev.id)
        if len(self._terms) > MATCHER_CACHE_ENTRIES:
            self._terms.popitem(last=False)
        return got

    def terms(self, ev: Evidence) -> frozenset[str]:
        """Analysed terms of the evidence's title and text."""
        read = self._read(ev)
        if read.terms is None:
            read.terms = frozenset(self.analyzer.terms(f"{ev.title or ''} {ev.text}"))
        return read.terms

    def has_term(self, ev: Evidence, stem: str) -> bool:
        """Whether ``stem`` is among the analysed terms of ``ev``'s title and text
        (``stem in terms(ev)``), analysing only the words that can have it: those that start
        with ``stem[:-stem_slack]`` (all of them when that is empty)."""
        return self._term(self._read(ev), ev, stem)

    def _term(self, read: _Read, ev: Evidence, stem: str) -> bool:
        got = read.has_term.get(stem)
        if got is None:
            got = read.has_term[stem] = self._has_term(read, ev, stem)
        return got

    def _has_term(self, read: _Read, ev: Evidence, stem: str) -> bool:
        if read.terms is not None or self.stem_slack is None:
            return stem in self.terms(ev)
        prefix = stem[: len(stem) - self.stem_slack]
        if not prefix:
            return stem in self.terms(ev)
        low = read.lowered
        at = low.find(prefix)
        while at != -1:
            if at and _WORD_CHAR.match(low, at - 1):  # inside a word, not at its start
                at = low.find(prefix, at + 1)
                continue
            end = _WORD_RUN.match(low, at).end()  # type: ignore[union-attr]  # \w* always matches
            if stem in self.analyzer.terms(low[at:end]):  # the word's own analysis
                return True
            at = low.find(prefix, max(end, at + 1))  # past the word (a target not of \w: on)
        return False

    def supports(self, target: CoverageTarget, ev: Evidence) -> bool:
        """Whether ``ev`` explicitly supports ``target``."""
        return self._supports(target, ev, None)

    def supported(self, targets: Sequence[CoverageTarget], ev: Evidence) -> list[bool]:
        """``[supports(t, ev) for t in targets]``, with what was read of ``ev`` looked up
        once (a grading asks every target of every piece of evidence)."""
        read = self._read(ev) if any(t.kind in ("term", "phrase") for t in targets) else None
        return [self._supports(t, ev, read) for t in targets]

    def _supports(self, target: CoverageTarget, ev: Evidence, read: _Read | None) -> bool:
        if target.kind == "constraint" and target.filter is not None:
            return target.filter.field in ev.fields and matches(
                self.schema, target.filter, ev.fields
            )
        if target.kind == "preference" and target.field:
            have = ev.fields.get(target.field)
            items = have if isinstance(have, list) else [have]
            return any(v in items for v in target.values)
        if target.kind == "phrase" and target.text:
            read = read or self._read(ev)
            got = read.has_phrase.get(target.text)
            if got is None:
                got = read.has_phrase[target.text] = contains_phrase(
                    f"{ev.title or ''} {ev.text}", target.text
                )
            return got
        if target.kind == "term" and target.text:
            return self._term(read or self._read(ev), ev, target.text)
        if target.kind == "entity":
            return ev.doc_id in target.values or ev.id in target.values
        return False


def find_contradictions(
    evidence: Sequence[Evidence], title_key: bool = True
) -> list[Contradiction]:
    """Fields on which evidence about the same document disagrees.

    Evidence is grouped by ``doc_id`` and, when ``title_key``, also by lowercased title (two
    catalog entries for the same product). Values are compared as text; a field missing from
    one piece is not a disagreement.
    """
    groups: dict[str, list[Evidence]] = defaultdict(list)
    for ev in evidence:
        groups[f"doc:{ev.doc_id}"].append(ev)
        if title_key and ev.title:
            groups[f"title:{ev.title.strip().lower()}"].append(ev)
    out: list[Contradiction] = []
    seen: set[tuple[str, str]] = set()
    for key, group in sorted(groups.items()):
        ids = {e.id for e in group}
        if len(ids) < 2:
            continue
        fields = sorted({f for e in group for f in e.fields})
        for fname in fields:
            values: dict[str, list[str]] = defaultdict(list)
            for e in group:
                if fname in e.fields and e.fields[fname] is not None:
                    values[field_text(e.fields[fname])].append(e.id)
            if len(values) > 1:
                doc = key.split(":", 1)[1]
                sig = (",".join(sorted(ids)), fname)
                if sig in seen:
                    continue
                seen.add(sig)
                out.append(Contradiction(doc_id=doc, field=fname, values=dict(values)))
    return out


class DeterministicGrader:
    """The default grader (see the module docstring).

    ``confidence = covered_weight * weighted_coverage + quality_weight * quality``, less
    ``contradiction_penalty`` per contradiction (floored at 0), the three of the schema's
    ``tuning.coverage`` (:class:`~agentic_search.logic.tuning.CoverageTuning`), where
    ``weighted_coverage`` counts each target at its kind's weight there (1.0 when there are
    no targets), and ``quality`` is the share of selected evidence that two or more retrieval
    modes (dense, sparse, structured) found. No evidence: confidence 0.
    """

    name = "deterministic"

    def __init__(self, schema: DomainSchema, matcher: EvidenceMatcher) -> None:
        self.schema = schema
        self.matcher = matcher
        self.tuning = schema.tuning.coverage

    def grade(self, targets: Sequence[CoverageTarget], evidence: Sequence[Evidence]) -> Coverage:
        """The coverage map of ``evidence`` for ``targets``."""
        items = []
        rows = [self.matcher.supported(targets, e) for e in evidence]  # each evidence read once
        for j, t in enumerate(targets):
            ids = [e.id for e, row in zip(evidence, rows, strict=True) if row[j]]
            items.append(
                CoverageItem(
                    kind=t.kind, label=t.label, covered=bool(ids), evidence=ids, must=t.must
                )
            )
        if not evidence:
            return Coverage(items=items, quality=0.0, confidence=0.0, grader=self.name)
        tuning = self.tuning
        total = sum(tuning.weight(t.kind) for t in targets)
        got = sum(tuning.weight(t.kind) for t, i in zip(targets, items, strict=True) if i.covered)
        ratio = got / total if total else 1.0
        quality = sum(1 for e in evidence if _modes(e) >= 2) / len(evidence)
        contradictions = find_contradictions(evidence)
        confidence = max(
            0.0,
            tuning.covered_weight * ratio
            + tuning.quality_weight * quality
            - tuning.contradiction_penalty * len(contradictions),
        )
        return Coverage(
            items=items,
            quality=round(quality, 4),
            confidence=round(min(1.0, confidence), 4),
            contradictions=contradictions,
            grader=self.name,
        )


def _modes(ev: Evidence) -> int:
    if ev.provenance is None:
        return 0
    return len({h.source.split(":", 1)[0] for h in ev.provenance.hits})
