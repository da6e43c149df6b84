"""Short names: a catalog whose names open with a brand word ("Amazon DynamoDB") is named
without it in queries ("alternative to DynamoDB"), and by the initials the record's own text
uses ("SQS"); only where the query writes them as names (pure: records, no index)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentic_search.logic.entities import brand_prefixes, fold, name_variants, short_names
from agentic_search.logic.intent import CatalogLookup
from agentic_search.logic.intent_rules import RuleBasedIntentExtractor
from agentic_search.logic.schema import DomainSchema, load_schema

ROOT = Path(__file__).resolve().parents[3]
AWS_YAML = ROOT / "benchmarks" / "aws_services" / "aws.yaml"
TOOLS = ROOT / "layers" / "core" / "agentic_search" / "data" / "tools.jsonl"

#: (id, name, summary): twelve names open with "Amazon", as a cloud catalog's do
RECORDS = [
    ("dynamodb", "Amazon DynamoDB", "A fast NoSQL key-value database."),
    ("dynamodbstreams", "Amazon DynamoDB Streams", "Change streams of DynamoDB tables."),
    ("sqs", "Amazon Simple Queue Service", "Amazon SQS is a hosted queue for messages."),
    ("sns", "Amazon Simple Notification Service", "Push notifications and pub/sub topics."),
    ("connect", "Amazon Connect", "A contact center in the cloud."),
    ("redshift", "Amazon Redshift", "A data warehouse for analytics queries."),
    ("route53", "Amazon Route 53", "A DNS web service."),
    ("s3", "Amazon S3", "Object storage."),
    ("translate", "Amazon Translate", "Neural machine translation."),
    ("polly", "Amazon Polly", "Turns text into lifelike speech."),
    ("kinesis", "Amazon Kinesis", "Real-time data streams."),
    ("athena", "Amazon Athena", "Serverless SQL over files in S3."),
    ("lambda", "AWS Lambda", "Run code without servers."),
    ("csv-tool", "CSV Studio", "Edit CSV files."),
]


@pytest.fixture(scope="module")
def schema() -> DomainSchema:
    return load_schema(AWS_YAML)


@pytest.fixture(scope="module")
def lookup(schema: DomainSchema) -> CatalogLookup:
    rows = {rid: {"id": rid, "name": name, "summary": text} for rid, name, text in RECORDS}
    payloads = [{"id": r["id"], "name": r["name"]} for r in rows.values()]
    return CatalogLookup.of(schema, payloads, record=rows.get)


def linked(lookup: CatalogLookup, query: str) -> list[tuple[str, str]]:
    assert lookup.linker is not None
    return [(lk.id, lk.surface) for lk in lookup.linker.link(query).entities]


@pytest.mark.parametrize(
    ("query", "want"),
    [
        ("alternative to DynamoDB", [("dynamodb", "DynamoDB")]),
        ("alternative to dynamodb", [("dynamodb", "dynamodb")]),  # a naming context
        ("DynamoDB Streams for my tables", [("dynamodbstreams", "DynamoDB Streams")]),
        ("dynamodb streams for my tables", []),  # lowercase, no naming context
        ("something like SQS but for streaming", [("sqs", "SQS")]),  # initials its text uses
        ("Route 53", [("route53", "Route 53")]),
        ("Amazon Redshift", [("redshift", "Amazon Redshift")]),  # the full name, as before
        ("connect to a database from my app", []),  # an ordinary word
        ("Connect my app to a queue", []),  # capitalized only because it opens the query
        ("call centre like Connect", [("connect", "Connect")]),
        ("translate text into Spanish", []),
        ("trigger a lambda function", []),
        ("SNS topics", []),  # initials its own text does not use
        ("parse CSV files", []),  # no brand word: CSV Studio is not "CSV"
    ],
)
def test_short_names_link_only_where_written_as_a_name(
    lookup: CatalogLookup, query: str, want: list[tuple[str, str]]
):
    assert linked(lookup, query) == want


def test_the_reference_of_an_alternative_is_the_short_named_record(
    schema: DomainSchema, lookup: CatalogLookup
):
    x = RuleBasedIntentExtractor(schema, lookup, today=lambda: date(2026, 12, 4))
    intent = x.extract("alternative to DynamoDB")
    assert intent.primary_goal == "alternative-to"
    assert intent.reference_tool == "dynamodb"


def test_brand_words_need_a_share_and_a_count():
    titles = [fold(f"Amazon {w}") for w in "abcdefghij"] + ["the x", "the y"] * 10
    assert brand_prefixes(titles, min_share=0.05, min_names=10) == {"amazon"}  # "the": a stopword
    assert brand_prefixes(titles[:9], min_share=0.05, min_names=10) == set()
    assert brand_prefixes(titles, min_share=0.5, min_names=1) == set()


def test_the_bundled_tools_catalog_has_no_brand_word():
    """Its names' shared first words (GitHub, Gemini, Stable) open a few names each: nothing is
    linked by a short name there, so its readings are as before."""
    rows = [json.loads(line) for line in TOOLS.read_text().splitlines() if line.strip()]
    named = [(r["id"], name_variants(r["name"])) for r in rows]
    assert not short_names(named, min_share=0.05, min_names=10)


@given(
    st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta db", "queue service"]), max_size=8)
)
def test_a_short_name_names_one_record_and_no_full_name(rests: list[str]):
    named = [(f"r{i}", [fold(f"Amazon {r}")]) for i, r in enumerate(rests)]
    named += [(f"b{i}", [fold(f"Amazon brand{i}")]) for i in range(10)]
    named.append(("plain", ["beta"]))
    got = short_names(named, min_share=0.05, min_names=10)
    full = {n for _, names in named for n in names}
    for name, rid in got.names.items():
        assert name not in full
        assert [r for r, names in named if fold(f"Amazon {name}") in names] == [rid]


def test_initials_are_read_from_the_record_only_when_a_query_writes_them(schema: DomainSchema):
    rows = {rid: {"id": rid, "name": name, "summary": text} for rid, name, text in RECORDS}
    reads: list[str] = []

    def record(rid: str) -> dict | None:
        reads.append(rid)
        return rows.get(rid)

    payloads = [{"id": r["id"], "name": r["name"]} for r in rows.values()]
    lookup = CatalogLookup.of(schema, payloads, record=record)
    assert reads == []  # building the lookup reads no record's text
    assert linked(lookup, "something like SQS but for streaming") == [("sqs", "SQS")]
    assert linked(lookup, "like SQS") == [("sqs", "SQS")]
    assert reads == ["sqs"]  # read once, then remembered
    assert linked(lookup, "like SNS") == [] and reads == ["sqs", "sns"]
