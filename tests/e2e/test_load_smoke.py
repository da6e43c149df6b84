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
    runner = LocalRunner(lambda _: tools_engine.components)
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


class _SlowOrchestrator:
    """Holds each search for a while, so that requests queue behind the search lock."""

    def __init__(self, hold_s: float) -> None:
        self.hold_s = hold_s

    def search(self, request, correlation_id):
        time.sleep(self.hold_s)
        return {"query": request.query, "candidates": [], "errors": []}


def test_requests_over_the_admission_bound_get_503_with_retry_after():
    # GIVEN a server admitting 2 requests at once and searches that take 1 s
    use(Runtime(Settings(), orchestrator=_SlowOrchestrator(1.0)))
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
        for t in threads:
            t.join(timeout=30)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
        use(None)
    # THEN the admitted ones answer 200, the others 503 with Retry-After, none hangs
    assert len(statuses) == 6
    assert statuses.count(200) >= 2 and set(statuses) <= {200, 503}, statuses
    assert statuses.count(503) >= 1, statuses
    assert all(r == "1" for r in retry_after)


def test_a_silent_connection_is_closed_after_the_socket_timeout(monkeypatch):
    # GIVEN a 0.5 s socket timeout and a client that sends half a request line and stops
    monkeypatch.setattr(local_server._Handler, "timeout", 0.5)
    server, thread, _ = _serve()
    try:
        host, port = server.server_address[:2]
        with socket.create_connection((host, port), timeout=10) as sock:
            sock.sendall(b"POST /sea")
            t = time.perf_counter()
            data = sock.recv(1024)  # b"" when the server closes the connection
            waited = time.perf_counter() - t
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
    # THEN the server closed it after about the timeout (not the client's 10 s)
    assert data == b""
    assert waited < 5, waited


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
