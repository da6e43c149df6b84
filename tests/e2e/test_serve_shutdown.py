"""Graceful shutdown of ``serve`` (finding 11): on SIGTERM or SIGINT it stops accepting,
finishes the requests in flight, logs, and exits 0."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from support.http import HalfSentSearch, start_serve, wait_serving


def _start(home) -> tuple[subprocess.Popen[str], str, int]:
    proc = start_serve(home)
    host, port = wait_serving(proc)
    return proc, host, port


def _status(host: str, port: int) -> dict:
    with urllib.request.urlopen(f"http://{host}:{port}/_local/status", timeout=60) as resp:
        return json.loads(resp.read())


def _wait_until(check, what: str, tries: int = 600) -> None:
    """Poll ``check`` (no wall-clock assertion: a bound on tries, 0.1 s apart)."""
    for _ in range(tries):
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"never saw {what}")


def _read_until(proc: subprocess.Popen[str], needle: str) -> list[str]:
    """serve's stderr lines up to and including the first holding ``needle``."""
    assert proc.stderr is not None
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if needle in line:
            return lines
    raise AssertionError(f"serve exited (rc {proc.wait()}) before {needle!r}: {lines}")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_request_in_flight_is_answered_and_serve_exits_0(indexed_home, sig):
    proc, host, port = _start(indexed_home)
    try:
        # GIVEN a request in flight (its body still arriving), admitted by the server
        request = HalfSentSearch(host, port, {"query": "open source vector database", "limit": 3})
        _wait_until(lambda: _status(host, port)["in_flight"] == 1, "the request admitted")
        # WHEN the server is told to stop, and has begun its drain with the request waiting
        proc.send_signal(sig)
        said = _read_until(proc, "request(s) in flight")
        assert any(f"{sig.name}: stopping" in line for line in said), said
        assert "for 1 request(s) in flight" in said[-1], said
        reply = request.finish()
        # THEN the request is answered in full
        status, _, rest = reply.partition(b"\r\n")
        assert status.startswith(b"HTTP/1.0 200") or status.startswith(b"HTTP/1.1 200"), reply[:300]
        payload = json.loads(rest.split(b"\r\n\r\n", 1)[1])
        assert payload["candidates"]
        # AND the server exits 0, having said that it stopped with nothing dropped
        assert proc.wait(timeout=60) == 0
        err = proc.stderr.read() if proc.stderr else ""
        assert "agentic-search: stopped\n" in err, err
        # AND it accepts nothing more
        with pytest.raises(OSError):
            socket.create_connection((host, port), timeout=2).close()
    finally:
        if proc.poll() is None:
            proc.kill()


def test_status_counts_admitted_requests_and_is_answered_outside_admission(indexed_home):
    proc, host, port = _start(indexed_home)
    try:
        assert _status(host, port) == {"in_flight": 0, "stopping": False}
        request = HalfSentSearch(host, port, {"query": "free code editor", "limit": 3})
        _wait_until(lambda: _status(host, port)["in_flight"] == 1, "the request admitted")
        assert b" 200 " in request.finish().split(b"\r\n", 1)[0]
        _wait_until(lambda: _status(host, port)["in_flight"] == 0, "the request answered")
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0


@pytest.mark.parametrize("workers", ["0", "1"])
def test_serve_prints_no_powertools_metric_json_on_stdout(indexed_home, tmp_path, workers):
    # issue 25 finding 18: Powertools' ColdStart metric (EMF JSON) was printed on serve's stdout
    # although serve disables metrics (single_metric ignores POWERTOOLS_METRICS_DISABLED)
    out = tmp_path / "stdout.txt"
    with out.open("w") as stdout:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agentic_search_cli.main",
                "serve",
                "--port=0",
                f"--workers={workers}",
            ],
            stderr=subprocess.PIPE,
            stdout=stdout,
            text=True,
            env={**os.environ, "AGENTIC_SEARCH_HOME": str(indexed_home)},
        )
        try:
            host, port = wait_serving(proc)
            body = json.dumps({"query": "free code editor", "limit": 3}).encode()
            for _ in range(2):
                req = urllib.request.Request(
                    f"http://{host}:{port}/search",
                    data=body,
                    headers={"content-type": "application/json"},
                )
                with urllib.request.urlopen(req, timeout=120) as resp:
                    assert json.loads(resp.read())["candidates"]
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=60) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
    printed = out.read_text()
    assert "_aws" not in printed and "ColdStart" not in printed, printed[:300]
