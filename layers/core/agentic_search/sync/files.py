"""Reading catalogs: records validated against a domain schema, one by one.

Formats (:func:`catalog_format`): JSON Lines (``.jsonl``, ``.ndjson``), a JSON array of objects
(``.json``) and CSV with the schema's field names as header (``.csv``; list fields split on
:data:`CSV_LIST_SEPARATOR`, empty cells are null); another extension is sniffed from the first
character (``[`` an array, ``{`` JSON Lines) or refused with :class:`CatalogFormatError` naming
the expected ones. A UTF-8 byte-order mark is skipped. A line that is not UTF-8 is rejected in
JSON Lines; a CSV file holding one is refused whole (:class:`CatalogFormatError`, "line N:
invalid UTF-8 at byte K").

A bad record never stops the rest: each problem is reported with its 1-based position (line of
a JSON Lines or CSV file, item of a JSON array) and the good records go on. Blank lines are
counted (``blank``). A rejected record names its id when the line shows one, even a line that
does not parse (:func:`readable_id`; ``--prune`` keeps it). Duplicate ids keep the first
occurrence and report the later ones. BEIR corpora are read with :func:`read_beir_corpus`.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from agentic_search.logic.schema import DomainSchema, RecordError

#: How a CSV cell holds a list field's values: ``Linux; macOS; Windows``.
CSV_LIST_SEPARATOR = ";"
#: Extensions by format.
FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv"}


class CatalogFormatError(ValueError):
    """A catalog file in a format ingest does not read (the message names the expected)."""


@dataclass(frozen=True)
class LineError:
    """A rejected record: where (``line`` N, or ``item`` N of a JSON array), which record
    (when known) and why."""

    line: int
    reason: str
    record_id: str | None = None
    unit: str = "line"

    def __str__(self) -> str:
        who = f" (id {self.record_id!r})" if self.record_id else ""
        return f"{self.unit} {self.line}{who}: {self.reason}"


@dataclass
class CatalogRead:
    """Valid records (in file order), the rejected ones, the lines read (items of a JSON array,
    rows of a CSV file after its header) and the blank ones among them (``lines = valid +
    rejected + blank``)."""

    records: list[dict[str, Any]] = field(default_factory=list)
    errors: list[LineError] = field(default_factory=list)
    lines: int = 0
    blank: int = 0
    format: str = "jsonl"


def bundled_catalog_path() -> Path:
    """Path of the bundled tools catalog (package data)."""
    return Path(str(resources.files("agentic_search") / "data" / "tools.jsonl"))


def catalog_format(path: Path) -> str:
    """``jsonl``, ``json`` or ``csv`` by extension, else sniffed from the first non-space
    character (``[``: json, ``{``: jsonl).

    Raises:
        CatalogFormatError: for anything else.
    """
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is not None:
        return fmt
    with path.open("rb") as fh:
        head = fh.read(4096).decode("utf-8-sig", errors="replace").lstrip()
    if head.startswith("["):
        return "json"
    if head.startswith("{"):
        return "jsonl"
    raise CatalogFormatError(
        f"{path.name}: unknown catalog format; expected JSON Lines (.jsonl), a JSON array "
        "(.json) or CSV with the schema's fields as header (.csv)"
    )


def _lines(path: Path) -> Iterator[tuple[int, str, str | None]]:
    """(number, text, why it is unreadable); an invalid UTF-8 line decoded with replacements."""
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            encoding = "utf-8-sig" if number == 1 else "utf-8"
            try:
                yield number, raw.decode(encoding), None
            except UnicodeDecodeError as exc:
                yield number, raw.decode(encoding, "replace"), f"invalid UTF-8 at byte {exc.start}"


def readable_id(text: str, id_fields: Sequence[str]) -> str | None:
    """The id a line that does not parse still shows (``"id": "quillpad"`` or ``"id": 7``, the
    first of ``id_fields`` found), or None: its record is in the file (``--prune`` keeps it)."""
    string = r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"'  # JSON's, so it loads
    for name in id_fields:
        match = re.search(rf'"{re.escape(name)}"\s*:\s*({string}|-?\d+)', text)
        value = str(json.loads(match.group(1))) if match else ""
        if value.strip():
            return value
    return None


#: Control characters JSON strings must escape, by the name a user knows them by.
_CONTROL_NAMES = {"\t": "tab", "\n": "line break", "\r": "carriage return"}


def json_error(exc: json.JSONDecodeError, one_line: bool = True) -> str:
    """``exc`` as one clause: what is wrong (a control character named, with its escape) and
    where. ``one_line``: the document was one line of JSON Lines (its line ending stripped),
    the position is its column (1-based; "the end of the line" past the last character);
    else "line L column C" of the document."""
    what = exc.msg.removesuffix(" at")  # json's "Invalid control character at"
    if what.startswith("Invalid control character") and exc.pos < len(exc.doc):
        char = exc.doc[exc.pos]
        name = _CONTROL_NAMES.get(char, f"control character U+{ord(char):04X}")
        escape = json.dumps(char)[1:-1]
        what = f"unescaped {name} in a string (write it as {escape})"
    what = what[:1].lower() + what[1:]
    if not one_line:
        return f"{what} at line {exc.lineno} column {exc.colno}"
    if exc.pos >= len(exc.doc.rstrip()):
        return f"{what} at the end of the line (column {exc.pos + 1})"
    return f"{what} at column {exc.pos + 1}"


def _jsonl(path: Path, out: CatalogRead, id_fields: Sequence[str]) -> Iterator[tuple[int, Any]]:
    for number, text, unreadable in _lines(path):
        out.lines = number
        if not text.strip():
            out.blank += 1
            continue
        if unreadable:
            out.errors.append(LineError(number, unreadable, readable_id(text, id_fields)))
            continue
        line = text.rstrip("\r\n")  # the line ending is no part of the JSON's columns
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            why = f"malformed JSON: {json_error(exc)}"
            out.errors.append(LineError(number, why, readable_id(line, id_fields)))


def _json_array(path: Path, out: CatalogRead) -> Iterator[tuple[int, Any]]:
    try:
        document = json.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError as exc:
        out.errors.append(LineError(1, f"invalid UTF-8 at byte {exc.start}", unit="file"))
        return
    except json.JSONDecodeError as exc:
        why = f"malformed JSON array: {json_error(exc, one_line=False)}"
        out.errors.append(LineError(1, why, unit="file"))
        return
    if not isinstance(document, list):
        out.errors.append(
            LineError(
                1, f"expected a JSON array of records, got {type(document).__name__}", unit="file"
            )
        )
        return
    for number, item in enumerate(document, start=1):
        out.lines = number
        yield number, item


def _csv_text(path: Path, fh: Any) -> Iterator[str]:
    """The lines of the binary file ``fh`` decoded as UTF-8 (a byte-order mark skipped).
    Raises :class:`CatalogFormatError` ("<file> line N: invalid UTF-8 at byte K") at the first
    line that is not (a Latin-1 export, a binary file): the CSV is refused whole, before any
    write, rather than ingested without its non-ASCII rows."""
    for number, raw in enumerate(fh, start=1):
        try:
            yield raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise CatalogFormatError(
                f"{path.name} line {number}: invalid UTF-8 at byte {exc.start}; save the CSV "
                "as UTF-8 (in Excel: CSV UTF-8)"
            ) from None


def _csv(path: Path, schema: DomainSchema, out: CatalogRead) -> Iterator[tuple[int, Any]]:
    with path.open("rb") as fh:
        reader = csv.DictReader(_csv_text(path, fh))
        unknown = [h for h in reader.fieldnames or [] if h not in schema.fields]
        if not reader.fieldnames or schema.id_field not in reader.fieldnames:
            out.errors.append(
                LineError(
                    1, f"CSV header must name the schema's fields (at least {schema.id_field!r})"
                )
            )
            return
        for row in reader:
            number = reader.line_num  # the file's line (a quoted cell may span several)
            out.lines += 1  # rows: valid + rejected + blank
            if not any((v or "").strip() for v in row.values()):
                out.blank += 1
                continue
            yield number, _csv_record(schema, row, unknown)


def _csv_record(schema: DomainSchema, row: dict[str, Any], unknown: list[str]) -> dict[str, Any]:
    """A CSV row as a record: lists split on :data:`CSV_LIST_SEPARATOR`, numbers and booleans
    parsed where they parse (else left for validation to name), empty cells null."""
    out: dict[str, Any] = {}
    for name, cell in row.items():
        if name is None or name in unknown:
            continue
        text = (cell or "").strip()
        fdef = schema.fields[name]
        if fdef.type == "list":
            out[name] = [v.strip() for v in text.split(CSV_LIST_SEPARATOR) if v.strip()]
        elif not text:
            out[name] = None
        elif fdef.numeric:
            try:
                out[name] = float(text) if any(c in text for c in ".eE") else int(text)
            except ValueError:
                out[name] = text
        elif fdef.type == "boolean":
            out[name] = {
                "true": True,
                "false": False,
                "yes": True,
                "no": False,
                "1": True,
                "0": False,
            }.get(text.lower(), text)
        else:
            out[name] = text
    return out


def read_catalog(path: Path, schema: DomainSchema, id_key: str | None = None) -> CatalogRead:
    """Read and validate a catalog file (JSON Lines, a JSON array or CSV; see the module
    docstring).

    ``id_key`` renames a source id field to the schema's (``_id`` for BEIR corpora).

    Raises:
        FileNotFoundError: when ``path`` does not exist.
        CatalogFormatError: for a format it does not read, or a CSV file that is not UTF-8.
    """
    if not path.is_file():
        raise FileNotFoundError(f"catalog file not found: {path}")
    fmt = catalog_format(path)
    out = CatalogRead(format=fmt)
    unit = "item" if fmt == "json" else "line"
    if fmt == "json":
        items = _json_array(path, out)
    elif fmt == "csv":
        items = _csv(path, schema, out)
    else:
        items = _jsonl(path, out, [n for n in (schema.id_field, id_key) if n])
    first: dict[str, int] = {}
    for number, raw in items:
        if not isinstance(raw, dict):
            out.errors.append(
                LineError(number, f"expected a JSON object, got {type(raw).__name__}", unit=unit)
            )
            continue
        if id_key and id_key in raw and schema.id_field not in raw:
            raw[schema.id_field] = raw.pop(id_key)
        rid = raw.get(schema.id_field)
        if isinstance(rid, int) and not isinstance(rid, bool):
            raw[schema.id_field] = rid = str(rid)
        rid_text = str(rid) if rid is not None else None
        try:
            record = schema.validate_record(raw)
        except RecordError as exc:
            out.errors.append(LineError(number, str(exc), rid_text, unit))
            continue
        key = record[schema.id_field]
        if key in first:
            out.errors.append(
                LineError(number, f"duplicate id, first seen on {unit} {first[key]}", key, unit)
            )
            continue
        first[key] = number
        out.records.append(record)
    return out


def read_beir_corpus(dataset: Path, schema: DomainSchema) -> CatalogRead:
    """Read ``dataset/corpus.jsonl`` (BEIR layout) into ``documents`` records."""
    return read_catalog(dataset / "corpus.jsonl", schema, id_key="_id")
