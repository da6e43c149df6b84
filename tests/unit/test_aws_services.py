"""The AWS services judged query set (``benchmarks/aws_services``): its derived files match
its judgments, every judgment is well-formed, both splits hold every kind, and the catalog
script's HTML-to-text, cut and folder rules hold on small in-memory models. Pure: files and
a temporary folder; no index, no model, no botocore (``tests/component`` reads that)."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "benchmarks" / "aws_services"
KINDS = {"task", "alternative", "time", "constraint", "identity", "non-english"}


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"aws_services_{name}", FOLDER / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BUILD = _load("build")
CATALOG = _load("catalog")
JUDGMENTS: list[dict] = BUILD.read_judgments()


def test_derived_files_match_the_judgments() -> None:
    # GIVEN the judgments WHEN the files are rendered THEN they equal what is on disk
    for rel, text in BUILD.render(JUDGMENTS).items():
        assert (FOLDER / rel).read_text(encoding="utf-8") == text, rel


def test_every_judgment_is_well_formed() -> None:
    ids = [j["id"] for j in JUDGMENTS]
    assert len(ids) == len(set(ids))
    for j in JUDGMENTS:
        assert j["kind"] in KINDS, j["id"]
        assert j["note"], j["id"]
        if j["answerable"]:
            assert 2 in j["relevant"].values(), j["id"]
            assert set(j["relevant"].values()) <= {1, 2}, j["id"]
        else:
            assert j["relevant"] == {}, j["id"]


def test_both_splits_hold_every_kind_of_answerable_query() -> None:
    split = BUILD.split_of(JUDGMENTS)
    kinds = {
        name: Counter(j["kind"] for j in JUDGMENTS if j["answerable"] and split[j["id"]] == name)
        for name in BUILD.SPLITS
    }
    assert set(kinds["tuning"]) == set(kinds["heldout"]) == KINDS
    assert any(not j["answerable"] and split[j["id"]] == "heldout" for j in JUDGMENTS)


def test_plain_text_strips_tags_and_unescapes_entities() -> None:
    html = "<fullname>Svc</fullname><p>Use <code>Get</code> &amp; <i>Put</i>.</p>\n<p>Next</p>"
    assert CATALOG.plain_text(html) == "Svc Use Get & Put. Next"
    assert CATALOG.plain_text("") == ""


def test_cut_ends_at_a_sentence_or_a_word() -> None:
    text = "One sentence here. " * 10
    assert CATALOG.cut(text, 50) == "One sentence here. One sentence here."
    assert CATALOG.cut("short", 50) == "short"
    assert CATALOG.cut("word " * 30, 22) == "word word word word"


def test_catalog_skips_a_folder_without_a_dated_model(tmp_path: Path) -> None:
    # GIVEN one service with two versions and a folder with no model
    import gzip

    for version in ("2012-01-01", "2019-05-05"):
        (tmp_path / "svc" / version).mkdir(parents=True)
        model = {
            "metadata": {"serviceFullName": "Svc " + version, "protocol": "json"},
            "documentation": "<p>Does a thing.</p>",
            "operations": {"A": {}, "B": {}},
        }
        with gzip.open(tmp_path / "svc" / version / "service-2.json.gz", "wt") as fh:
            json.dump(model, fh)
    (tmp_path / "empty" / "2020-01-01").mkdir(parents=True)
    # WHEN the catalog is read THEN the newest model is described, dated by the oldest
    assert CATALOG.catalog(tmp_path) == [
        {
            "id": "svc",
            "name": "Svc 2019-05-05",
            "summary": "Does a thing.",
            "api_version": "2019-05-05",
            "released": 2012,
            "protocol": "json",
            "operations": 2,
            "signing_name": "svc",
        }
    ]
