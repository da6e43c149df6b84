"""``agentic-search serve``: a local HTTP server in front of the real SearchApiFunction handler.

Each HTTP request becomes an API Gateway HTTP API (payload v2) event and goes through
:func:`agentic_search_lambda.api.handler`, the function the template deploys (``/mcp``:
McpFunction's, :func:`agentic_search_lambda.mcp_http.handler`, through the same admission and
limits); the state machine is replaced by the local runner
(:class:`~agentic_search_lambda.api.LocalOrchestrator`).

Concurrency: requests are served by a thread per connection. With a worker pool
(``serve --workers N``, :mod:`~agentic_search_cli.serve_pool`; Qdrant Edge or a Qdrant
server) each request's event is answered by one of N processes, so N searches run at once on N
cores. Without one, searches run in this process one at a time behind a lock: Qdrant local
mode is a single-process, in-memory store without locking of its own (one client per folder),
so the engines share one client and only one search touches it at a time (the sources of that
one search still run in parallel); a Qdrant server (``QDRANT_URL``) lifts the lock. A second
*process* on the same store folder (another ``serve`` or a CLI search) is refused by the
store's folder lock.

Bounds: at most :data:`MAX_PENDING` requests are admitted at once (running or queued behind
the lock; the rest get 503 + Retry-After), bodies over :data:`MAX_REQUEST_BYTES` get 413, a
silent connection is closed after :data:`SOCKET_TIMEOUT_S`, and the server's own errors
(unknown methods, malformed requests) are JSON like every other answer.
"""

from __future__ import annotations

import base64
import contextlib
import json
import sys
import threading
import time
from collections.abc import Iterator
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentic_search_cli import last_eval
from agentic_search_cli.local_events import LocalContext, answer_event, http_api_event
from agentic_search_cli.serve_access import ServeAccess
from agentic_search_lambda import api

#: Bodies above this are refused with a 413 (API Gateway's own limit is 10 MB).
MAX_REQUEST_BYTES = 1024 * 1024
_STATUSES = {int(s) for s in HTTPStatus}
#: An oversized body is read (and dropped) up to this size before the 413 is sent.
DRAIN_MAX_BYTES = 10 * 1024 * 1024


#: Requests admitted at once (running or waiting for the search lock); more get a 503 with
#: Retry-After instead of piling up threads. ``make_server(max_pending=...)`` changes it.
MAX_PENDING = 128
#: Seconds a connection may stay silent (request line, headers, body) before it is closed:
#: a client that trickles bytes cannot hold a thread for ever.
SOCKET_TIMEOUT_S = 30

#: ``GET`` it for ``{"in_flight": n, "stopping": bool}``: the requests admitted and not yet
#: answered, and whether a stop has begun (a process supervisor's or a test's view of a drain).
STATUS_ROUTE = "/_local/status"


