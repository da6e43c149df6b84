"""Writes while ``serve`` runs (issue 25, items 5 and 16).

``agentic-search ingest`` and ``sync`` over a folder that ``serve --workers 2`` holds hand their
write to the server (``serve.json`` beside the shard locks; the loopback write routes), which
applies it with its own writer and gives its workers fresh copies before the command returns:
the command succeeds, rejected lines keep their line numbers, ``--prune`` deletes what the file
no longer holds, the new records are searchable through ``serve`` when the command returns, and
no search sent meanwhile fails. A second ``serve`` on the folder, or one on a port in use, stops
at once with one line naming the holder's pid or the port (exit 1), before any worker starts.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import run_cli

ENV = {"VECTOR_STORE": "edge", "CACHE_BACKEND": "none"}


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "AGENTIC_SEARCH_HOME": str(home), **ENV}


def _line(record: dict) -> str:
    return json.dumps(record) + "\n"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, catalog_records) -> Path:
    """A home whose Edge index holds 30 records of the bundled catalog (CLI ingest)."""
    home = tmp_path_factory.mktemp("serve-ingest-home")
    catalog = home / "catalog.jsonl"
    catalog.write_text("".join(map(_line, catalog_records[:30])))
    done = run_cli(home, "ingest", str(catalog), timeout=600, **ENV)
    assert done.returncode == 0, done.stderr
    return home


@pytest.fixture(scope="module")
def served(home: Path) -> Iterator[tuple[subprocess.Popen, str]]:
    """``serve --workers 2 --port 0`` over ``home``: the process and its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentic_search_cli.main", "serve", "--port", "0", "--workers", "2"],
        env=_env(home),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if m := re.search(r"serving on (http://[\d.]+:\d+)", line):
                url = m.group(1)
                break
        else:
            raise AssertionError(f"serve did not start (rc {proc.wait()})")
        # keep reading its stderr so that it never blocks on a full pipe
        threading.Thread(target=proc.stderr.read, daemon=True).start()
        yield proc, url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()


def _search(url: str, query: str, domain: str = "tools") -> tuple[int, list[str]]:
    req = urllib.request.Request(
        f"{url}/search",
        data=json.dumps({"query": query, "limit": 5, "domain": domain}).encode(),
        headers={"content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=300) as resp:
            return resp.status, [c["id"] for c in json.loads(resp.read())["candidates"]]
    except urllib.error.HTTPError as err:
        return err.code, []


class _Searches:
    """Searches sent back to back by ``clients`` threads until :meth:`stop`; every status is
    kept."""

    def __init__(self, url: str, clients: int = 4) -> None:
        self.url = url
        self.statuses: list[int | str] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, daemon=True) for _ in range(clients)]

    def _run(self) -> None:
        while True:  # one search at least, whenever the stop comes
            try:
                status: int | str = _search(self.url, "free code editor")[0]
            except OSError as exc:  # a refused or reset connection is a failed request
                status = type(exc).__name__
            self.statuses.append(status)
            if self._stop.is_set():
                return

    def __enter__(self) -> _Searches:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=300)


def test_ingest_while_serving_goes_through_serve_and_no_search_fails(
    served, home: Path, catalog_records, tmp_path: Path
) -> None:
    """GIVEN serve --workers 2 answering searches non-stop WHEN `ingest` of a file with 3 new
    records and a rejected line 2 runs THEN it exits 0 reporting line 2, the 3 records are
    found through serve as soon as it returns, and every search meanwhile answered 200; AND
    `ingest --prune` of a file without one of them deletes it from what serve answers."""
    proc, url = served
    base = catalog_records[0]
    new = [
        dict(base, id=f"quorvex-{i}", name=f"Quorvex Zenterprise {i}", vendor="Quorvex Labs")
        for i in range(3)
    ]
    first = tmp_path / "new.jsonl"
    first.write_text(_line(new[0]) + '{"id": "broken-line"}\n' + _line(new[1]) + _line(new[2]))
    with _Searches(url) as searches:
        done = run_cli(home, "ingest", str(first), timeout=600, **ENV)
    assert done.returncode == 0, done.stderr
    assert f"serve (pid {proc.pid}" in done.stderr  # handed over, not refused
    assert "ingested 3 of 4 lines" in done.stdout and "3 new" in done.stdout, done.stdout
    assert "line 2 (id 'broken-line')" in done.stdout, done.stdout
    assert searches.statuses and set(searches.statuses) == {200}, searches.statuses
    status, found = _search(url, "Quorvex Zenterprise")
    assert status == 200 and {"quorvex-0", "quorvex-1", "quorvex-2"} <= set(found), found

    mirror = tmp_path / "mirror.jsonl"
    mirror.write_text("".join(map(_line, [*catalog_records[:30], new[0], new[2]])))
    pruned = run_cli(home, "ingest", str(mirror), "--prune", "--json", timeout=600, **ENV)
    assert pruned.returncode == 0, pruned.stderr
    report = json.loads(pruned.stdout)
    assert report["notInFile"] == ["quorvex-1"] and report["pruned"] >= 1, report
    status, found = _search(url, "Quorvex Zenterprise")
    assert status == 200 and "quorvex-1" not in found and "quorvex-0" in found, found


