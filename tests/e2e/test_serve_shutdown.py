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


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_request_in_flight_is_answered_and_serve_exits_0(indexed_home, sig):
    proc, host, port = _start(indexed_home)
    try:
        # GIVEN a request in flight (its body still arriving)
        request = HalfSentSearch(host, port, {"query": "open source vector database", "limit": 3})
        time.sleep(0.5)  # the server has admitted it
        # WHEN the server is told to stop
        proc.send_signal(sig)
        time.sleep(0.5)
        reply = request.finish()
        # THEN the request is answered in full
        status, _, rest = reply.partition(b"\r\n")
        assert status.startswith(b"HTTP/1.0 200") or status.startswith(b"HTTP/1.1 200"), reply[:300]
        payload = json.loads(rest.split(b"\r\n\r\n", 1)[1])
        assert payload["candidates"]
        # AND the server exits 0, having said why and that it stopped
        assert proc.wait(timeout=60) == 0
        err = proc.stderr.read() if proc.stderr else ""
        assert f"{sig.name}: stopping" in err and "agentic-search: stopped" in err
        # AND it accepts nothing more
        with pytest.raises(OSError):
            socket.create_connection((host, port), timeout=2).close()
    finally:
        if proc.poll() is None:
            proc.kill()


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
