"""A domain schema drafted from a catalog's records (``agentic-search init-domain``).

:func:`profile_records` reads each field of a sample of records (types seen, missing and null
counts, distinct values, lengths, numeric range); :func:`draft_domain` turns the profile into
a commented YAML schema plus the list of what it guessed and what a person should check. The
guesses, in order:

* **id**: a field named ``id`` / ``_id`` / ``*_id`` / ``slug`` / ``key`` whose values are
  unique and never null, else the first such unique short string field;
* **title**: a field named ``name`` / ``title`` / ``label`` / ..., else the most distinct short
  string field;
* **text** (embedded and keyword-searched): strings of six words or more on average, and lists
  of many distinct phrases (features, use cases);
* **low-cardinality** (filters and vocabulary candidates, with their values): strings and list
  items with at most :data:`MAX_VOCABULARY_VALUES` distinct values, repeated across records;
* **numbers** (bounds: ``lt``/``gte``...), **booleans** (``eq``) and **time**: a numeric field
  named like a date (``year``, ``released``, ``published``...) or holding only years;
* **preference** (``structured_sort``): a numeric field named like popularity (downloads,
  stars, rating...).

Every text field goes into one whole-record aspect (``whole_record: true``), which every plan
searches. Vocabularies are offered, never required: from a low-cardinality field's values, or,
for a catalog without one, frequent phrases of its text as a commented-out block. The draft is
loaded as a :class:`~agentic_search.logic.schema.DomainSchema` before it is returned, so it
always indexes unedited.
"""

from __future__ import annotations

import csv
import itertools
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agentic_search.logic.function_words import PRONOUNS, QUESTION_WORDS
from agentic_search.sync.files import CSV_LIST_SEPARATOR, catalog_format

#: Records read by default (the first ones of the file).
DEFAULT_SAMPLE = 5000
#: A field with at most this many distinct values (items, for a list) is a filter and a
#: vocabulary candidate.
MAX_VOCABULARY_VALUES = 60
#: A low-cardinality field with at least this many values is topical (a category, not a
#: facet such as a platform): it goes into the whole-record vector.
TOPICAL_MIN_VALUES = 12
#: Text: strings of at least this many words on average.
TEXT_MIN_WORDS = 6
#: Phrases offered as a vocabulary for a catalog without a tag-like field.
OFFERED_PHRASES = 25

_ID_NAMES = ("id", "_id", "slug", "key", "uid", "uuid", "identifier")
_TITLE_NAMES = ("name", "title", "label", "product", "package", "heading", "display_name")
_TIME_NAMES = re.compile(
    r"(year|date|released?|published|created|updated|modified|founded|since|time)", re.I
)
_POPULARITY_NAMES = re.compile(
    r"(download|stars?|popular|rating|score|votes|likes|views|installs|rank|sales|reviews)",
    re.I,
)
_ALIAS_NAMES = re.compile(r"(alias|synonym|aka|alternate_names?)", re.I)
_WORD = re.compile(r"[a-z][a-z0-9+#.-]*[a-z0-9+#]|[a-z]")
_STOP = frozenset(
    {*QUESTION_WORDS, *PRONOUNS}
    | set(
        re.findall(
            r"\w+",
            "a an the and or of for to in on at by with from into over under as is are be "
            "that this these those it its your you our their not no all any each more most "
            "other such than then so also very can will just using use used based via like "
            "one two new fast simple small easy lightweight",
        )
    )
)


class DraftError(ValueError):
    """The file cannot be drafted from (no records, no usable id field); one line, for the
    CLI to print."""