def test_sync_and_another_domain_while_serving_go_through_serve(
    served, home: Path, tmp_path: Path
) -> None:
    """GIVEN serve --workers 2 WHEN `sync` applies a stream insert and `ingest --domain
    documents` writes a domain serve had not opened THEN both exit 0 and serve finds the new
    record and the new document; `sync --status` answers through serve too."""
    _, url = served
    events = Path(__file__).parents[2] / "events" / "sync" / "stream_insert.json"
    synced = run_cli(home, "sync", str(events), timeout=600, **ENV)
    assert synced.returncode == 0, synced.stderr
    assert "1 applied" in synced.stdout, synced.stdout
    status, found = _search(url, "SyncDemo Notes meeting summaries")
    assert status == 200 and "syncdemo-notes" in found, found

    docs = tmp_path / "docs.jsonl"
    docs.write_text(
        _line({"_id": "d-sleep", "title": "Sleep", "text": "Sleep consolidates memory."})
    )
    ingested = run_cli(home, "ingest", str(docs), "--domain", "documents", timeout=600, **ENV)
    assert ingested.returncode == 0, ingested.stderr
    status, found = _search(url, "does sleep help memory", domain="documents")
    assert status == 200 and "d-sleep" in found, found

    counts = run_cli(home, "sync", "--status", timeout=300, **ENV)
    assert counts.returncode == 0, counts.stderr
    assert "sync status of 'tools'" in counts.stdout and "synced" in counts.stdout


def test_ingest_through_serve_without_workers(catalog_records, tmp_path: Path) -> None:
    """GIVEN serve --workers 0 (searches in the serving process) WHEN `ingest` runs THEN it
    goes through serve, exits 0, and serve finds the new record."""
    home = tmp_path / "home"
    seed = tmp_path / "seed.jsonl"
    seed.write_text("".join(map(_line, catalog_records[:5])))
    assert run_cli(home, "ingest", str(seed), timeout=600, **ENV).returncode == 0
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentic_search_cli.main", "serve", "--port", "0", "--workers", "0"],
        env=_env(home),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if m := re.search(r"serving on (http://[\d.]+:\d+)", line):
                url = m.group(1)
                break
        else:
            raise AssertionError(f"serve did not start (rc {proc.wait()})")
        threading.Thread(target=proc.stderr.read, daemon=True).start()
        new = tmp_path / "new.jsonl"
        record = dict(catalog_records[0], id="plimvax", name="Plimvax Orchestrator")
        new.write_text(_line(record))
        with _Searches(url, clients=2) as searches:
            done = run_cli(home, "ingest", str(new), timeout=600, **ENV)
        assert done.returncode == 0, done.stderr
        assert f"serve (pid {proc.pid}" in done.stderr and "1 new" in done.stdout
        assert set(searches.statuses) == {200}, searches.statuses
        status, found = _search(url, "Plimvax Orchestrator")
        assert status == 200 and "plimvax" in found, found
    finally:
        proc.terminate()
        assert proc.wait(timeout=120) == 0
    assert not (home / "edge" / "serve.json").exists()  # removed at stop


def test_the_write_routes_need_the_token_of_the_serve_info_file(served, tmp_path: Path) -> None:
    """GIVEN serve WHEN a write route is called without the serve-info token, or a route that
    does not exist THEN 403 / 404 and nothing is written."""
    _, url = served
    catalog = tmp_path / "sneaky.jsonl"
    catalog.write_text('{"id": "sneaky"}\n')
    body = json.dumps({"path": str(catalog)}).encode()
    for route, token, expected in [
        ("/_local/ingest", None, 403),
        ("/_local/ingest", "wrong", 403),
        ("/_local/nothing", "wrong", 404),
    ]:
        headers = {"content-type": "application/json"}
        if token:
            headers["x-agentic-search-token"] = token
        req = urllib.request.Request(url + route, data=body, headers=headers)
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=60)
        assert err.value.code == expected, route


def test_a_second_serve_on_the_folder_fails_in_one_line_naming_the_first(
    served, home: Path
) -> None:
    """GIVEN serve running over the folder WHEN a second serve starts on it (another port)
    THEN it exits 1 with one line naming the first one's pid, and starts no worker."""
    proc, _ = served
    second = run_cli(home, "serve", "--port", "0", "--workers", "2", timeout=300, **ENV)
    assert second.returncode == 1
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1, second.stderr
    assert lines[0].startswith("agentic-search: error:") and f"pid {proc.pid}" in lines[0]
    assert "worker" not in second.stderr


def test_serve_on_a_port_in_use_fails_in_one_line_naming_the_port(tmp_path: Path) -> None:
    """GIVEN a port held by another socket WHEN serve is started on it THEN it exits 1 with
    one line naming the port, before any worker starts."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        done = run_cli(tmp_path, "serve", "--port", str(port), "--workers", "2", **ENV)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("agentic-search: error:") and f":{port}" in lines[0]
    assert "in use" in lines[0]
    assert "worker" not in done.stderr
