"""Formats a user brings (finding 13): JSON Lines, a JSON array and CSV are read; a BOM is
skipped; blank lines are counted; an unknown format is refused naming the expected ones."""

from __future__ import annotations

import csv
import io
import json

import pytest

from agentic_search.logic.schema import load_schema
from agentic_search.sync.files import (
    CSV_LIST_SEPARATOR,
    CatalogFormatError,
    bundled_catalog_path,
    read_catalog,
)

SCHEMA = load_schema("tools")
RECORDS = [json.loads(line) for line in bundled_catalog_path().read_text().splitlines()[:6]]


def _csv_text(records: list[dict]) -> str:
    fields = list(SCHEMA.fields)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=fields)
    writer.writeheader()
    for r in records:
        row = {}
        for f in fields:
            v = r.get(f)
            if isinstance(v, list):
                v = f"{CSV_LIST_SEPARATOR} ".join(v)
            elif isinstance(v, bool):
                v = "true" if v else "false"
            row[f] = "" if v is None else v
        writer.writerow(row)
    return buf.getvalue()


def _ids(read) -> list[str]:
    return [r["id"] for r in read.records]


def test_jsonl_json_array_and_csv_read_the_same_records(tmp_path):
    want = [SCHEMA.validate_record(r) for r in RECORDS]
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    array = tmp_path / "c.json"
    array.write_text(json.dumps(RECORDS, indent=2))
    table = tmp_path / "c.csv"
    table.write_text(_csv_text(RECORDS))
    for path in (jsonl, array, table):
        read = read_catalog(path, SCHEMA)
        assert not read.errors, (path.name, read.errors[:2])
        assert read.records == want, path.name
    assert read_catalog(array, SCHEMA).format == "json"
    assert read_catalog(table, SCHEMA).format == "csv"


def test_a_bom_is_skipped_in_every_format(tmp_path):
    for name, text in [
        ("b.jsonl", "".join(json.dumps(r) + "\n" for r in RECORDS)),
        ("b.json", json.dumps(RECORDS)),
        ("b.csv", _csv_text(RECORDS)),
    ]:
        path = tmp_path / name
        path.write_bytes(b"\xef\xbb\xbf" + text.encode())
        read = read_catalog(path, SCHEMA)
        assert not read.errors and _ids(read) == [r["id"] for r in RECORDS], name


def test_blank_lines_are_counted_so_every_line_is_accounted_for(tmp_path):
    lines = [json.dumps(RECORDS[0]), "", "   ", json.dumps({**RECORDS[1], "id": "Bad Id"})]
    lines += ["{not json", json.dumps(RECORDS[2]), ""]
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(lines) + "\n")
    read = read_catalog(path, SCHEMA)
    assert read.lines == 7 and read.blank == 3
    assert len(read.records) + len(read.errors) + read.blank == read.lines
    assert [e.line for e in read.errors] == [4, 5]


def test_a_json_array_reports_items_and_a_broken_one_fails_as_a_file(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps([RECORDS[0], {**RECORDS[1], "price_monthly_usd": -1}, 7]))
    read = read_catalog(path, SCHEMA)
    assert _ids(read) == [RECORDS[0]["id"]]
    assert [str(e).split(":")[0] for e in read.errors] == [
        f"item 2 (id {RECORDS[1]['id']!r})",
        "item 3",
    ]
    path.write_text("[" + json.dumps(RECORDS[0]) + ",")
    (error,) = read_catalog(path, SCHEMA).errors
    assert str(error).startswith("file 1: malformed JSON array")


def test_csv_cells_are_typed_by_the_schema_and_bad_ones_named(tmp_path):
    rows = list(csv.DictReader(io.StringIO(_csv_text(RECORDS[:3]))))
    rows[0]["open_source"] = "maybe"
    rows[1]["price_monthly_usd"] = "abc"
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    path = tmp_path / "c.csv"
    path.write_text(buf.getvalue())
    read = read_catalog(path, SCHEMA)
    assert _ids(read) == [RECORDS[2]["id"]]
    assert [(e.line, e.reason.split(":")[0]) for e in read.errors] == [
        (2, "open_source"),
        (3, "price_monthly_usd"),
    ]


@pytest.mark.parametrize("name", ["c.txt", "c.xml", "catalog"])
def test_an_unknown_format_is_refused_naming_the_expected_ones(tmp_path, name):
    path = tmp_path / name
    path.write_text("id,name\nx,y\n" if name != "c.xml" else "<tools/>")
    with pytest.raises(CatalogFormatError) as err:
        read_catalog(path, SCHEMA)
    assert "JSON Lines (.jsonl)" in str(err.value) and "CSV" in str(err.value)


def test_a_jsonl_file_without_extension_is_sniffed(tmp_path):
    path = tmp_path / "catalog"
    path.write_text(json.dumps(RECORDS[0]) + "\n")
    assert _ids(read_catalog(path, SCHEMA)) == [RECORDS[0]["id"]]


def test_a_rejected_line_names_its_id_even_when_it_does_not_parse(tmp_path):
    # issue 25 finding 3: --prune keeps the record of a rejected line, so its id must be read
    # even from a line cut short or not valid UTF-8; a line that shows none names none
    cut = json.dumps(RECORDS[0])[:50]
    bad_utf8 = json.dumps(RECORDS[1]).encode()[:60] + b"\xff\xfe tail"
    nan = json.dumps({**RECORDS[2], "price_monthly_usd": float("nan")})
    escaped = '{"id": "we\\"ird", "name": '
    path = tmp_path / "c.jsonl"
    path.write_bytes(
        b"\n".join(
            [cut.encode(), bad_utf8, nan.encode(), b"not json", escaped.encode(), b'{"id": 42,']
        )
        + b"\n"
    )
    read = read_catalog(path, SCHEMA)
    assert read.records == []
    assert [e.record_id for e in read.errors] == [
        RECORDS[0]["id"],
        RECORDS[1]["id"],
        RECORDS[2]["id"],
        None,
        'we"ird',
        "42",
    ]
    assert read.errors[1].reason.startswith("invalid UTF-8 at byte")


@pytest.mark.parametrize(
    ("body", "where"),
    [
        # an Excel-style Latin-1 export: the header is ASCII, the first accented cell is not UTF-8
        (
            "id,name\nokay,Okay\ncafe,Caf\xe9 Pro\n".encode("latin-1"),
            "line 3: invalid UTF-8 at byte 8",
        ),
        # a binary file with a .csv name
        (
            bytes([0x89, 0x50, 0x4E, 0x47, 0xFF, 0x0A, 0x00, 0xFE]),
            "line 1: invalid UTF-8 at byte 0",
        ),
    ],
)
def test_a_csv_that_is_not_utf8_is_refused_whole_naming_line_and_byte(tmp_path, body, where):
    # issue 25 finding 7: a UnicodeDecodeError escaped from the CSV reader (a traceback)
    path = tmp_path / "export.csv"
    path.write_bytes(body)
    with pytest.raises(CatalogFormatError) as caught:
        read_catalog(path, SCHEMA)
    assert str(caught.value).startswith(f"export.csv {where};")
