"""The npm judged query set (``benchmarks/npm_queries``): its derived files match its
judgments, every judgment is well-formed, both splits hold every kind, and the catalog
script strips the bracketed test notes and ranks deterministically. Pure: files and small
in-memory rows; no index, no model, no package list."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "benchmarks" / "npm_queries"
KINDS = {"task", "plain", "alternative", "non-english", "typo"}


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"npm_queries_{name}", FOLDER / f"{name}.py")
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
            # an answerable query has a grade-2 record and only grades 1 and 2
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


def test_queries_file_carries_kind_language_and_split() -> None:
    lines = (FOLDER / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    queries = [json.loads(line) for line in lines]
    assert [q["_id"] for q in queries] == [j["id"] for j in JUDGMENTS]
    assert all(q["split"] in BUILD.SPLITS and q["type"] in KINDS for q in queries)


def test_catalog_strips_the_tested_here_bracket_only_at_the_start() -> None:
    assert CATALOG.strip_note("[tested here: a [nested] note] Real summary") == "Real summary"
    assert CATALOG.strip_note("  Plain summary ") == "Plain summary"
    assert CATALOG.strip_note("A summary [tested here: kept]") == "A summary [tested here: kept]"
    assert CATALOG.strip_note("[tested here: only a note]") == ""
    assert CATALOG.strip_note("[tested here: never closed") == "[tested here: never closed"


def test_catalog_ranks_by_downloads_then_name_and_skips_empty_summaries(tmp_path: Path) -> None:
    # GIVEN a package list with a tie, an empty summary and a note-only summary
    tsv = tmp_path / "npm.tsv"
    tsv.write_text(
        "name\tversion\tdownloads_a_month\tsummary\n"
        "b-pkg\t1.0.0\t50\tB\n"
        "a-pkg\t1.0.0\t50\tA\n"
        "big\t2.0.0\t900\t[tested here: x] Big one\n"
        "empty\t1.0.0\t999\t\n"
        "noted\t1.0.0\t998\t[tested here: only]\n"
        "small\t1.0.0\t1\tSmall\n",
        encoding="utf-8",
    )
    # WHEN the top three are kept
    records = CATALOG.top(CATALOG.read_packages(tsv), 3)
    # THEN downloads order them, the name breaks the tie, and empty summaries are skipped
    assert [r["id"] for r in records] == ["big", "a-pkg", "b-pkg"]
    assert records[0] == {
        "id": "big",
        "name": "big",
        "summary": "Big one",
        "version": "2.0.0",
        "downloads": 900,
        "rank": 1,
    }
    assert [r["rank"] for r in records] == [1, 2, 3]
