"""A result-cache hit on the command line: answered before anything opens the engine or loads
the model, the same answer as the search that filled it, and never stale after a write.

GIVEN a copy of the session's indexed folder (bundled catalog) and the SQLite result cache
WHEN ``agentic-search search`` runs twice in fresh processes (the second under
``PYTHONPROFILEIMPORTTIME``, which lists every module the process imported) THEN the second
answers from the cache without importing the Qdrant Edge engine, onnxruntime or the tokenizer,
with the first's JSON; an ingest between two searches makes the next one a miss that shows the
change, and a hit is refused as a miss would be when the index was built by another embedder.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

from support.cli import run_cli

QUERY = "free code editor"
#: The engine and the model a cache hit has no use for (what the process must not import),
#: nor numpy (the vectors' arrays) or the graph's runner (a hit never walks it).
ENGINE_AND_MODEL = (
    "qdrant_edge",
    "onnxruntime",
    "tokenizers",
    "numpy",
    "agentic_search.adapters.edge.store",
    "agentic_search.pipeline.runner",
    "agentic_search.pipeline.asl",
)


def _search(home: Path, *argv: str, **env: str) -> dict:
    proc = run_cli(home, "search", QUERY, "--json", *argv, CACHE_BACKEND="sqlite", **env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _imported(stderr: str) -> set[str]:
    """The modules ``-X importtime`` reports on stderr (``import time: self | cum | name``)."""
    return {
        line.rsplit("|", 1)[1].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:") and "cumulative" not in line
    }


def test_a_cache_hit_imports_no_engine_nor_model_and_answers_as_the_search_that_filled_it(
    indexed_home,
):
    # GIVEN a search that filled the cache
    first = _search(indexed_home)
    assert first["cache"]["hit"] is False and first["candidates"]
    # WHEN the same search runs again in a fresh process that lists its imports
    proc = run_cli(
        indexed_home,
        "search",
        QUERY,
        "--json",
        CACHE_BACKEND="sqlite",
        PYTHONPROFILEIMPORTTIME="1",
    )
    # THEN it is a hit that imported neither the engine nor the model
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = _imported(proc.stderr)
    assert "agentic_search.service" in imported  # the listing is there
    assert not imported & set(ENGINE_AND_MODEL), sorted(imported & set(ENGINE_AND_MODEL))
    # AND its JSON is the first one's, but for the cache note: a hit, when it was computed
    # and how long the lookup took
    again = json.loads(proc.stdout)
    note = dict(again["cache"])
    computed, took = note.pop("computedAt"), note.pop("lookupMs")
    assert note == {**first["cache"], "hit": True}
    assert datetime.fromisoformat(computed).tzinfo is not None and took >= 0
    assert {k: v for k, v in again.items() if k != "cache"} == {
        k: v for k, v in first.items() if k != "cache"
    }


def test_the_table_of_a_cache_hit_is_the_uncached_table_and_imports_no_engine(indexed_home):
    # GIVEN a search that filled the cache, and the same search's table without the cache
    assert _search(indexed_home)["cache"]["hit"] is False
    uncached = run_cli(indexed_home, "search", QUERY, CACHE_BACKEND="none")
    assert uncached.returncode == 0, uncached.stderr
    # WHEN the table is asked for again, answered by the cache, in a process listing imports
    hit = run_cli(
        indexed_home, "search", QUERY, CACHE_BACKEND="sqlite", PYTHONPROFILEIMPORTTIME="1"
    )
    # THEN the same table is printed, then when it was computed and how long the lookup took,
    # and neither the engine nor the model was imported
    assert hit.returncode == 0, hit.stderr[-2000:]
    table, _, note = hit.stdout.rstrip("\n").rpartition("\n")
    assert table + "\n" == uncached.stdout and f"results for {QUERY!r}" in table
    assert re.fullmatch(
        r"from the result cache: computed \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, "
        r"looked up in \d+\.\d ms",
        note,
    ), note
    imported = _imported(hit.stderr)
    assert "agentic_search_cli.render" in imported
    assert not imported & set(ENGINE_AND_MODEL), sorted(imported & set(ENGINE_AND_MODEL))


def test_an_ingest_between_two_searches_makes_the_next_a_miss_that_shows_the_change(
    indexed_home, tmp_path
):
    # GIVEN a cached search whose top candidate is a record of the catalog
    before = _search(indexed_home)
    top = before["candidates"][0]
    record = _catalog_record(top["id"])
    # WHEN that record is ingested again under a new name
    renamed = {**record, "name": f"{record['name']} Renamed"}
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(renamed) + "\n", encoding="utf-8")
    proc = run_cli(indexed_home, "ingest", str(path), "--domain", "tools", CACHE_BACKEND="sqlite")
    assert proc.returncode == 0, proc.stderr
    # THEN the next search is a miss on a newer catalog version, showing the new name
    after = _search(indexed_home)
    assert after["cache"]["hit"] is False
    assert after["cache"]["catalogVersion"] > before["cache"]["catalogVersion"]
    names = {c["id"]: c["metadata"]["name"] for c in after["candidates"]}
    assert names.get(top["id"]) == renamed["name"]
    # AND the one after is a hit with that answer
    again = _search(indexed_home)
    assert again["cache"]["hit"] is True and again["candidates"] == after["candidates"]


def test_a_cache_hit_is_refused_when_the_index_was_built_by_another_embedder(indexed_home):
    # GIVEN a search that filled the cache (the index built by the default MiniLM)
    assert _search(indexed_home)["cache"]["hit"] is False
    # WHEN the same search runs with another local embedder configured
    proc = run_cli(
        indexed_home, "search", QUERY, "--json", "--embedder", "e5-small", CACHE_BACKEND="sqlite"
    )
    # THEN it is refused as an uncached search is: one line naming both embedders, exit 1
    assert proc.returncode == 1 and not proc.stdout
    assert "was built by embedder" in proc.stderr and "Traceback" not in proc.stderr


def _catalog_record(record_id: str) -> dict:
    from agentic_search.sync.files import bundled_catalog_path

    for line in bundled_catalog_path().read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["id"] == record_id:
            return record
    raise AssertionError(f"{record_id!r} is not in the bundled catalog")


def test_a_search_under_other_answer_settings_is_never_served_the_cached_answer(indexed_home):
    # GIVEN a search that filled the cache on the rules
    first = _search(indexed_home)
    assert first["cache"]["hit"] is False
    # WHEN the same query runs with the LLM turned on (an endpoint that refuses: the rules
    # answer, noted as a fallback) and, apart, with another MAX_ROUNDS
    with_llm = _search(
        indexed_home,
        LLM="on",
        LLM_PROVIDER="openai",
        OPENAI_BASE_URL="http://127.0.0.1:9/v1",
        LLM_MAX_RETRIES="0",
    )
    one_round = _search(indexed_home, MAX_ROUNDS="1")
    # THEN neither is answered from the rules' cached entry: each ran its own search
    assert with_llm["cache"]["hit"] is False
    assert with_llm["cache"]["key"] != first["cache"]["key"]
    assert one_round["cache"]["hit"] is False
    assert one_round["cache"]["key"] != first["cache"]["key"]
    # AND the first settings still find their entry
    assert _search(indexed_home)["cache"]["hit"] is True


#: A fresh interpreter that runs ``agentic-search`` (the console script's ``entry``) noting
#: whether the garbage collector was on when the table was printed and when the search ran,
#: then writes that, the exit code, the collector's state after and how many objects were
#: frozen for the exit as JSON on stderr.
_NOTE_COLLECTOR = """
import gc, json, sys
from agentic_search.service import SearchService
from agentic_search_cli import render
from agentic_search_cli.main import entry
seen = {}
def noting(name, fn):
    def wrapper(*args, **kwargs):
        seen[name] = gc.isenabled()
        return fn(*args, **kwargs)
    return wrapper
