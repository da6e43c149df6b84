"""HTTP helpers for tests against a live ``serve`` (standard library only)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any


def post_search_error(base_url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """POST ``body`` to ``/search`` expecting an error answer; (status, parsed JSON body).

    Raises:
        AssertionError: when the answer is a success.
    """
    req = urllib.request.Request(
        f"{base_url}/search",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    try:
        urllib.request.urlopen(req, timeout=30)
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())
    raise AssertionError(f"{body!r} was answered with a success")


def start_serve(home: Path) -> subprocess.Popen[str]:
    """``agentic-search serve --port 0`` over ``home`` as a subprocess (stderr piped: read it
    with :func:`wait_serving`)."""
    return subprocess.Popen(
        [sys.executable, "-m", "agentic_search_cli.main", "serve", "--port", "0"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "AGENTIC_SEARCH_HOME": str(home)},
    )


def wait_serving(proc: subprocess.Popen[str]) -> tuple[str, int]:
    """Read a ``serve`` subprocess's stderr up to its "serving on" line; (host, port).

    Raises:
        AssertionError: when it exits first.
    """
    assert proc.stderr is not None
    for line in proc.stderr:
        found = re.search(r"serving on http://([\d.]+):(\d+)", line)
        if found:
            return found.group(1), int(found.group(2))
    raise AssertionError(f"serve did not start (rc {proc.wait()})")


class HalfSentSearch:
    """A ``POST /search`` in flight: the headers and the first 10 bytes of ``body`` are sent
    on construction (the server admits the request and waits for the rest); :meth:`finish`
    sends the rest and returns the whole raw reply (status line, headers, body)."""

    def __init__(self, host: str, port: int, body: dict[str, Any]) -> None:
        self.body = json.dumps(body).encode()
        self.client = socket.create_connection((host, port), timeout=60)
        head = (
            f"POST /search HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(self.body)}\r\nConnection: close\r\n\r\n"
        ).encode()
        self.client.sendall(head + self.body[:10])

    def finish(self) -> bytes:
        """Send the rest of the body; the reply, read until the server closes."""
        self.client.sendall(self.body[10:])
        reply = b""
        while chunk := self.client.recv(65536):
            reply += chunk
        self.client.close()
        return reply