class _Handler(BaseHTTPRequestHandler):
    server_version = "agentic-search"
    lock: Any = threading.Lock()
    pool: Any = None  # a serve_pool.WorkerPool answers the events when set
    writer: Any = None  # a serve_writer.ServeWriter applies the CLI's writes when set
    access: ServeAccess = ServeAccess()  # who asks: the token table, the CLI's header
    pending: threading.BoundedSemaphore = threading.BoundedSemaphore(MAX_PENDING)
    timeout = SOCKET_TIMEOUT_S

    def _serve(self) -> None:
        server: _Server = self.server  # type: ignore[assignment]
        if self.command == "GET" and self.path.split("?", 1)[0] == STATUS_ROUTE:
            # serve's own, outside the admission count: answered even when busy or stopping
            status = {"in_flight": server.in_flight, "stopping": server.stopping}
            self._reply(200, {"content-type": "application/json"}, json.dumps(status).encode())
            return
        if server.stopping:
            self.close_connection = True
            self._send_json(503, "ShuttingDown", "the server is stopping; retry elsewhere")
            return
        if not self.pending.acquire(blocking=False):
            self._send_json(503, "Busy", "too many requests in flight; retry shortly")
            return
        try:
            with server.tracked():
                self._serve_admitted()
        finally:
            self.pending.release()

    def _send_json(self, status: int, error: str, message: str) -> None:
        headers = {"content-type": "application/json"}
        if status == 503:
            headers["retry-after"] = "1"
        raw = json.dumps({"error": error, "message": message}).encode()
        self._reply(status, headers, raw)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The http.server's own errors (a malformed request line, headers too long, a method
        it has no handler for) as JSON like every other answer, not an HTML page; an unknown
        method is a 405."""
        self.close_connection = True
        if code == 501:
            code, error = 405, "MethodNotAllowed"
            path = (self.path or "").split("?", 1)[0]
            allowed = ", ".join(api.allowed_methods(path))
            message = f"method {self.command!r} is not supported" + (
                f" on {path}: use {allowed}" if allowed else ""
            )
            if allowed:
                raw = json.dumps({"error": error, "message": message}).encode()
                self._reply(code, {"content-type": "application/json", "allow": allowed}, raw)
                return
        else:
            error = HTTPStatus(code).phrase.replace(" ", "") if code in _STATUSES else "Error"
        self._send_json(code, error, message or explain or "")

    def _serve_admitted(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length > MAX_REQUEST_BYTES:
            # Read and drop the body (up to API Gateway's 10 MB) so that the client, still
            # sending, reads the 413 instead of a connection reset.
            remaining = min(length, DRAIN_MAX_BYTES)
            while remaining > 0:
                chunk = self.rfile.read(min(remaining, 64 * 1024))
                if not chunk:
                    break
                remaining -= len(chunk)
            self._reply(
                413,
                {"content-type": "application/json"},
                json.dumps(
                    {"error": "PayloadTooLarge", "message": f"body over {MAX_REQUEST_BYTES} bytes"}
                ).encode(),
            )
            self.close_connection = True
            return
        body = self.rfile.read(length) if length else b""
        if self.path.startswith("/_local/"):  # a CLI write (serve_writer), not the API's
            from agentic_search_cli.serve_writer import answer

            answer(self, body)
            return
        route = self.path.split("?", 1)[0]
        if route in last_eval.ROUTES:  # serve's own: the last evaluation (not the API's)
            from agentic_search_lambda.runtime import runtime

            self._reply(
                *last_eval.answer(self.command, route, runtime().settings.agentic_search_home)
            )
            return
        event = http_api_event(
            self.command, self.path, dict(self.headers.items()), body, self.client_address[0]
        )
        principals = self.access.principals(dict(self.headers.items()), self.client_address[0])
        if principals is None:
            self._send_json(401, "Unauthorized", "the bearer token is not in serve's token table")
            return
        event["requestContext"]["authorizer"] = {"lambda": {"principals": principals}}
        request_id = event["requestContext"]["requestId"]
        try:
            if self.pool is not None:
                out = self.pool.handle(event, request_id)
            else:
                with self.lock:
                    out = answer_event(event, request_id)
        except Exception as exc:  # never a dropped connection; the reason, not a stack trace
            self._send_json(500, "InternalError", type(exc).__name__)
            return
        data = out.get("body") or ""
        raw = base64.b64decode(data) if out.get("isBase64Encoded") else data.encode("utf-8")
        self._reply(int(out.get("statusCode", 200)), dict(out.get("headers") or {}), raw)

    def _reply(self, status: int, headers: dict[str, str], raw: bytes) -> None:
        self.send_response(status)
        for k, v in headers.items():
            if k.lower() != "content-length":
                self.send_header(k, v)
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = _serve

    def log_message(self, format: str, *args: Any) -> None:
        return  # Powertools Logger already logs every request as JSON


class _Server(ThreadingHTTPServer):
    """The threading server, counting the requests in flight so that a stop can let them
    finish (:meth:`drain`)."""

    # socketserver's default listen backlog is 5: 50 clients connecting at once overflow it and
    # some get their connection reset. The admission bound (503) is the limit, not the backlog.
    request_queue_size = MAX_PENDING

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stopping = False
        self.in_flight = 0
        self._idle = threading.Condition()

    @contextlib.contextmanager
    def tracked(self) -> Iterator[None]:
        """Count the block as a request in flight."""
        with self._idle:
            self.in_flight += 1
        try:
            yield
        finally:
            with self._idle:
                self.in_flight -= 1
                self._idle.notify_all()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away before its answer (a timeout such as ``curl -m``, a closed
        tab) is one line on stderr; any other error keeps socketserver's report."""
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError):  # BrokenPipe, ConnectionReset, ConnectionAborted
            peer = ":".join(map(str, client_address[:2]))
            sys.stderr.write(
                f"agentic-search: client {peer} disconnected before the answer "
                f"({type(exc).__name__})\n"
            )
            return
        super().handle_error(request, client_address)

    def drain(self, timeout_s: float) -> int:
        """Refuse new requests (503 ShuttingDown) and wait up to ``timeout_s`` seconds for
        those in flight; returns how many were still running at the end (0: all finished)."""
        self.stopping = True
        deadline = time.monotonic() + timeout_s
        with self._idle:
            while self.in_flight and (left := deadline - time.monotonic()) > 0:
                self._idle.wait(left)
            return self.in_flight


def make_server(
    host: str = "127.0.0.1", port: int = 8080, max_pending: int = MAX_PENDING, pool: Any = None
) -> _Server:
    """A server bound to ``host:port`` (port 0: any free port; see ``server_address``).
    Events are answered by ``pool`` (a started :class:`~agentic_search_cli.serve_pool.
    WorkerPool`) when given, else in this process, one search at a time unless ``QDRANT_URL``
    points at a Qdrant server; at most ``max_pending`` requests are admitted at once (the
    others get a 503 with Retry-After)."""
    from agentic_search_lambda.runtime import runtime

    _Handler.pool = pool
    _Handler.writer = None
    _Handler.lock = contextlib.nullcontext() if runtime().settings.qdrant_url else threading.Lock()
    _Handler.pending = threading.BoundedSemaphore(max_pending)
    server = _Server((host, port), _Handler)
    server.daemon_threads = True
    return server


def attach(pool: Any = None, writer: Any = None, access: ServeAccess | None = None) -> None:
    """Hand the events of the servers made by :func:`make_server` to ``pool`` (a started
    :class:`~agentic_search_cli.serve_pool.WorkerPool`; None: this process), the CLI's
    writes to ``writer`` (a :class:`~agentic_search_cli.serve_writer.ServeWriter`; None: no
    write routes) and tell callers apart by ``access`` (None: every caller anonymous).
    ``serve`` binds its port first and starts its workers after."""
    _Handler.pool = pool
    _Handler.writer = writer
    _Handler.access = access or ServeAccess()


def search_lock() -> Any:
    """The lock searches in this process take (a null context with a Qdrant server)."""
    return _Handler.lock


__all__ = [
    "MAX_PENDING",
    "SOCKET_TIMEOUT_S",
    "STATUS_ROUTE",
    "LocalContext",
    "attach",
    "http_api_event",
    "make_server",
    "search_lock",
]


@contextlib.contextmanager
def serving(host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve in a background thread for the block (tests, notebooks); yields the base URL
    (``http://host:port``, port 0 picks a free one) and shuts the server down after it."""
    server = make_server(host, port)
    bound_host, bound_port = server.server_address[:2]
    thread = threading.Thread(target=server.serve_forever, name="serve", daemon=True)
    thread.start()
    try:
        yield f"http://{bound_host}:{bound_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
