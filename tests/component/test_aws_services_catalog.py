"""The AWS services catalog (``benchmarks/aws_services/catalog.py``) over the installed
botocore's shipped service models: every record has the documented fields, an integer year, an
operation count and a plain-text summary (no HTML left), in id order, and every service the
judgments name is in it. Reads botocore's data files (a few seconds); no index, no model."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "benchmarks" / "aws_services"
FIELDS = {
    "id",
    "name",
    "summary",
    "api_version",
    "released",
    "protocol",
    "operations",
    "signing_name",
}


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"aws_services_{name}", FOLDER / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BUILD = _load("build")
CATALOG = _load("catalog")


@cache
def _records() -> list[dict]:
    """The catalog of the installed botocore (skips the test when botocore is missing)."""
    pytest.importorskip("botocore")
    return CATALOG.catalog(CATALOG.default_data())


def test_judged_services_are_in_the_catalog() -> None:
    # GIVEN the installed botocore's catalog WHEN every judged id is looked up THEN it exists
    ids = {r["id"] for r in _records()}
    missing = {(j["id"], s) for j in BUILD.read_judgments() for s in j["relevant"] if s not in ids}
    assert not missing


def test_catalog_records_are_valid_and_plain_text() -> None:
    records = _records()
    assert len(records) > 100
    assert [r["id"] for r in records] == sorted(r["id"] for r in records)
    for r in records:
        assert set(r) == FIELDS, r["id"]
        assert isinstance(r["released"], int) and 2000 <= r["released"] <= 2100, r["id"]
        assert isinstance(r["operations"], int) and r["operations"] >= 0, r["id"]
        assert r["api_version"][:4].isdigit() and int(r["api_version"][:4]) >= r["released"]
        assert r["name"] and r["protocol"], r["id"]
        assert "<" not in r["summary"] and ">" not in r["summary"], r["id"]
        assert "&amp;" not in r["summary"] and "  " not in r["summary"], r["id"]
        assert len(r["summary"]) <= CATALOG.SUMMARY_CHARS, r["id"]