@dataclass
class FieldProfile:
    """What a sample says of one field: ``kinds`` (``string``, ``list``, ``integer``,
    ``number``, ``boolean``, ``object`` counts), ``missing`` (records without it), ``nulls``,
    ``values`` (distinct strings, or list items, with their counts), ``words`` (words per
    string value), ``numbers`` (its numeric values)."""

    name: str
    kinds: Counter[str] = field(default_factory=Counter)
    missing: int = 0
    nulls: int = 0
    values: Counter[str] = field(default_factory=Counter)
    words: list[int] = field(default_factory=list)
    numbers: list[float] = field(default_factory=list)
    list_lengths: list[int] = field(default_factory=list)

    @property
    def present(self) -> int:
        """Records with a non-null value."""
        return sum(self.kinds.values())

    @property
    def type(self) -> str:
        """The schema type the values fit: ``list`` if any value is a list, ``boolean``,
        ``integer``, ``number`` (integers and floats mixed), ``object`` (nested: not
        supported) or ``string``."""
        k = self.kinds
        if k["object"]:
            return "object"
        if k["list"]:
            return "list"
        if not self.present:
            return "string"
        if k["boolean"] == self.present:
            return "boolean"
        if k["integer"] == self.present:
            return "integer"
        if k["integer"] + k["number"] == self.present:
            return "number"
        return "string"

    @property
    def mean_words(self) -> float:
        """Mean words per string value (0 without strings)."""
        return sum(self.words) / len(self.words) if self.words else 0.0

    @property
    def unique(self) -> bool:
        """Every non-null value distinct (strings and numbers)."""
        return self.present > 0 and len(self.values) == self.present and not self.kinds["list"]


def _cell(text: str) -> Any:
    """A CSV cell as the value it spells: empty -> None, integer, float, boolean, a list when
    it holds :data:`CSV_LIST_SEPARATOR`, else the text."""
    text = text.strip()
    if not text:
        return None
    if re.fullmatch(r"[+-]?\d{1,15}", text):
        return int(text)
    if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?", text):
        return float(text)
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if CSV_LIST_SEPARATOR in text:
        return [v.strip() for v in text.split(CSV_LIST_SEPARATOR) if v.strip()]
    return text


def read_sample(path: Path, limit: int = DEFAULT_SAMPLE) -> tuple[list[dict[str, Any]], bool]:
    """The first ``limit`` records of a JSON Lines, JSON array or CSV file, and whether that
    was the whole file. Lines that do not parse as an object are skipped.

    Raises:
        FileNotFoundError: when ``path`` is not a file.
        CatalogFormatError: for a format :func:`~agentic_search.sync.files.catalog_format`
            does not read.
    """
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    fmt = catalog_format(path)
    records: list[dict[str, Any]] = []
    if fmt == "csv":
        with path.open(encoding="utf-8-sig", newline="") as fh:
            for row in csv.DictReader(fh):
                if len(records) >= limit:
                    return records, False
                records.append({k: _cell(v or "") for k, v in row.items() if k})
        return records, True
    if fmt == "json":
        items = json.loads(path.read_text(encoding="utf-8-sig"))
        rows = [r for r in items if isinstance(r, dict)] if isinstance(items, list) else []
        return rows[:limit], len(rows) <= limit
    with path.open(encoding="utf-8-sig") as fh:
        for line in fh:
            if not line.strip():
                continue
            if len(records) >= limit:
                return records, False
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict):
                records.append(obj)
    return records, True


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() and abs(value) < 1e15 else "number"
    if isinstance(value, list | tuple):
        return "list"
    if isinstance(value, dict):
        return "object"
    return "string"


def profile_records(records: Iterable[dict[str, Any]]) -> dict[str, FieldProfile]:
    """One :class:`FieldProfile` per field name seen, in first-seen order."""
    rows = list(records)
    out: dict[str, FieldProfile] = {}
    for row in rows:
        for name in row:
            out.setdefault(name, FieldProfile(name))
    for row in rows:
        for name, prof in out.items():
            if name not in row:
                prof.missing += 1
                continue
            value = row[name]
            if value is None or value == "" or value == []:
                prof.nulls += 1
                continue
            kind = _kind(value)
            prof.kinds[kind] += 1
            if kind == "list":
                items = [str(v) for v in value if v is not None and not isinstance(v, dict)]
                prof.list_lengths.append(len(items))
                prof.values.update(dict.fromkeys(items, 1))
                prof.words.extend(len(i.split()) for i in items)
            elif kind in ("integer", "number"):
                prof.numbers.append(float(value))
                prof.values[str(value)] += 1
            elif kind == "string":
                prof.values[value] += 1
                prof.words.append(len(str(value).split()))
            elif kind == "boolean":
                prof.values[str(value).lower()] += 1
    return out


@dataclass
class Draft:
    """A drafted domain: ``yaml`` (the commented schema text), ``guessed`` (one line per
    guess) and ``check`` (what a person should look at before relying on it)."""

    yaml: str
    guessed: list[str]
    check: list[str]


