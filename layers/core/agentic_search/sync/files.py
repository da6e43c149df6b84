"""Reading catalogs: JSONL records validated against a domain schema, line by line.

A bad line never stops the rest: each problem is reported with its 1-based line number and the
good records go on. Duplicate ids keep the first occurrence and report the later lines.
BEIR corpora (``_id``, ``title``, ``text``) are read with :func:`read_beir_corpus`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from agentic_search.domain.schema import DomainSchema, RecordError


@dataclass(frozen=True)
class LineError:
    """A rejected line: where, which record (when known) and why."""

    line: int
    reason: str
    record_id: str | None = None

    def __str__(self) -> str:
        who = f" (id {self.record_id!r})" if self.record_id else ""
        return f"line {self.line}{who}: {self.reason}"


@dataclass
class CatalogRead:
    """Valid records (in file order) and the rejected lines."""

    records: list[dict[str, Any]] = field(default_factory=list)
    errors: list[LineError] = field(default_factory=list)
    lines: int = 0


def bundled_catalog_path() -> Path:
    """Path of the bundled tools catalog (package data)."""
    return Path(str(resources.files("agentic_search") / "data" / "tools.jsonl"))


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield number, f"\x00invalid UTF-8 at byte {exc.start}"


def read_catalog(path: Path, schema: DomainSchema, id_key: str | None = None) -> CatalogRead:
    """Read and validate a JSONL catalog.

    ``id_key`` renames a source id field to the schema's (``_id`` for BEIR corpora).

    Raises:
        FileNotFoundError: when ``path`` does not exist.
    """
    if not path.is_file():
        raise FileNotFoundError(f"catalog file not found: {path}")
    out = CatalogRead()
    first_line: dict[str, int] = {}
    for number, text in _lines(path):
        out.lines = number
        if not text.strip():
            continue
        if text.startswith("\x00"):
            out.errors.append(LineError(number, text[1:]))
            continue
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            out.errors.append(LineError(number, f"malformed JSON: {exc.msg} at column {exc.colno}"))
            continue
        if not isinstance(raw, dict):
            out.errors.append(
                LineError(number, f"expected a JSON object, got {type(raw).__name__}")
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
            out.errors.append(LineError(number, str(exc), rid_text))
            continue
        key = record[schema.id_field]
        if key in first_line:
            out.errors.append(
                LineError(number, f"duplicate id, first seen on line {first_line[key]}", key)
            )
            continue
        first_line[key] = number
        out.records.append(record)
    return out


def read_beir_corpus(dataset: Path, schema: DomainSchema) -> CatalogRead:
    """Read ``dataset/corpus.jsonl`` (BEIR layout) into ``documents`` records."""
    return read_catalog(dataset / "corpus.jsonl", schema, id_key="_id")
