"""``serve --workers N`` with Qdrant Edge (issue 18): worker processes, each on its own copy
of the index, answer concurrent searches exactly as one process does; a stop still answers the
request in flight, exits 0, and leaves no worker and no copy behind."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support.homes import copy_home
from support.http import HalfSentSearch

QUERIES = ["free code editor", "open source vector database", "text to speech", "chatbot"]


def _env(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "AGENTIC_SEARCH_HOME": str(home),
        "VECTOR_STORE": "edge",
        "CACHE_BACKEND": "none",
    }


@pytest.fixture(scope="module")
def edge_home(tmp_path_factory: pytest.TempPathFactory, catalog_records) -> Path:
    """A home whose Edge index holds 40 records of the bundled catalog (CLI ingest)."""
    home = tmp_path_factory.mktemp("edge-home")
    catalog = home / "catalog.jsonl"
    catalog.write_text("".join(json.dumps(r) + "\n" for r in catalog_records[:40]))
    subprocess.run(
        [sys.executable, "-m", "agentic_search_cli.main", "ingest", str(catalog)],
        env=_env(home),
        check=True,
        capture_output=True,
        timeout=600,
    )
    return home


def _ids(body: dict) -> list[str]:
    return [c["id"] for c in body["candidates"]]


def _post(url: str, query: str) -> tuple[int, dict]:
    req = urllib.request.Request(
        f"{url}/search",
        data=json.dumps({"query": query, "limit": 5}).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=120) as resp:
        return resp.status, json.loads(resp.read())


def _in_process(home: Path) -> dict[str, list[str]]:
    """The same searches answered by the handler in this process, over a copy of ``home``."""
    from agentic_search.config import Settings
    from agentic_search_cli.local_events import LocalContext, http_api_event
    from agentic_search_lambda import api
    from agentic_search_lambda.runtime import Runtime, use

    rt = Runtime(Settings(agentic_search_home=home, vector_store="edge", cache_backend="none"))
    use(rt)
    try:
        out = {}
        for q in QUERIES:
            body = json.dumps({"query": q, "limit": 5}).encode()
            event = http_api_event("POST", "/search", {"content-type": "application/json"}, body)
            answer = api.handler(event, LocalContext(aws_request_id="t"))
            out[q] = _ids(json.loads(answer["body"]))
        return out
    finally:
        use(None)
        rt.deps.close()  # type: ignore[attr-defined]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_workers_answer_as_one_process_and_stop_cleanly(edge_home: Path, tmp_path: Path) -> None:
    """GIVEN serve --workers 2 over an Edge index WHEN 8 searches come at once THEN all are
    answered, each with the candidates one process gives; AND on SIGTERM a request in flight
    is answered, serve exits 0, the workers are gone and so are their copies of the index."""
    reference = tmp_path / "reference"
    copy_home(edge_home, reference)
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentic_search_cli.main", "serve", "--port", "0", "--workers", "2"],
        env=_env(edge_home),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stderr is not None
        pids: list[int] = []
        for line in proc.stderr:
            if m := re.search(r"2 worker process\(es\) \(pid (\d+), (\d+)\)", line):
                pids = [int(m.group(1)), int(m.group(2))]
            if m := re.search(r"serving on http://([\d.]+):(\d+)", line):
                host, port = m.group(1), int(m.group(2))
                break
        else:
            raise AssertionError(f"serve did not start (rc {proc.wait()})")
        assert len(set(pids)) == 2 and proc.pid not in pids and all(map(_alive, pids))
        copies = list((edge_home / "run").glob("serve-*/copy-*"))
        assert len(copies) == 2
        url = f"http://{host}:{port}"
        with ThreadPoolExecutor(8) as ex:
            answers = list(ex.map(lambda q: _post(url, q), QUERIES * 2))
        assert [status for status, _ in answers] == [200] * 8
        expected = _in_process(reference)
        for q, (_, body) in zip(QUERIES * 2, answers, strict=True):
            assert _ids(body) == expected[q], q
        # a request in flight (its body still arriving) when the stop comes
        request = HalfSentSearch(host, port, {"query": "free code editor", "limit": 3})
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        reply = request.finish()
        assert reply.split(b"\r\n", 1)[0].endswith(b"200 OK"), reply[:300]
        assert json.loads(reply.split(b"\r\n\r\n", 1)[1])["candidates"]
        assert proc.wait(timeout=60) == 0
        assert "agentic-search: stopped" in proc.stderr.read()
        deadline = time.monotonic() + 60  # a poll limit, generous for a loaded machine
        while any(map(_alive, pids)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(map(_alive, pids))
        assert list((edge_home / "run").glob("serve-*")) == []
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_killed_worker_fails_its_request_and_the_pool_is_made_anew(
    edge_home: Path, tmp_path: Path
) -> None:
    """GIVEN a pool of one worker on its own copy WHEN the worker is killed THEN the request
    it held fails (BrokenProcessPool, a 500 in serve) AND the next request is answered by a
    new worker on a new copy."""
    from concurrent.futures.process import BrokenProcessPool

    from agentic_search.config import Settings
    from agentic_search_cli.local_events import http_api_event
    from agentic_search_cli.serve_pool import WorkerPool

    copies: list[Path] = []

    def make_copy() -> Path:
        dest = tmp_path / f"copy-{len(copies)}"
        copy_home(edge_home / "edge", dest)
        copies.append(dest)
        return dest

    settings = Settings(agentic_search_home=edge_home, vector_store="edge", cache_backend="none")
    pool = WorkerPool(1, settings, make_copy, run_dir=tmp_path / "run")
    try:
        [pid] = pool.start()
        health = http_api_event("GET", "/health", {}, b"")
        assert pool.handle(health, "a")["statusCode"] == 200
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(BrokenProcessPool):
            pool.handle(health, "b")
        assert pool.handle(health, "c")["statusCode"] == 200
        assert len(copies) == 2
    finally:
        pool.close()
