"""Strict validation from the schema (finding 7): ids match the schema's pattern, numbers are
finite and within their declared bounds, DynamoDB ``N`` values must parse, a stream has only
INSERT / MODIFY / REMOVE, and a ``Keys`` id must equal the ``NewImage``'s. A record that fails
is reported with its line and the rest go in."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from importlib import resources

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentic_search.logic.schema import RecordError, SchemaError, load_schema
from agentic_search.sync.changes import ChangeError, ChangeOp
from agentic_search.sync.files import bundled_catalog_path, read_catalog
from agentic_search.sync.stream_records import change_from_stream_record

SCHEMA = load_schema("tools")
GOOD = json.loads(bundled_catalog_path().read_text().splitlines()[0])


@pytest.mark.parametrize(
    ("patch", "field", "reason"),
    [
        ({"id": "My Tool 23"}, "id", "pattern"),
        ({"id": "-leading-dash"}, "id", "pattern"),
        ({"price_monthly_usd": -5}, "price_monthly_usd", "greater than or equal to 0"),
        ({"price_monthly_usd": math.nan}, "price_monthly_usd", "finite"),
        ({"price_monthly_usd": -math.inf}, "price_monthly_usd", "finite"),
        ({"price_monthly_usd": "NaN"}, "price_monthly_usd", "finite"),
        ({"released": 3000}, "released", "less than or equal to 2100"),
        ({"released": 1900}, "released", "greater than or equal to 1950"),
    ],
)
def test_a_record_outside_the_schema_is_rejected_naming_the_field(patch, field, reason):
    with pytest.raises(RecordError) as err:
        SCHEMA.validate_record({**GOOD, **patch})
    assert str(err.value).startswith(f"{field}:") and reason in str(err.value)


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=0, max_value=1e6))
def test_every_finite_non_negative_price_is_accepted(price):
    assert (
        SCHEMA.validate_record({**GOOD, "price_monthly_usd": price})["price_monthly_usd"] == price
    )


def test_a_pattern_or_bounds_on_the_wrong_type_is_a_schema_error(tmp_path):
    text = (resources.files("agentic_search") / "domains" / "tools.yaml").read_text()
    bad = text.replace("  open_source: {type: boolean", "  open_source: {type: boolean, minimum: 0")
    assert bad != text
    path = tmp_path / "bad.yaml"
    path.write_text(bad)
    with pytest.raises(SchemaError, match=r"open_source.*bounds"):
        load_schema(path)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"root:x:0:0:root:/root:/bin/bash\n", "expected a YAML mapping of a domain schema"),
        (b"name: x\nfields: 3\n", "version: Field required; "),
        (b"a: [\n", "not valid YAML (line 2)"),
        (b"\x7fELF\x02\x01\x01\x00\xff\xfe", "not UTF-8 text (byte 8)"),
    ],
)
def test_a_file_that_is_no_domain_schema_is_refused_in_one_line(tmp_path, content, reason):
    # issue 25 finding 12: `--domain /etc/passwd` printed pydantic's 4-line error
    path = tmp_path / "passwd"
    path.write_bytes(content)
    with pytest.raises(SchemaError) as caught:
        load_schema(path)
    message = str(caught.value)
    assert "\n" not in message and "errors.pydantic.dev" not in message
    assert message.startswith(f"invalid domain schema in {path}: ")
    assert reason in message


def test_bad_lines_of_a_file_are_reported_with_their_numbers_and_the_rest_read(tmp_path):
    lines = [
        {**GOOD, "id": "good-one"},
        {**GOOD, "id": "My Tool 23"},
        {**GOOD, "id": "good-two"},
        {**GOOD, "id": "neg", "price_monthly_usd": -5},
    ]
    text = "\n".join(json.dumps(r) for r in lines)
    text += '\n{"id": "nan-price", "price_monthly_usd": NaN}\n'
    path = tmp_path / "c.jsonl"
    path.write_text(text)
    read = read_catalog(path, SCHEMA)
    assert [r["id"] for r in read.records] == ["good-one", "good-two"]
    assert [e.line for e in read.errors] == [2, 4, 5]


def _stream(event: str, keys_id: str, image_id: str, price: dict | None = None) -> dict:
    """A DynamoDB stream record of the first bundled record, typed by boto3's serializer."""
    from boto3.dynamodb.types import TypeSerializer

    plain = json.loads(json.dumps({**GOOD, "id": image_id}), parse_float=Decimal)
    image = {k: TypeSerializer().serialize(v) for k, v in plain.items() if v is not None}
    if price is not None:
        image["price_monthly_usd"] = price
    return {
        "eventID": "e1",
        "eventName": event,
        "eventSource": "aws:dynamodb",
        "dynamodb": {"Keys": {"id": {"S": keys_id}}, "NewImage": image, "SequenceNumber": "7"},
    }


def test_a_valid_stream_record_is_a_change():
    change = change_from_stream_record(_stream("MODIFY", "t1", "t1", {"N": "12.5"}), SCHEMA)
    assert (change.op, change.record_id, change.record["price_monthly_usd"]) == (
        ChangeOp.MODIFY,
        "t1",
        12.5,
    )


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (_stream("INSERT", "t1", "t1", {"N": "abc"}), "not a finite number"),
        (_stream("INSERT", "t1", "t1", {"N": "Infinity"}), "not a finite number"),
        (_stream("INSERT", "t1", "t1", {"N": "1e400"}), "malformed DynamoDB image"),
        (_stream("UPSERT", "t1", "t1"), "unknown eventName 'UPSERT'"),
        (_stream("insert", "t1", "t1"), "unknown eventName 'insert'"),
        (_stream("MODIFY", "t1", "t2"), "Keys.id 't1' differs from NewImage.id 't2'"),
        (_stream("INSERT", "Bad Id", "Bad Id"), "pattern"),
    ],
)
def test_a_stream_record_the_schema_does_not_allow_is_refused(record, message):
    with pytest.raises(ChangeError) as err:
        change_from_stream_record(record, SCHEMA)
    assert message in str(err.value)
