"""A client that disconnects before its answer (``curl -m 0.2``) costs serve one line on
stderr, not socketserver's 20-line BrokenPipeError traceback (issue 47, item 11)."""

from __future__ import annotations

import socket
import struct
import threading

from agentic_search_cli import local_server


class _HeldAnswer:
    """A worker pool (serve's edge to its workers) whose answer waits until the test lets it
    go: the client is gone by then. ``entered`` is set when a request reaches it."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def handle(self, event: dict, request_id: str) -> dict:
        self.entered.set()
        assert self.release.wait(60)
        # large enough that writing it to a reset connection fails, whatever the buffers
        return {"statusCode": 200, "headers": {}, "body": "x" * (8 * 1024 * 1024)}


def test_a_client_gone_before_the_answer_is_one_line_on_stderr(capfd):
    pool = _HeldAnswer()
    local_server._Handler.pool = pool
    server = local_server._Server(("127.0.0.1", 0), local_server._Handler)
    server.daemon_threads = False  # server_close() then waits for the request's thread
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        client = socket.create_connection((host, port), timeout=60)
        client.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        assert pool.entered.wait(60)
        # WHEN the client gives up (a reset, as curl's timeout closes) before the answer
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()
        pool.release.set()
    finally:
        server.shutdown()
        server.server_close()  # joins the request's thread: its error is reported by now
        thread.join(60)
        local_server._Handler.pool = None
    err = capfd.readouterr().err
    # THEN one line names the client and the error; no traceback
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("agentic-search: client 127.0.0.1:")
    assert "disconnected before the answer" in lines[0]
    assert "Traceback" not in err