@dataclass
class _Roles:
    id: str
    title: str
    text: list[str] = field(default_factory=list)
    categorical: list[str] = field(default_factory=list)
    numeric: list[str] = field(default_factory=list)
    boolean: list[str] = field(default_factory=list)
    keyword_only: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    time: str | None = None
    popularity: str | None = None
    aliases: str | None = None


def _is_categorical(p: FieldProfile) -> bool:
    if p.type not in ("string", "list") or not p.values:
        return False
    distinct = len(p.values)
    repeated = sum(p.values.values()) >= 2 * distinct  # each value about twice or more
    short = p.mean_words <= 4
    return distinct <= MAX_VOCABULARY_VALUES and repeated and short


def _roles(profiles: dict[str, FieldProfile], n: int) -> _Roles:
    names = list(profiles)
    lower = {n.lower(): n for n in names}

    def unique_short(p: FieldProfile) -> bool:
        return p.type in ("string", "integer") and p.unique and p.missing == 0 and p.nulls == 0

    id_field = next(
        (lower[k] for k in _ID_NAMES if k in lower and unique_short(profiles[lower[k]])), None
    ) or next(
        (n for n in names if n.lower().endswith(("_id", "id")) and unique_short(profiles[n])),
        None,
    )
    if id_field is None:
        id_field = next(
            (
                n
                for n, p in profiles.items()
                if unique_short(p) and p.type == "string" and p.mean_words <= 1
            ),
            None,
        )
    if id_field is None:
        raise DraftError(
            "no field looks like an id (unique, never empty, one word): add an `id` to every record"
        )
    rest = [n for n in names if n != id_field]
    strings = [n for n in rest if profiles[n].type == "string" and profiles[n].present]
    title = next((lower[k] for k in _TITLE_NAMES if k in lower and lower[k] in strings), None)
    if title is None:
        short = [n for n in strings if profiles[n].mean_words <= 8]
        title = max(short or strings or [id_field], key=lambda n: len(profiles[n].values))
    roles = _Roles(id=id_field, title=title)
    for name in rest:
        p = profiles[name]
        if name == title:
            continue
        if p.type == "object":
            roles.skipped.append(name)
        elif p.type == "boolean":
            roles.boolean.append(name)
        elif p.type in ("integer", "number"):
            roles.numeric.append(name)
        elif p.type == "list" and _ALIAS_NAMES.search(name) and roles.aliases is None:
            roles.aliases = name
        elif _is_categorical(p):
            roles.categorical.append(name)
        elif p.mean_words >= TEXT_MIN_WORDS or (p.type == "list" and p.mean_words >= 3):
            roles.text.append(name)
        else:
            roles.keyword_only.append(name)
    times = [n for n in roles.numeric if _TIME_NAMES.search(n)]
    years = [
        n
        for n in roles.numeric
        if profiles[n].numbers
        and all(1900 <= v <= 2100 and v.is_integer() for v in profiles[n].numbers)
    ]
    roles.time = next(iter(times or years), None)
    roles.popularity = next(
        (n for n in roles.numeric if n != roles.time and _POPULARITY_NAMES.search(n)), None
    )
    # strings first (a description before a features list), longest first
    roles.text.sort(key=lambda n: (profiles[n].type == "list", -profiles[n].mean_words))
    return roles


def _flow(value: Any) -> str:
    """``value`` as one line of YAML flow style (a scalar quoted where YAML needs it)."""
    wrapped = not isinstance(value, list | dict)
    text = yaml.safe_dump(
        [value] if wrapped else value,
        default_flow_style=True,
        width=10**6,
        allow_unicode=True,
        sort_keys=False,
    ).strip()
    return text[1:-1] if wrapped else text


def _synonyms(value: str) -> list[str]:
    low = value.lower()
    out = [low]
    for alt in (low.replace("-", " "), low.replace(" ", "-"), low.replace("&", "and")):
        if alt not in out:
            out.append(alt)
    return out


def _vocabulary_name(field_name: str) -> str:
    return re.sub(r"[^a-z0-9_]", "_", field_name.lower())


