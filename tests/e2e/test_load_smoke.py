"""A short version of the load benchmark (``scripts/loadtest.py``; the 60 s, 50-client figures
are in benchmarks/load/): 10 clients for 3 s against the ``serve`` server, every request a 200.

Also: the server's admission bound answers the overflow with 503 + Retry-After instead of
piling up threads, and a client that trickles its request cannot hold a worker for ever.
"""

from __future__ import annotations

import importlib.util
import json
import socket
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from support.lambdas import runtime_over, use_runtime
from support.paths import REPO

from agentic_search.config import Settings
from agentic_search.pipeline.runner import LocalRunner
from agentic_search_cli import local_server
from agentic_search_cli.local_server import make_server
from agentic_search_lambda.orchestrators import LocalOrchestrator
from agentic_search_lambda.runtime import Runtime, use


def _loadtest():
    spec = importlib.util.spec_from_file_location("loadtest", REPO / "scripts" / "loadtest.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["loadtest"] = module  # dataclasses resolve their annotations through it
    spec.loader.exec_module(module)
    return module


def _serve(max_pending: int = local_server.MAX_PENDING):
    server = make_server("127.0.0.1", 0, max_pending=max_pending)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    return server, thread, f"http://{host}:{port}"


@pytest.fixture()
def wired(tools_engine) -> Iterator[None]:
    runner = LocalRunner(lambda _: tools_engine.deps)
    with use_runtime(runtime_over(tools_engine, orchestrator=LocalOrchestrator(runner))):
        yield
    runner.close()


def test_ten_clients_for_three_seconds_get_only_200s(wired):
    server, thread, url = _serve()
    try:
        summary = _loadtest().run_load(url, clients=10, duration=3.0, timeout=60.0, limit=5)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
    print(json.dumps(summary))
    assert summary["errors"] == 0, summary["error_kinds"]
    assert summary["ok"] >= 10
    assert summary["latency_ms"]["p50"] > 0


class _HeldOrchestrator:
    """Holds each search until ``release`` is set (at most 60 s), so that requests queue
    behind the search lock however slowly the clients' threads start."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def search(self, request, correlation_id, caller=None):
        self.release.wait(60.0)
        return {"query": request.query, "candidates": [], "errors": []}


def test_requests_over_the_admission_bound_get_503_with_retry_after():
    # GIVEN a server admitting 2 requests at once and searches held until the test lets go
    held = _HeldOrchestrator()
    use(Runtime(Settings(), orchestrator=held))
    server, thread, url = _serve(max_pending=2)
    statuses: list[int] = []
    retry_after: list[str | None] = []

    def one() -> None:
        req = urllib.request.Request(
            f"{url}/search",
            data=b'{"query": "free editor"}',
            headers={"content-type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                statuses.append(resp.status)
        except urllib.error.HTTPError as err:
            statuses.append(err.code)
            retry_after.append(err.headers.get("Retry-After"))

    try:
        # WHEN 6 clients ask at once
        threads = [threading.Thread(target=one) for _ in range(6)]
        for t in threads:
            t.start()
        # (the searches are let go once the 4 over the bound have their answer, or after 60 s)
        for _ in range(600):
            if len(statuses) >= 4:
                break
            time.sleep(0.1)
        held.release.set()
        for t in threads:
            t.join(timeout=30)
    finally:
        held.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
        use(None)
    # THEN the 2 admitted answer 200 once let go, the 4 others 503 with Retry-After while
    # they were held, none hangs
    assert len(statuses) == 6
    assert statuses[:4] == [503] * 4 and statuses[4:] == [200, 200], statuses
    assert retry_after == ["1"] * 4


def test_a_silent_connection_is_closed_after_the_socket_timeout(monkeypatch):
    # GIVEN a 0.5 s socket timeout and a client that sends half a request line and stops
    # (and would wait 60 s itself: an empty read means the server closed it first)
    monkeypatch.setattr(local_server._Handler, "timeout", 0.5)
    server, thread, _ = _serve()
    try:
        host, port = server.server_address[:2]
        with socket.create_connection((host, port), timeout=60) as sock:
            sock.sendall(b"POST /sea")
            data = sock.recv(1024)  # b"" when the server closes the connection
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
    # THEN the server closed it (a server without the timeout leaves the client to time out:
    # TimeoutError after 60 s)
    assert data == b""


def test_a_second_qdrant_client_on_the_served_folder_is_refused(tools_engine):
    # GIVEN the engine holding the local-mode folder (what `serve` holds while it runs)
    from agentic_search.adapters.qdrant.local import LocalQdrantStore
    from agentic_search.ports import VectorStoreError

    # WHEN another client (a second `serve`, a CLI search) opens the same collection's folder
    # (each collection is opened on first use) THEN it is refused with the reason, instead
    # of two writers corrupting the store
    if tools_engine.settings.vector_store == "edge":  # Qdrant Edge: a lock per shard
        from agentic_search.adapters.edge.store import EdgeStore

        with pytest.raises(VectorStoreError, match=r"open for writing by another process \(pid"):
            EdgeStore(tools_engine.settings).count(tools_engine.schema)
        return
    second = LocalQdrantStore(tools_engine.settings)
    with pytest.raises(VectorStoreError, match="single-process"):
        second.count(tools_engine.schema)
    second.close()
