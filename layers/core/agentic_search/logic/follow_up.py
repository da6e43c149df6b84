"""Follow-up queries read against the conversation (``SearchRequest.history``), by rules.

A conversation is folded turn by turn into a :class:`Context`: the need's text, the records
excluded, the filters added, the preferences dropped, a reference record and the ids shown.
Each turn is read against the context before it (:func:`read_turn`), in this order, the first
that applies winning:

1. a reference to a shown result: "more like the second one", "something like #3" -> the
   previous need, like that record (its stored vectors, as "like Cursor" does);
2. an exclusion: "not that one", "without Cursor", "drop the first one" -> the previous need
   without those records;
3. "cheaper" (with no record named) -> the previous need under a price bound: the median price
   of the priced results shown (the first ten);
4. "what about ..." / "how about ..." / "and for ...": with a value of a need vocabulary (the
   schema's ``capabilities.vocabularies``: what a record is or does) or a named record, a new
   need keeping the previous hard constraints; else the previous need with that preference
   (a constraint or preference on the same field replaces the previous one);
5. a filter: an anaphoric cue ("which of those", "the free ones", "them"), or a cue such as
   "only", "just" or "that run on" with no new need words, or a query of constraints alone
   ("free", "on Linux") -> the previous need plus the filter, searched within the previous
   results first (:attr:`~agentic_search.wire.FollowUp.within`);
6. otherwise the query stands alone and replaces the context.

The reading is the condensation a chat engine makes of a follow-up (LlamaIndex's condense
question, Azure AI Search's agentic retrieval over chat history), made by rules: the text to
search (``readAs``) is the previous need with the follow-up's own words, read again by the
intent extractor, so every constraint phrase the rules know works in a follow-up too.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agentic_search.logic.intent import normalize_query, reference_profile
from agentic_search.logic.intent_overrides import with_filters, without
from agentic_search.logic.schema import DomainSchema
from agentic_search.logic.text import default_analyzer
from agentic_search.wire import Filter, FollowUp, IntentState, Turn

#: How many shown results the "cheaper" bound is taken from.
CHEAPER_FROM = 10

_ORDINALS = {
    "first": 0, "1st": 0, "top": 0, "that": 0, "this": 0, "it": 0,
    "second": 1, "2nd": 1, "third": 2, "3rd": 2, "fourth": 3, "4th": 3, "fifth": 4,
    "5th": 4, "sixth": 5, "6th": 5, "seventh": 6, "7th": 6, "eighth": 7, "8th": 7,
    "ninth": 8, "9th": 8, "tenth": 9, "10th": 9, "last": -1,
}  # fmt: skip
_ORDINAL = (
    r"(?:#\s*(?P<num>\d{1,2})|(?:number|no\.?)\s*(?P<num2>\d{1,2})|(?:the\s+)?(?P<word>"
    + "|".join(sorted((re.escape(k) for k in _ORDINALS), key=len, reverse=True))
    + r"))(?:\s+(?:one|result|tool|option|pick|hit|entry|app))?"
)
#: "more like the second one", "something like #3", "similar to the first result"
REFERENCE = re.compile(
    r"^(?:(?:show\s+me|give\s+me|find|any|i\s+want)\s+)?(?:more|something|anything|others?|"
    r"ones?|tools?|stuff|options?|alternatives?)?\s*(?:(?:like|similar\s+to|to)\s+)"
    + _ORDINAL
    + r"\s*$"
)
#: "not that one", "without Cursor", "drop the first one", "anything but Copilot"
EXCLUDE = re.compile(
    r"^(?:(?:no|ok(?:ay)?|hmm)[,.!]?\s+)?(?:but\s+)?(?:not|no|without|except|excluding|minus|"
    r"drop|remove|skip|hide|other\s+than|anything\s+but|everything\s+but|i\s+don'?t\s+want|"
    r"leave\s+out|forget)\s+(?P<rest>.+)$"
)
_ORDINAL_ONLY = re.compile(r"^" + _ORDINAL + r"$")
#: what may trail an exclusion's object: "not that one either", "without Cursor too"
_TRAILING = re.compile(r"(?:[\s,.!?]+(?:either|too|as\s+well|also|again|please))+[\s,.!?]*$")
CHEAPER = re.compile(
    r"\b(?:cheaper|less\s+expensive|more\s+affordable|lower[\s-]priced|cheapest|cost(?:s)?"
    r"\s+less|lower\s+price)\b"
)
#: "what about for teams?", "how about image generation", "and for Windows?"
CHANGE = re.compile(
    r"^(?:(?:and|ok(?:ay)?|so|now|but)[,]?\s+)?(?:(?:what|how)\s+about|what\s+if\s+(?:it'?s|i\s+"
    r"want)|same\s+(?:but\s+)?(?:for|on)|instead)\s+(?P<rest>.+)$|^and\s+(?P<rest2>(?:for|on|"
    r"with|in)\s+.+)$"
)
#: cues that point back at the results: "which of those", "the free ones", "them"
ANAPHORA = re.compile(
    r"\b(?:which|what|any|some|all|none)\s+(?:of\s+)?(?:those|these|them|the\s+ones)\b|"
    r"\b(?:those|these|them|ones|one\s+of\s+them)\b"
)
#: weaker cues: a follow-up only when no new need comes with them
FILTER_CUE = re.compile(
    r"^(?:only|just|but\s+only|must\s+be|should\s+be|has\s+to\s+be|have\s+to\s+be|needs?\s+to"
    r"|preferably|ideally|that|which|with|having|also|and|but|any|is\s+there\s+one|are\s+there"
    r"\s+any|is\s+any|are\s+any|do\s+any|does\s+any|one)\b"
)
#: words of a follow-up's phrasing that name nothing a record holds (stems, as the analyzer
#: writes them, are made from these at first use)
_FILLER = (
    "only just those these them ones one which what any some all show give find want need "
    "please thanks also and but that run runs work works support supports available have "
    "has having with must should be are is do does there tool tools option options app apps "
    "stuff something anything thing things more instead same ok okay so now result results "
    "again list me my i us our we let see of the a an for on in to it its also even actually"
)


@dataclass(frozen=True)
class Context:
    """A conversation folded up to one turn: the ``need`` (the text of the turn that set it),
    the ``extra`` words the follow-ups added to it ("free", "for teams"), the ``exclude`` ids,
    the ``filters`` added (each replacing the intent's own on its field and operator), the
    ``drop`` names (``SearchRequest.drop``'s forms), the ``reference`` record and its name,
    the ``ids`` shown for the turn and its 1-based ``turn``."""

    need: str
    extra: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    filters: tuple[Filter, ...] = ()
    drop: tuple[str, ...] = ()
    reference: str | None = None
    reference_name: str | None = None
    ids: tuple[str, ...] = ()
    turn: int = 1

    @property
    def text(self) -> str:
        """What the extractors read: the need, the added words and "like <reference>"."""
        like = [f"like {self.reference_name}"] if self.reference_name else []
        return " ".join([self.need, *self.extra, *like])


@dataclass
class Reading:
    """How a query was read: the :class:`Context` it makes (what to search) and the
    :class:`~agentic_search.wire.FollowUp` that reports it (``kept``, ``added`` and
    ``dropped`` are filled by :func:`report`)."""

    context: Context
    follow_up: FollowUp
    within: list[str] = field(default_factory=list)


Extract = Callable[[str], IntentState]
Record = Callable[[str], Mapping[str, Any] | None]


def fold(history: Sequence[Turn], query: str, extract: Extract, record: Record,
         schema: DomainSchema) -> Reading:  # fmt: skip
    """Read ``query`` against ``history`` (oldest first, at least one turn): each earlier
    turn is read against the one before it (the first stands alone), then ``query`` against
    the last; the :class:`Reading` of ``query``, its report filled in."""
    context = Context(need=history[0].query, ids=tuple(history[0].ids), turn=1)
    for n, turn in enumerate(history[1:], start=2):
        reading = read_turn(context, turn.query, extract, record, schema)
        context = replace(reading.context, ids=tuple(turn.ids), turn=n)
    reading = read_turn(context, query, extract, record, schema)
    report(reading, context, extract, record, schema)
    return reading


def read_turn(context: Context, query: str, extract: Extract, record: Record,
              schema: DomainSchema) -> Reading:  # fmt: skip
    """Read one turn against ``context`` (the module docstring's order); the new context's
    ``ids`` are left for the caller to set (they are the results shown for this turn)."""
    q = _normalized(query)
    turn = context.turn
    base = replace(context, ids=(), turn=turn + 1)

    def made(kind: str, ctx: Context, cue: str | None, within: bool = False) -> Reading:
        up = FollowUp(kind=kind, turn=turn, read_as=ctx.text, cue=cue)  # type: ignore[arg-type]
        return Reading(ctx, up, list(context.ids) if within else [])

    m = REFERENCE.match(q)
    if m is not None:
        rid = _nth(context.ids, m)
        if rid is not None:
            name = _name(record, rid, schema)
            ctx = replace(base, reference=rid, reference_name=name)
            return made("reference", ctx, m.group(0))
    m = EXCLUDE.match(q)
    if m is not None:
        rest = _TRAILING.sub("", " " + m.group("rest")).strip(" ,.!?")
        om = _ORDINAL_ONLY.match(rest)
        ids = [_nth(context.ids, om)] if om is not None else _named_ids(extract(rest))
        ids = [i for i in ids if i is not None]
        if ids:
            ctx = replace(base, exclude=_unique(context.exclude, ids))
            return made("exclude", ctx, m.group(0), within=True)
    if CHEAPER.search(q) and not _named_ids(extract(query)):
        bound = _price_bound(context.ids, record, schema)
        if bound is not None:
            ctx = replace(base, filters=(*_replacing(context.filters, [bound]), bound))
            return made("cheaper", ctx, CHEAPER.search(q).group(0), within=True)  # type: ignore[union-attr]
    m = CHANGE.match(q)
    if m is not None:
        rest = (m.group("rest") or m.group("rest2") or "").strip()
        if rest:
            return _change(context, base, rest, m.group(0), extract, schema, made)
    anaphora = ANAPHORA.search(q)
    cue = FILTER_CUE.match(q)
    if anaphora is not None or cue is not None or len(q.split()) <= 4:
        read = extract(query)
        new_need = _need_words(read, schema)
        something = bool(read.constraints or _plain_matches(read))
        if (
            anaphora is not None
            or (cue is not None and not new_need)
            or (not new_need and something)
        ):
            ctx = _added(base, context, _own_words(q), read, extract)
            word = (anaphora or cue).group(0) if (anaphora or cue) else None  # type: ignore[union-attr]
            return made("filter", ctx, word, within=True)
    ctx = Context(need=query, turn=turn + 1)
    up = FollowUp(kind="standalone", turn=0, read_as=query)
    return Reading(ctx, up)


def _change(context: Context, base: Context, rest: str, cue: str, extract: Extract,
            schema: DomainSchema, made: Callable[..., Reading]) -> Reading:  # fmt: skip
    """ "what about X": a new need (X names a need vocabulary value or a record) keeping the
    previous hard constraints, else the previous need with X's preference."""
    read = extract(rest)
    need_vocabs = set(schema.capabilities.vocabularies) if schema.capabilities else set()
    previous = extract(context.text)
    new_values = {
        (v, x)
        for v, xs in _plain_matches(read).items()
        if v in need_vocabs
        for x in xs
        if x not in previous.matches.get(v, [])
    }
    if new_values or _named_ids(read):
        kept = _replacing(previous.constraints, read.constraints)
        carried = (*_replacing(context.filters, read.constraints), *kept)
        ctx = Context(need=rest, exclude=context.exclude, filters=_dedupe(carried), turn=base.turn)
        return made("need", ctx, cue)
    drop = list(context.drop)
    for vocab in _plain_matches(read):
        drop += [f"prefer:{vocab}={v}" for v in previous.matches.get(vocab, [])]
    ctx = _added(replace(base, drop=tuple(dict.fromkeys(drop))), context, rest, read, extract)
    return made("preference", ctx, cue)


def _added(base: Context, context: Context, words: str, read: IntentState,
           extract: Extract) -> Context:  # fmt: skip
    """``base`` with ``words`` after the need (the earlier added words that read a value of
    the same vocabulary or a constraint on the same field left out: "on Linux" replaces "on
    Windows") and ``read``'s constraints replacing the context's on the same field and
    operator."""
    fields = {f.field for f in read.constraints} | set(_plain_matches(read))
    kept = []
    for old in context.extra:
        was = extract(old)
        if fields & ({f.field for f in was.constraints} | set(_plain_matches(was))):
            continue
        kept.append(old)
    extra = (*kept, words) if words else tuple(kept)
    filters = (*_replacing(context.filters, read.constraints), *read.constraints)
    return replace(base, extra=extra, filters=_dedupe(filters))


def _own_words(q: str) -> str:
    """A filter follow-up's own words, its phrasing left out: "only the free ones" ->
    "free", "which of those run on linux" -> "run on linux"."""
    text = ANAPHORA.sub(" ", q)
    text = FILTER_CUE.sub(" ", text.strip(), count=1)
    words = [w for w in text.split() if w not in {"the", "a", "an", "ones", "one"}]
    return " ".join(words)


def apply(intent: IntentState, context: Context, record: Record,
          schema: DomainSchema) -> IntentState:  # fmt: skip
    """``intent`` (the extractor's reading of ``context.text``) with the context's overrides:
    the preferences dropped, the filters added, the exclusions and the reference record."""
    out = without(intent, context.drop) if context.drop else intent.model_copy(deep=True)
    if context.filters:
        out = with_filters(out, context.filters)
    for rid in context.exclude:
        if rid not in out.excluded_tools and rid != context.reference:
            out.excluded_tools.append(rid)
    if context.reference is not None and out.reference_tool != context.reference:
        rec = record(context.reference) or {}
        out.reference_tool = context.reference
        out.reference_tool_name = _name(record, context.reference, schema)
        out.reference_profile = reference_profile(schema, rec)
        out.primary_goal = "alternative-to"
    return out


def report(reading: Reading, previous: Context, extract: Extract, record: Record,
           schema: DomainSchema) -> None:  # fmt: skip
    """Fill the reading's ``kept``, ``added`` and ``dropped``: the parts of the previous
    turn's reading (its need, constraints, preferences, exclusions, reference) against the
    new one's, and the ids it is searched within first."""
    up = reading.follow_up
    before = _parts(apply(extract(previous.text), previous, record, schema), previous)
    if up.kind == "standalone":
        up.dropped = list(before)
        up.added = []
        return
    now = _parts(apply(extract(reading.context.text), reading.context, record, schema),
                 reading.context)  # fmt: skip
    up.kept = [p for p in before if p in now]
    up.added = [p for p in now if p not in before]
    up.dropped = [p for p in before if p not in now]
    up.within = [i for i in reading.within if i not in reading.context.exclude]


def _parts(intent: IntentState, context: Context) -> list[str]:
    """The parts of a reading as short phrases (what ``kept`` / ``added`` / ``dropped`` list)."""
    parts = [f"need: {context.need}"]
    parts += [f"words: {w}" for w in context.extra]
    parts += [f.label() for f in intent.constraints]
    parts += [f"prefer {v}={x}" for v, xs in intent.matches.items() for x in xs]
    parts += [f"not {rid}" for rid in intent.excluded_tools]
    if intent.reference_tool:
        parts.append(f"like {intent.reference_tool}")
    return list(dict.fromkeys(parts))


def within_first(
    ranking: Sequence[Any], within: Iterable[str], key: Callable[[Any], str]
) -> list[Any]:
    """``ranking`` with the items whose ``key`` is in ``within`` first, each group in its
    own order (a stable partition): the previous results that still match, then the rest."""
    wanted = set(within)
    first = [r for r in ranking if key(r) in wanted]
    return first + [r for r in ranking if key(r) not in wanted]


def _normalized(query: str) -> str:
    q = normalize_query(query)
    return re.sub(r"[\s?!.,;:]+$", "", q).strip()


def _nth(ids: Sequence[str], m: re.Match[str]) -> str | None:
    """The shown id a matched ordinal names (None when out of range or nothing was shown)."""
    num = m.group("num") or m.group("num2")
    index = int(num) - 1 if num else _ORDINALS.get(m.group("word") or "")
    if index is None or not ids or index >= len(ids) or index < -len(ids):
        return None
    return ids[index]


def _named_ids(intent: IntentState) -> list[str]:
    """The records a reading names (linked entities, the reference and the exclusions)."""
    ids = [e.id for e in intent.linked] + intent.excluded_tools
    if intent.reference_tool:
        ids.append(intent.reference_tool)
    return list(dict.fromkeys(ids))


def _name(record: Record, rid: str, schema: DomainSchema) -> str:
    rec = record(rid) or {}
    return str(rec.get(schema.name_fields[0]) or rid)


def _price_bound(ids: Sequence[str], record: Record, schema: DomainSchema) -> Filter | None:
    """``price < median`` of the priced records among the first :data:`CHEAPER_FROM` shown
    (None without a price field or a priced record)."""
    fname = schema.constraint_fields.price
    if fname is None:
        return None
    prices = []
    for rid in ids[:CHEAPER_FROM]:
        price = (record(rid) or {}).get(fname)
        if isinstance(price, int | float) and not isinstance(price, bool) and price > 0:
            prices.append(float(price))
    if not prices:
        return None
    bound = statistics.median(prices)
    return Filter(field=fname, operator="lt", value=bound, origin="cheaper than the results shown")


def _replacing(filters: Iterable[Filter], new: Iterable[Filter]) -> tuple[Filter, ...]:
    """``filters`` without those on a field and operator of ``new``."""
    keys = {(f.field, f.operator) for f in new}
    return tuple(f for f in filters if (f.field, f.operator) not in keys)


def _dedupe(filters: Iterable[Filter]) -> tuple[Filter, ...]:
    """One filter per field and operator, the last given winning."""
    out: dict[tuple[str, str], Filter] = {}
    for f in filters:
        out.pop((f.field, f.operator), None)
        out[(f.field, f.operator)] = f
    return tuple(out.values())


def _unique(old: Iterable[str], new: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*old, *new]))


def _plain_matches(intent: IntentState) -> dict[str, list[str]]:
    """The vocabulary values the query's words name (not those matched by meaning alone)."""
    meant = {(m.vocabulary, m.value) for m in intent.by_meaning}
    out = {v: [x for x in xs if (v, x) not in meant] for v, xs in intent.matches.items()}
    return {v: xs for v, xs in out.items() if xs}


def _need_words(intent: IntentState, schema: DomainSchema) -> list[str]:
    """The content words of a reading that are neither a follow-up's phrasing nor a word of
    a value it matched outside the need vocabularies (a platform, a user type): the words of
    a new need ("video editor" in "only video editors"; none in "only the free ones")."""
    analyzer = default_analyzer()
    filler = set(analyzer.terms(_FILLER))
    need_vocabs = set(schema.capabilities.vocabularies) if schema.capabilities else set()
    covered: set[str] = set()
    for vocab, values in _plain_matches(intent).items():
        if vocab in need_vocabs:
            continue
        for value in values:
            synonyms = schema.vocabularies.get(vocab, {}).get(value, [])
            covered.update(analyzer.terms(" ".join([value, *synonyms])))
    return [k for k in intent.keywords if k not in filler and k not in covered]


__all__ = [
    "CHEAPER_FROM",
    "Context",
    "Reading",
    "apply",
    "fold",
    "read_turn",
    "report",
    "within_first",
]