def frequent_phrases(
    records: list[dict[str, Any]], fields: list[str], k: int = OFFERED_PHRASES
) -> list[str]:
    """The ``k`` most frequent two-word phrases of ``fields`` (no function word at either
    end), each in at least two records, most frequent first."""
    counts: Counter[str] = Counter()
    for row in records:
        seen: set[str] = set()
        for f in fields:
            value = row.get(f)
            texts = value if isinstance(value, list) else [value]
            for text in texts:
                if not isinstance(text, str):
                    continue
                words = _WORD.findall(text.lower())
                for a, b in itertools.pairwise(words):
                    if a not in _STOP and b not in _STOP and len(a) > 2 and len(b) > 2:
                        seen.add(f"{a} {b}")
        counts.update(seen)
    return [p for p, c in counts.most_common(k) if c >= 2]


def _iter_numbers(p: FieldProfile) -> Iterator[str]:
    if p.numbers:
        lo, hi = min(p.numbers), max(p.numbers)
        fmt = (lambda v: str(int(v))) if p.type == "integer" else (lambda v: f"{v:g}")
        yield f"{fmt(lo)} to {fmt(hi)}"


def draft_domain(
    records: list[dict[str, Any]], name: str, whole_file: bool = True, source: str = ""
) -> Draft:
    """Draft a domain schema named ``name`` from ``records`` (see the module docstring).

    ``whole_file``: the records are the whole catalog, so a low-cardinality field's values
    can constrain it (``vocabulary:`` on the field); from a sample they are only offered.

    Raises:
        DraftError: no records, or no field usable as the id.
    """
    from agentic_search.logic.schema import DomainSchema

    if not records:
        raise DraftError("no records read: expected JSON objects, one a line, or a CSV header")
    n = len(records)
    profiles = profile_records(records)
    r = _roles(profiles, n)
    guessed: list[str] = []
    check: list[str] = []

    def share(p: FieldProfile) -> str:
        empty = p.missing + p.nulls
        return "always set" if not empty else f"empty in {empty} of {n}"

    lines: list[str] = [
        f"# Domain schema drafted by `agentic-search init-domain` from {source or 'a sample'}",
        f"# ({n} records read{'' if whole_file else ', the first ones of the file'}).",
        "# Every guess is commented; check the lines marked CHECK, then ingest with",
        f"#   agentic-search ingest FILE --domain {name}.yaml",
        f"name: {name}",
        'version: "1"',
        f"id_field: {r.id}",
        f"title_field: {r.title}",
        f"text_field: {(r.text or [r.title])[0]}",
        "",
    ]
    guessed.append(f"id field: {r.id}   title field: {r.title}")

    # vocabularies from low-cardinality fields
    vocab_lines: list[str] = []
    vocab_fields: dict[str, str] = {}
    for fname in r.categorical:
        p = profiles[fname]
        vname = _vocabulary_name(fname)
        vocab_fields[vname] = fname
        values = sorted(p.values, key=lambda v: (-p.values[v], v))
        vocab_lines.append(f"  # {fname}: {len(values)} values, most frequent first")
        vocab_lines.append(f"  {vname}:")
        vocab_lines += [f"    {_flow(v)}: {_flow(_synonyms(v))}" for v in values]
    if vocab_lines:
        lines += [
            "# Vocabularies offered from the data: the values of each low-cardinality field, each",
            "# with its lowercase spellings as synonyms. A query that says a value (or a synonym:",
            "# add your users' words, e.g. `Linux: [linux, gnu/linux]`) matches it, and the",
            "# records carrying it are ranked by a structured source. None is required: delete",
            "# a vocabulary (and its vocabulary_fields line) you do not want matched.",
            "vocabularies:",
            *vocab_lines,
            "",
        ]
        guessed.append(
            "vocabularies (from low-cardinality fields): "
            + ", ".join(f"{v} ({len(profiles[f].values)} values)" for v, f in vocab_fields.items())
        )
        check.append("vocabulary synonyms: add the words your users say for each value")
    else:
        phrases = frequent_phrases(records, [r.title, *r.text])
        if phrases:
            lines += [
                "# No field looks like tags. Vocabularies are optional; these frequent phrases of",
                "# the text are offered as one (uncomment it, add a `topics` list field to the",
                "# records and `vocabulary_fields: {topics: topics}` to filter by them):",
                "# vocabularies:",
                "#   topics:",
                *[f"#     {_flow(p)}: [{_flow(p)}]" for p in phrases],
                "",
            ]
            guessed.append(
                f"no tag-like field: {len(phrases)} frequent phrases offered (commented)"
            )

    lines.append("# Record fields: type, whether every record has it, filter operators allowed.")
    lines.append("fields:")

    def field_line(fname: str, spec: dict[str, Any], note: str) -> None:
        lines.append(f"  {fname}: {_flow(spec)}  # {note}")

    for fname, p in profiles.items():
        empty = p.missing + p.nulls
        typ = p.type if p.type != "object" else None
        if typ is None:
            lines.append(f"  # {fname}: nested objects are not read; flatten them to index it")
            check.append(f"{fname}: nested values are left out")
            continue
        spec: dict[str, Any] = {"type": typ}
        if empty == 0 and (whole_file or fname == r.id):
            spec["required"] = True
        elif p.present:  # (from a sample, a field always set there may be empty later)
            spec["nullable"] = True
        if fname == r.id:
            note = "the id (unique in the sample)"
        elif fname == r.title:
            spec["filter"] = ["eq", "ne", "contains"]
            note = f"the title ({share(p)})"
        elif fname in r.categorical:
            if whole_file:
                spec["vocabulary"] = _vocabulary_name(fname)
            spec["filter"] = ["in", "nin"] if typ == "list" else ["eq", "ne", "in", "nin"]
            note = f"low-cardinality: {len(p.values)} values ({share(p)})"
        elif fname in r.numeric:
            spec["filter"] = ["eq", "lt", "lte", "gt", "gte"]
            note = f"numeric, {next(_iter_numbers(p), 'no values')} ({share(p)})"
            if fname == r.time:
                note += "; the record's time"
        elif fname in r.boolean:
            spec["filter"] = ["eq"]
            note = f"yes/no ({share(p)})"
        elif fname in r.text:
            note = f"text, {p.mean_words:.0f} words a value on average ({share(p)})"
        elif fname == r.aliases:
            note = f"other names of the record ({share(p)})"
        else:
            note = f"short text, keyword-searched ({share(p)})"
        field_line(fname, spec, note)
    lines.append("")
    if r.numeric:
        guessed.append("numeric fields (filterable bounds): " + ", ".join(r.numeric))
    if r.boolean:
        guessed.append("yes/no fields: " + ", ".join(r.boolean))
    guessed.append("text fields (embedded): " + (", ".join(r.text) or "none"))
    if not r.text:
        check.append("no long text field found: only the title is embedded")

    if vocab_fields:
        lines.append("# The record field each vocabulary describes (structured sources filter it).")
        lines.append("vocabulary_fields:")
        lines += [f"  {v}: {f}" for v, f in vocab_fields.items()]
        lines.append("")

    # the whole-record vector: the title, the text, and the topical low-cardinality fields
    # (a category of many values says what a record is; a facet of a few, such as a
    # platform or a price plan, says little to an embedding)
    topical = [f for f in r.categorical if len(profiles[f].values) >= TOPICAL_MIN_VALUES]
    record_fields = list(dict.fromkeys([r.title, *r.text, *topical]))
    lines += [
        "# Aspects: each is one embedded vector per record. `record` holds every text field in",
        "# one vector and is searched by every plan; add narrower aspects (say one over a",
        "# features list) when queries ask about one part of a record.",
        "aspects:",
        "  - name: record",
        f"    fields: {_flow(record_fields)}",
        "    description: the whole record",
        "    default_top_k: 30",
        "    whole_record: true",
        "",
        "# Fields the BM25 keyword source reads (one text per record).",
        "keyword_fields: "
        + _flow(
            list(
                dict.fromkeys(
                    [
                        r.title,
                        *([r.aliases] if r.aliases else []),
                        *r.text,
                        *r.keyword_only,
                        *r.categorical,
                    ]
                )
            )
        ),
        "",
    ]
    if r.popularity:
        lines += [
            f"# Structured hits are ranked by matched values, ties by {r.popularity} (CHECK: the",
            "# field that says a record is preferred: popularity, rating).",
            f"structured_sort: {{field: {r.popularity}, order: desc}}",
        ]
        guessed.append(f"preference (structured_sort): {r.popularity}, highest first")
    else:
        lines += [
            "# Structured hits are ranked by matched values, ties by this field.",
            f"structured_sort: {{field: {r.title}, order: asc}}",
        ]
    lines.append("")
    lines += [
        "# Fields shown with each result.",
        "candidate_metadata:",
        *[
            f"  {f}: {f}"
            for f in dict.fromkeys([r.title, *r.categorical, *r.numeric, *r.boolean][:12])
        ],
        "",
        '# Records are named: the title (and aliases) link "X vs Y", "alternative to X"; the',
        "# text fields are read for other records' names (what a record replaces or plugs into).",
        "entities:",
        f"  names: [{r.title}]",
        *([f"  aliases: {r.aliases}"] if r.aliases else []),
        *([f"  link_fields: {_flow(r.text)}"] if r.text else []),
        "",
    ]
    if r.time:
        lines += [
            f'# The record\'s time: "since 2024", "released in 2023" filter on {r.time} (CHECK).',
            f"temporal: {{field: {r.time}, label: {r.time}}}",
            "",
        ]
        guessed.append(f"time field: {r.time}")
    else:
        check.append("no time field found: store a year as an integer to filter by time")
    roles = _constraint_roles(profiles, r, whole_file)
    if roles:
        lines += [
            '# Fields the constraint phrases set ("under $20", "free", "open source"; CHECK).',
            "constraint_fields:",
            *[f"  {k}: {_flow(v)}" for k, v in roles.items()],
            "",
        ]
        guessed.append("constraint roles: " + ", ".join(f"{k} = {v}" for k, v in roles.items()))
    lines += [
        '# No `quality:` block: every search answers with its best records and never says "no',
        '# good match". Judge a few queries, then `agentic-search calibrate` proposes it.',
    ]
    if r.skipped:
        guessed.append("left out (nested): " + ", ".join(r.skipped))
    id_p = profiles[r.id]
    if not whole_file:
        check.append(
            f"read the first {n} records only: ids unique there, values outside the vocabularies "
            "not seen (the fields are not constrained to them)"
        )
    if id_p.type == "integer":
        check.append(f"id field {r.id} holds numbers: they are read as text ids")
    check.append(
        f"title {r.title!r}, text {r.text or '-'}: the record aspect embeds "
        f"{len(record_fields)} fields; put the most telling first"
    )
    text = "\n".join(lines) + "\n"
    # the draft must load as it is: a schema that cannot index is a bug of this module
    DomainSchema.model_validate(yaml.safe_load(text))
    return Draft(text, guessed, check)


