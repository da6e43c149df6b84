"""Readers never block (issue 47, items 1 and 2, and its concurrency "Done when").

A CLI search is a reader: with ``serve`` over the folder it asks serve over loopback; without
one it searches a private copy of the index taken while no writer is at work (waiting for
one, never failing for one), so any number of searches run beside each other and beside a
write, and each answers from a committed state: the whole ranking of the state before the
write or of the state after it, never a mix. See docs/concurrency.md.

No assertion here depends on timing: events are lines a process prints, a byte it wrote, or
its exit; the searches of the concurrency tests start together and their answers are
compared with the answers of the two committed states, whatever order they ran in.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support.cli import run_cli, serving_process
from support.homes import copy_home

ENV = {"VECTOR_STORE": "edge", "CACHE_BACKEND": "none", "OMP_WAIT_POLICY": "PASSIVE"}
QUERY = "Quorvex Zenterprise code editor"
CLI = (sys.executable, "-m", "agentic_search_cli.main")


def _line(record: dict) -> str:
    return json.dumps(record) + "\n"


@pytest.fixture(scope="module")
def base_home(tmp_path_factory: pytest.TempPathFactory, catalog_records) -> Path:
    """A folder whose Edge index holds 30 records of the bundled catalog (CLI ingest)."""
    home = tmp_path_factory.mktemp("readers-home")
    catalog = home.parent / "readers-catalog.jsonl"
    catalog.write_text("".join(map(_line, catalog_records[:30])))
    done = run_cli(home, "ingest", str(catalog), timeout=900, **ENV)
    assert done.returncode == 0, done.stderr
    return home


@pytest.fixture()
def home(base_home: Path, tmp_path: Path) -> Path:
    """A copy of :func:`base_home` of the test's own (it may write it)."""
    return copy_home(base_home, tmp_path / "home")


@pytest.fixture()
def new_records(catalog_records, tmp_path: Path) -> Path:
    """A catalog file of 3 records the index does not hold, all found by :data:`QUERY`."""
    base = catalog_records[0]
    path = tmp_path / "new.jsonl"
    path.write_text(
        "".join(
            _line(dict(base, id=f"quorvex-{i}", name=f"Quorvex Zenterprise {i}", vendor="Quorvex"))
            for i in range(3)
        )
    )
    return path