render.print_search = noting("table", render.print_search)
SearchService.search = noting("search", SearchService.search)
sys.argv = ["agentic-search", *sys.argv[1:]]
code = entry()
sys.stderr.write(json.dumps({**seen, "code": code, "on": gc.isenabled(),
                             "frozen": gc.get_freeze_count()}) + "\\n")
"""


def _collector(home: Path, *argv: str, **env: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", _NOTE_COLLECTOR, *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "AGENTIC_SEARCH_HOME": str(home), **env},
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stderr.strip().splitlines()[-1])


def test_a_cache_hit_runs_with_the_collector_paused_and_a_miss_resumes_it(indexed_home):
    # GIVEN a search that filled the cache
    assert _search(indexed_home)["cache"]["hit"] is False
    # WHEN the same search runs in a fresh process noting the garbage collector's state
    hit = _collector(indexed_home, "search", QUERY, CACHE_BACKEND="sqlite")
    # THEN the hit printed its table with the collector paused (no pass over what start-up
    # made), never ran a search, and ended with the collector on and its objects frozen
    assert hit["code"] == 0
    assert hit["table"] is False and "search" not in hit
    assert hit["on"] is True and hit["frozen"] > 10_000
    # AND a search that runs (no cache) has the collector on for its work
    miss = _collector(indexed_home, "search", QUERY, CACHE_BACKEND="none")
    assert miss["code"] == 0 and miss["search"] is True and miss["table"] is True


def test_importing_the_command_line_imports_neither_pydantic_nor_the_settings():
    # the parser (every command's options) needs argparse only: the settings and the core
    # load once a command runs, with the collector paused (common.collector_paused)
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import agentic_search_cli.main"],
        capture_output=True,
        text=True,
        check=True,
    )
    imported = _imported(proc.stderr)
    assert "agentic_search_cli.cmd_search" in imported  # the listing is there
    assert not imported & {"pydantic", "pydantic_settings", "agentic_search.config"}
