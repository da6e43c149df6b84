"""A malformed JSON line is reported with its line and the column where the error is, in one
clean clause (issue 47, item 9): json's own column counts from the line's trailing newline,
so an error at the end of a line read "column 1", and its control-character message ends in
"at", which read "at at column N"."""

from __future__ import annotations

import json
from pathlib import Path

from agentic_search.logic.schema import load_schema
from agentic_search.sync.files import bundled_catalog_path, read_catalog

SCHEMA = load_schema("tools")
GOOD = json.loads(bundled_catalog_path().read_text(encoding="utf-8").splitlines()[0])


def _errors(tmp_path: Path, *lines: str) -> dict[int, str]:
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {e.line: str(e) for e in read_catalog(path, SCHEMA).errors}


def test_an_unclosed_line_names_the_column_where_it_ends(tmp_path):
    text = json.dumps({**GOOD, "id": "cut"})[:-1]  # the closing brace missing
    errors = _errors(tmp_path, json.dumps(GOOD), text)
    assert errors == {
        2: f"line 2 (id 'cut'): malformed JSON: expecting ',' delimiter at the end of the line "
        f"(column {len(text) + 1})"
    }


def test_an_error_inside_a_line_names_its_own_column(tmp_path):
    head = '{"id": "x", "name": "X"'
    errors = _errors(tmp_path, head + ' "vendor": "V"}')
    assert errors[1] == (
        f"line 1 (id 'x'): malformed JSON: expecting ',' delimiter at column {len(head) + 2}"
    )


def test_a_raw_tab_in_a_string_is_named_with_its_escape_and_column(tmp_path):
    head = '{"id": "tabbed", "description": "one'
    errors = _errors(tmp_path, head + '\ttwo"}')
    assert errors[1] == (
        "line 1 (id 'tabbed'): malformed JSON: unescaped tab in a string (write it as \\t) "
        f"at column {len(head) + 1}"
    )
    assert " at at " not in errors[1]


def test_a_json_array_names_line_and_column_of_the_document(tmp_path):
    path = tmp_path / "c.json"
    path.write_text('[\n  {"id": "a",\n   "name": "A"\n   "vendor": "V"}\n]\n', encoding="utf-8")
    (error,) = read_catalog(path, SCHEMA).errors
    assert str(error) == (
        "file 1: malformed JSON array: expecting ',' delimiter at line 4 column 4"
    )


def test_sync_events_in_json_lines_name_the_column_too(tmp_path):
    from agentic_search_cli.sync_cmd import _read_items

    path = tmp_path / "changes.jsonl"
    path.write_text('{"id": "a"}\n{"id": "b", "name": "B"\n', encoding="utf-8")
    where, item = _read_items(path)[1]
    assert where == "line 2" and isinstance(item, ValueError)
    assert str(item) == "malformed JSON: expecting ',' delimiter at the end of the line (column 24)"