def _ids(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The ranked ids of a ``search --json`` that exited 0 (its stderr otherwise)."""
    assert done.returncode == 0, done.stderr
    return [c["id"] for c in json.loads(done.stdout)["candidates"]]


def _search(home: Path, query: str = QUERY) -> subprocess.CompletedProcess[str]:
    return run_cli(home, "search", query, "--json", "--limit", "10", timeout=900, **ENV)


def test_search_while_serve_runs_is_answered_by_serve(home: Path) -> None:
    """GIVEN serve running over the folder (it holds the index for writing) WHEN the CLI
    searches it THEN the search exits 0 with the ranking serve itself answers over HTTP,
    saying on stderr that serve answered (on cc55ef0: exit 1, "open for writing by another
    process")."""
    with serving_process(home, "--workers", "1", **ENV) as (_proc, url):
        done = _search(home)
        import urllib.request

        req = urllib.request.Request(
            f"{url}/search",
            data=json.dumps({"query": QUERY, "limit": 10}).encode(),
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=600) as resp:
            direct = [c["id"] for c in json.loads(resp.read())["candidates"]]
        table = run_cli(home, "search", QUERY, "--explain", timeout=900, **ENV)
    assert _ids(done) == direct and direct
    assert "holds the index; asking it" in done.stderr
    assert table.returncode == 0, table.stderr
    assert "results for" in table.stdout


def test_second_search_while_the_first_has_the_index_open(home: Path) -> None:
    """GIVEN a search that has its answer ready and is still running (its stdout, a pipe
    nobody reads past its first byte, is full: it has the index open) WHEN a second search
    of the same folder runs THEN it exits 0, and the first one too once read (on cc55ef0 the
    second exits 1: the first, a reader, held the writer lock)."""
    first = subprocess.Popen(
        [*CLI, "search", QUERY, "--json", "--limit", "100"],
        env={**os.environ, "AGENTIC_SEARCH_HOME": str(home), **ENV},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert first.stdout is not None and first.stderr is not None
        head = first.stdout.read(1)  # the first is writing its answer (~280 KB > a pipe)
        assert head == b"{", first.stderr.read().decode()
        second = _search(home)
        assert _ids(second), second.stderr
        rest = first.stdout.read()
        assert first.wait(timeout=600) == 0, first.stderr.read().decode()
        assert json.loads(head + rest)["candidates"]
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()


def test_a_search_waits_for_a_writer_at_work_then_reads_its_committed_state(
    home: Path, new_records: Path
) -> None:
    """GIVEN a writer holding the folder's index (an Edge store of this process that took
    the writer lock and wrote 3 records, not yet closed) WHEN the CLI searches THEN it says
    it waits for that pid, does not fail, and once the writer closes answers with the
    records it wrote (on cc55ef0: exit 1 at once)."""
    from agentic_search.config import Settings
    from agentic_search.service import SearchService

    settings = Settings(agentic_search_home=home, vector_store="edge", cache_backend="none")
    writer = SearchService.create(settings, "tools")
    try:
        writer.deps.store.acquire_writer(writer.schema)
        report = writer.ingest_file(new_records)
        assert report.valid == 3 and not report.errors
        search = subprocess.Popen(
            [*CLI, "search", QUERY, "--json"],
            env={**os.environ, "AGENTIC_SEARCH_HOME": str(home), **ENV},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert search.stderr is not None
        said = ""
        for line in search.stderr:  # until the search says it waits (or ends)
            said += line
            if "being written" in line:
                break
        assert f"being written by another process (pid {os.getpid()})" in said, said
    finally:
        writer.close()
    out, err = search.communicate(timeout=900)
    assert search.returncode == 0, err
    found = [c["id"] for c in json.loads(out)["candidates"]]
    assert {"quorvex-0", "quorvex-1", "quorvex-2"} & set(found), found


def _together(n: int, job) -> list:
    """Run ``job(i)`` for i in 0..n-1 in n threads released at once; their results."""
    start = threading.Barrier(n)

    def run(i: int):
        start.wait()
        return job(i)

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(run, range(n)))


def _searches_beside_an_ingest(home: Path, new_records: Path, searches: int) -> None:
    """Search (the state before), then ``searches`` CLI searches and one CLI ingest of
    ``new_records`` released together, then search again (the state after): every command
    exits 0, the ingest changed the answer, and every search's ranking is the whole ranking
    of the state before or of the state after."""
    before = _ids(_search(home))

    def job(i: int) -> subprocess.CompletedProcess[str]:
        if i == 0:
            return run_cli(home, "ingest", str(new_records), timeout=900, **ENV)
        return _search(home)

    done = _together(searches + 1, job)
    assert done[0].returncode == 0, done[0].stderr
    answers = [_ids(d) for d in done[1:]]
    after = _ids(_search(home))
    assert "quorvex-0" in after and not any(i.startswith("quorvex") for i in before)
    torn = [a for a in answers if a not in (before, after)]
    assert not torn, f"{len(torn)} answers of no committed state: {torn[:2]}"


def test_searches_beside_an_ingest_without_serve_all_answer_a_committed_state(
    home: Path, new_records: Path
) -> None:
    """GIVEN the folder with no serve WHEN 4 CLI searches and one CLI ingest of 3 new
    records start together THEN all exit 0 and every search's ranking is the one of the
    index before the ingest or after it, never a mix."""
    _searches_beside_an_ingest(home, new_records, searches=4)


def test_eight_searches_an_ingest_and_serve_at_once(home: Path, new_records: Path) -> None:
    """The issue's concurrency test: GIVEN serve --workers 2 over the folder WHEN 8 CLI
    searches and one CLI ingest of 3 new records start together THEN 0 failures: every
    command exits 0 (the ingest and the searches go through serve), and every search's
    ranking is the one serve answers before the ingest or after it."""
    with serving_process(home, "--workers", "2", **ENV):
        _searches_beside_an_ingest(home, new_records, searches=8)


TOOLS_QUERIES = Path(__file__).resolve().parents[2] / "benchmarks" / "tools_queries"


def test_mcp_eval_and_bench_beside_serve_read_a_copy_serve_took(home: Path, tmp_path) -> None:
    """GIVEN serve running over the folder (it holds every bundled shard for writing) WHEN
    ``mcp``, ``eval`` of the index as it is and ``bench`` run beside it THEN each exits 0 (mcp:
    its search answers what serve answers, a follow-up with history too) instead of failing on
    the writer lock: mcp and eval read a copy serve took for them (``/_local/copy``), deleted
    when they end; bench's golden set runs in an index of its own."""
    import anyio
    from mcp import Client, StdioServerParameters

    env = {**os.environ, "AGENTIC_SEARCH_HOME": str(home), **ENV}
    with serving_process(home, "--workers", "1", **ENV) as (_proc, url):
        import urllib.request

        def direct(body: dict) -> list[str]:
            req = urllib.request.Request(
                f"{url}/search",
                data=json.dumps(body).encode(),
                headers={"content-type": "application/json"},
            )
            with urllib.request.urlopen(req, timeout=600) as resp:
                return [c["id"] for c in json.loads(resp.read())["candidates"]]

        async def session() -> tuple[list[str], list[str], str]:
            params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp"], env=env)
            async with Client(params, mode="legacy") as client:
                first = await client.call_tool("search", {"query": QUERY, "limit": 5})
                shown = [c["id"] for c in first.structured_content["candidates"]]
                history = [{"query": QUERY, "ids": shown}]
                second = await client.call_tool(
                    "search", {"query": "not that one", "limit": 5, "history": history}
                )
                content = second.structured_content
                return shown, [c["id"] for c in content["candidates"]], content["followUp"]["kind"]

        shown, excluded, kind = anyio.run(session)
        assert shown and shown == direct({"query": QUERY, "limit": 5})
        history = [{"query": QUERY, "ids": shown}]
        assert kind == "exclude" and shown[0] not in excluded
        assert excluded == direct({"query": "not that one", "limit": 5, "history": history})
        evaluated = run_cli(
            home,
            "eval",
            "--dataset",
            str(TOOLS_QUERIES),
            "--domain",
            "tools",
            "--split",
            "heldout",
            "--max-queries",
            "2",
            "--allow-errors",
            timeout=900,
            **ENV,
        )
        assert evaluated.returncode == 0, evaluated.stderr
        assert "reading a copy it took" in evaluated.stderr
        bench = run_cli(
            home,
            "bench",
            "--no-golden",
            "--import-runs",
            "1",
            "--ingest-docs",
            "5",
            "--warmup",
            "0",
            "--out",
            str(tmp_path / "bench"),
            timeout=900,
            **ENV,
        )
        assert bench.returncode == 0, bench.stderr
        runs = home / "run"
        left = [p.name for p in runs.iterdir()] if runs.is_dir() else []
        assert not [n for n in left if n.startswith(("mcp-", "eval-"))], left


# ----- a long mcp session follows the index's writes --------------------------------------------


def _mcp_ids(result) -> list[str]:
    """The ranked ids of an mcp ``search`` tool call that did not fail."""
    assert result.is_error is False, result.content
    return [c["id"] for c in result.structured_content["candidates"]]


def _copies(home: Path, prefix: str) -> list[str]:
    """The private copy folders ``<prefix>-*`` under the folder's ``run``."""
    runs = home / "run"
    return sorted(p.name for p in runs.glob(f"{prefix}-*")) if runs.is_dir() else []


def test_mcp_alone_finds_records_ingested_after_it_started(home: Path, new_records: Path) -> None:
    """GIVEN ``agentic-search mcp`` with no serve, its copy of the index taken at its first
    search (the result cache on) WHEN a writer of this process ingests 3 new records and keeps
    the index open, then closes it THEN the search meanwhile answers the copy it has (no
    failure, no wait), and the next one, without a restart, finds the new records: the server
    took a fresh copy (one copy folder, the old one deleted) and the result cache did not give
    back the answer of the copy before the write, not even the one searched while the writer
    was at work (before: the records were never found until a restart)."""
    import anyio
    from mcp import Client, StdioServerParameters

    from agentic_search.config import Settings
    from agentic_search.service import SearchService

    env = {**os.environ, "AGENTIC_SEARCH_HOME": str(home), **ENV, "CACHE_BACKEND": "sqlite"}
    settings = Settings(agentic_search_home=home, vector_store="edge", cache_backend="sqlite")
    arguments = {"query": QUERY, "limit": 10}

    async def session() -> tuple[list[str], list[str], list[str], list[str]]:
        params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp"], env=env)
        async with Client(params, mode="legacy") as client:
            before = _mcp_ids(await client.call_tool("search", arguments))
            writer = SearchService.create(settings, "tools")
            try:
                writer.deps.store.acquire_writer(writer.schema)
                report = await anyio.to_thread.run_sync(writer.ingest_file, new_records)
                assert report.valid == 3 and not report.errors
                during = _mcp_ids(await client.call_tool("search", arguments))
            finally:
                writer.close()
            after = _mcp_ids(await client.call_tool("search", arguments))
            return before, during, after, _copies(home, "search")

    before, during, after, copies = anyio.run(session)
    assert before and not any(i.startswith("quorvex") for i in before)
    assert during == before
    assert "quorvex-0" in after, after
    assert len(copies) == 1, copies
    assert _copies(home, "search") == []


def test_mcp_beside_serve_finds_records_ingested_through_serve(
    home: Path, new_records: Path
) -> None:
    """GIVEN ``agentic-search mcp`` beside a running serve (it searches a copy serve took)
    WHEN ``agentic-search ingest`` hands 3 new records to serve THEN the next mcp search,
    without a restart, finds them, as serve's own search does, and only the new copy folder
    is left while it runs (none once it ends)."""
    import urllib.request

    import anyio
    from mcp import Client, StdioServerParameters

    env = {**os.environ, "AGENTIC_SEARCH_HOME": str(home), **ENV}
    arguments = {"query": QUERY, "limit": 10}
    with serving_process(home, "--workers", "1", **ENV) as (_proc, url):

        async def session() -> tuple[list[str], list[str], list[str]]:
            params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp"], env=env)
            async with Client(params, mode="legacy") as client:
                before = _mcp_ids(await client.call_tool("search", arguments))
                done = await anyio.to_thread.run_sync(
                    lambda: run_cli(home, "ingest", str(new_records), timeout=900, **ENV)
                )
                assert done.returncode == 0, done.stderr
                after = _mcp_ids(await client.call_tool("search", arguments))
                return before, after, _copies(home, "mcp")

        before, after, copies = anyio.run(session)
        req = urllib.request.Request(
            f"{url}/search",
            data=json.dumps(arguments).encode(),
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=600) as resp:
            direct = [c["id"] for c in json.loads(resp.read())["candidates"]]
    assert before and not any(i.startswith("quorvex") for i in before)
    assert "quorvex-0" in after and after == direct
    assert len(copies) == 1, copies
    assert _copies(home, "mcp") == []