def _constraint_roles(
    profiles: dict[str, FieldProfile], r: _Roles, whole_file: bool
) -> dict[str, Any]:
    """``constraint_fields`` guessed by field name and values: a numeric ``price``/``cost``
    field, a yes/no open-source field and, when the values are the whole file's (they then
    form the field's vocabulary), a low-cardinality pricing field (its free and paid values)
    and a deployment field (its local and self-hosted values)."""
    out: dict[str, Any] = {}
    price = next((f for f in r.numeric if re.search(r"price|cost|fee", f, re.I)), None)
    if price:
        out["price"] = price
    pricing = next(
        (f for f in r.categorical if re.search(r"pricing|licen[cs]e|plan", f, re.I)), None
    )
    if pricing and whole_file and profiles[pricing].type == "string":
        values = list(profiles[pricing].values)
        free = [v for v in values if re.search(r"free|open", v, re.I)]
        paid = [v for v in values if re.search(r"paid|commercial|subscription|premium", v, re.I)]
        if free or paid:
            out["pricing"] = pricing
            if free:
                out["free_values"] = free
            if paid:
                out["paid_values"] = paid
    oss = next((f for f in r.boolean if re.search(r"open.?source|oss", f, re.I)), None)
    if oss:
        out["open_source"] = oss
    deploy = next((f for f in r.categorical if re.search(r"deploy|hosting", f, re.I)), None)
    if deploy and whole_file:
        values = list(profiles[deploy].values)
        local = [v for v in values if re.search(r"local|offline|on.?device", v, re.I)]
        selfh = [v for v in values if re.search(r"self", v, re.I)]
        if local or selfh:
            out["deployment"] = deploy
            if local:
                out["local_values"] = local
            if selfh:
                out["self_hosted_values"] = selfh
    return out


__all__ = [
    "DEFAULT_SAMPLE",
    "Draft",
    "DraftError",
    "FieldProfile",
    "draft_domain",
    "frequent_phrases",
    "profile_records",
    "read_sample",
]
