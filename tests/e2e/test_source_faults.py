"""Source faults, injected at the adapter edges, through the deployed API handler.

Each scenario builds a SearchService over the session's real stores with ONE adapter replaced
(a Qdrant store whose reads raise or stall, a MongoDB client pointed at a closed port, an
embedder that raises, an OpenAI-compatible endpoint that accepts connections and never
answers) and sends ``POST /search`` through :func:`agentic_search_lambda.api.handler`, the
function ``serve`` and the template run. Asserted per source: the response names the failing
source in ``errors``, keeps the other sources' results, and did not wait for a stalled part:
a stalled store blocks until the test releases it, and the answer must come while it still
waits; a hung API's call is named with the deadline that cut it. Nothing is timed against a
tight bound (machine load must not fail a test); the measured figures are printed and, with
``FAULTS_OUT=path``, written as JSON for benchmarks/faults/. When no source can answer, the
API says 503 with the reason.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mongomock
import pymongo
import pytest
from support.lambdas import runtime_over, use_runtime

from agentic_search.adapters.embedders import OpenAIEmbedder
from agentic_search.adapters.hyde import OpenAIHyde
from agentic_search.adapters.mongo import MongoStructuredStore
from agentic_search.config import Settings
from agentic_search.pipeline.catalog import catalog_lookup
from agentic_search.pipeline.runner import LocalRunner
from agentic_search.service import SearchService
from agentic_search_cli.local_server import LocalContext, http_api_event
from agentic_search_lambda import api
from agentic_search_lambda.orchestrators import LocalOrchestrator
from agentic_search_lambda.runtime import Runtime

QUERY = "free AI code completion tools"  # dense, BM25 and a structured source all take part
FIGURES: dict[str, dict[str, Any]] = {}


# ----- adapters with faults ----------------------------------------------------------------------


class FaultyStore:
    """The real QdrantStore, except ``methods`` raise ConnectionError (or, with ``stall``,
    wait until ``release`` is set, at most 60 s, like a Qdrant server that stopped answering;
    ``finished`` counts the stalled calls that returned)."""

    #: a server: its sources run on the source threads under the deadline, whatever the
    #: inner store is (Edge sources run in the calling thread)
    in_process = False

    def __init__(self, inner: Any, methods: set[str], stall: bool = False) -> None:
        self._inner = inner
        self._methods = methods
        self._stall = stall
        self.release = threading.Event()
        self.finished = 0

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if name not in self._methods:
            return attr

        def faulty(*args: Any, **kwargs: Any) -> Any:
            if self._stall:
                self.release.wait(60.0)
                try:
                    return attr(*args, **kwargs)
                finally:
                    self.finished += 1
            raise ConnectionError(f"qdrant unreachable ({name})")

        return faulty


class NoIdentityStore:
    """The real store, with no embedder identity recorded (a collection built before they
    were): any embedder is accepted, so a search's embedding call reaches its API."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def embedder_identity(self, schema: Any) -> None:
        return None


class RaisingEmbedder:
    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim

    def embed_documents(self, texts: Any) -> Any:
        raise RuntimeError("embedding service unavailable")

    def embed_query(self, text: str) -> Any:
        raise RuntimeError("embedding service unavailable")


class RaisingKeywordIndex:
    name = "bm25s"

    def search(self, *args: Any, **kwargs: Any) -> list[Any]:
        raise OSError("bm25 index unreadable")

    def refresh(self, schema: Any) -> None:
        return None

    def sparse_vector(self, text: str) -> None:
        return None

    def term_presence(self, *args: Any) -> dict[str, set[str]]:
        return {}

    def known_terms(self, *args: Any) -> set[str] | None:
        return None


class RaisingStructured:
    system = "qdrant"

    def find(self, *args: Any, **kwargs: Any) -> list[Any]:
        raise ConnectionError("structured store unreachable")


class Hanging:
    """A loopback server's ``url`` and the connections it has ``accepted`` so far."""

    def __init__(self, url: str, accepted: list[socket.socket]) -> None:
        self.url, self.accepted = url, accepted

    def wait_for_connection(self) -> bool:
        """Whether a connection was accepted (waiting up to 60 s for the accept thread)."""
        for _ in range(600):
            if self.accepted:
                return True
            time.sleep(0.1)
        return False


@pytest.fixture(scope="module")
def hanging_endpoint() -> Iterator[Hanging]:
    """An HTTP endpoint that accepts connections, reads the request and never answers (an
    LLM or embedding API that hangs)."""
    with hanging_server() as server:
        yield server


@pytest.fixture
def own_hanging_endpoint() -> Iterator[Hanging]:
    """:func:`hanging_endpoint` for one test: closed when it ends, so the embedding calls left
    waiting on it fail fast (refused) instead of running on for the client's 30 s x 3."""
    with hanging_server() as server:
        yield server


@contextlib.contextmanager
def hanging_server() -> Iterator[Hanging]:
    """A loopback server that accepts connections and never answers; closed on exit."""
    srv = socket.create_server(("127.0.0.1", 0))
    conns: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conns.append(conn)

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield Hanging(f"http://127.0.0.1:{srv.getsockname()[1]}/v1", conns)
    stop.set()
    t.join(timeout=2)
    for c in conns:
        c.close()
    srv.close()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ----- running a search through the API ----------------------------------------------------------


def engine_with(base: SearchService, **adapters: Any) -> SearchService:
    settings = adapters.pop("settings", base.settings)
    adapters.setdefault("store", base.deps.store)
    adapters.setdefault("keyword", base.deps.keyword)
    if "embedder" not in adapters:
        adapters["embedder"] = base.deps.embedder
    engine = SearchService.create(settings, "tools", **adapters)
    # a warm container: the catalog's names already read
    engine.deps.caches.catalog = catalog_lookup(base.deps)
    return engine


def post(engine: SearchService, body: dict[str, Any]) -> tuple[int, dict[str, Any], float]:
    runner = LocalRunner(lambda _: engine.deps)
    try:
        with use_runtime(runtime_over(engine, orchestrator=LocalOrchestrator(runner))):
            event = http_api_event(
                "POST", "/search", {"content-type": "application/json"}, json.dumps(body).encode()
            )
            t = time.perf_counter()
            out = api.handler(event, LocalContext(aws_request_id="fault"))
            ms = (time.perf_counter() - t) * 1000.0
    finally:
        runner.close()
    return out["statusCode"], json.loads(out["body"]), ms


def record(name: str, status: int, body: dict[str, Any], ms: float, bound_s: float) -> None:
    errors = body.get("errors") or []
    FIGURES[name] = {
        "status": status,
        "ms": round(ms, 1),
        "bound_s": bound_s,
        "candidates": len(body.get("candidates") or []),
        "failed_sources": sorted({e["source"] for e in errors}),
        "errors": sorted({e["error"] for e in errors}),
    }
    print(f"{name}: {FIGURES[name]}")


@pytest.fixture(scope="module", autouse=True)
def write_figures() -> Iterator[None]:
    yield
    out = os.environ.get("FAULTS_OUT")
    if out and FIGURES:
        Path(out).write_text(json.dumps(FIGURES, indent=2) + "\n")


def sources_that_answered(body: dict[str, Any]) -> set[str]:
    return {h["source"] for c in body["candidates"] for h in c["provenance"]["hits"]}


def failed(body: dict[str, Any]) -> set[str]:
    return {e["source"] for e in body["errors"]}


BODY = {"query": QUERY, "limit": 10, "rounds": 1}


# ----- one source down at a time -----------------------------------------------------------------


def test_healthy_baseline_uses_every_source(tools_engine):
    status, body, ms = post(engine_with(tools_engine), BODY)
    record("baseline", status, body, ms, 10)
    assert status == 200 and body["errors"] == []
    kinds = {s.split(":")[0] for s in sources_that_answered(body)}
    assert kinds == {"dense", "sparse", "structured"}, kinds


def test_qdrant_vector_search_down_keeps_bm25_and_structured(tools_engine):
    # GIVEN Qdrant's vector queries fail (connection refused)
    store = FaultyStore(tools_engine.deps.store, {"query_dense", "vector_of"})
    # WHEN a search arrives
    status, body, ms = post(engine_with(tools_engine, store=store), BODY)
    record("qdrant_dense_down", status, body, ms, 10)
    # THEN 200, every dense source is named, and BM25 + structured still answer
    assert status == 200
    assert failed(body) and all(s.startswith("dense:") for s in failed(body))
    assert {e["error"] for e in body["errors"]} == {"ConnectionError"}
    assert body["candidates"]
    assert {s.split(":")[0] for s in sources_that_answered(body)} == {"sparse", "structured"}


def test_qdrant_slow_is_cut_at_the_source_deadline(tools_engine):
    # GIVEN Qdrant's vector queries stall (until the test lets them go) and the per-source
    # deadline is 0.5 s
    timeout = 0.5
    settings = tools_engine.settings.model_copy(update={"source_timeout_s": timeout})
    store = FaultyStore(tools_engine.deps.store, {"query_dense"}, stall=True)
    try:
        # WHEN a search arrives
        status, body, ms = post(engine_with(tools_engine, store=store, settings=settings), BODY)
        # THEN it answered while the stalled queries still waited (at the deadline, not the
        # stall), with the late sources named
        assert store.finished == 0
    finally:
        store.release.set()
    record("qdrant_slow", status, body, ms, 60)
    assert status == 200
    assert failed(body) and all(s.startswith("dense:") for s in failed(body))
    assert {e["error"] for e in body["errors"]} == {"SourceTimeout"}
    assert body["candidates"]


def test_qdrant_down_entirely_with_mongodb_answers_from_mongodb(tools_engine, catalog_records):
    # GIVEN a warm function whose Qdrant stopped answering, with MongoDB as the structured source
    client = mongomock.MongoClient()
    client["db"]["tools"].insert_many([dict(r) for r in catalog_records])
    reads = {"query_dense", "vector_of", "scroll", "retrieve_records", "query_sparse", "count"}
    store = FaultyStore(tools_engine.deps.store, reads)
    structured = MongoStructuredStore(client["db"])
    engine = engine_with(tools_engine, store=store, structured=structured)
    # WHEN a search arrives
    status, body, ms = post(engine, BODY)
    record("qdrant_down_mongodb_up", status, body, ms, 10)
    # THEN whatever it answers is a reasoned answer, never a bare 500: the Qdrant-backed
    # sources are named, and a 200 carries MongoDB's results
    assert status in (200, 502, 503), body
    if status == 200:
        assert any(s.startswith("dense:") for s in failed(body))
        assert body["candidates"]
    else:
        assert body["error"] and body["message"]


def test_mongodb_down_keeps_the_vector_and_keyword_sources(tools_engine):
    # GIVEN MONGODB_URI points at a port nobody listens on (short server selection timeout)
    client = pymongo.MongoClient(
        f"mongodb://127.0.0.1:{closed_port()}", serverSelectionTimeoutMS=300, connect=False
    )
    structured = MongoStructuredStore(client["agentic_search"])
    try:
        status, body, ms = post(engine_with(tools_engine, structured=structured), BODY)
    finally:
        client.close()
    record("mongodb_down", status, body, ms, 10)
    # THEN the structured source is named with pymongo's error, dense and BM25 answer
    assert status == 200
    assert failed(body) == {"structured:mongodb:0"}
    assert body["errors"][0]["error"] == "ServerSelectionTimeoutError"
    assert {s.split(":")[0] for s in sources_that_answered(body)} == {"dense", "sparse"}


def test_embedder_raising_fails_only_the_dense_sources(tools_engine):
    real = tools_engine.deps.embedder
    engine = engine_with(tools_engine, embedder=RaisingEmbedder(real.name, real.dim))
    status, body, ms = post(engine, BODY)
    record("embedder_raises", status, body, ms, 10)
    assert status == 200
    assert failed(body) and all(s.startswith("dense:") for s in failed(body))
    assert {e["error"] for e in body["errors"]} == {"EmbedderError"}
    assert {s.split(":")[0] for s in sources_that_answered(body)} == {"sparse", "structured"}


def test_embedding_api_hanging_is_cut_at_the_source_deadline(tools_engine, hanging_endpoint):
    # GIVEN an OpenAI-compatible embedding API that accepts the connection and never answers
    # (its client would wait 30 s x 3 attempts) and a 0.5 s per-source deadline
    # (a collection with no embedder recorded: the call reaches the API, no EmbedderMismatch)
    settings = tools_engine.settings.model_copy(update={"source_timeout_s": 0.5})
    url = hanging_endpoint.url
    embedder = OpenAIEmbedder("hung-model", base_url=url, api_key="k", dim=384)
    store = NoIdentityStore(tools_engine.deps.store)
    engine = engine_with(tools_engine, embedder=embedder, store=store, settings=settings)
    # WHEN a search arrives
    status, body, ms = post(engine, BODY)
    record("embedding_api_hangs", status, body, ms, 60)
    # THEN the API was called, and given up at the 0.5 s deadline (the client alone would
    # wait 30 s x 3): the dense sources are named with the deadline, the others answer
    assert hanging_endpoint.wait_for_connection()
    assert status == 200
    assert failed(body) and all(s.startswith("dense:") for s in failed(body))
    assert all("no embedding within 0.5 s" in e["message"] for e in body["errors"]), body
    assert {s.split(":")[0] for s in sources_that_answered(body)} == {"sparse", "structured"}


def test_embedding_api_hanging_on_a_cold_container_is_cut_at_the_source_deadline(
    tools_engine, own_hanging_endpoint
):
    # GIVEN a cold container: nothing built or read yet (no embedder, no catalog names), the
    # embedder to come from the settings (EMBEDDING_MODEL set, dimension unknown, so the old
    # constructor would probe the API), and that API accepts connections and never answers
    settings = tools_engine.settings.model_copy(
        update={
            "source_timeout_s": 0.5,
            "embedding_model": "hung-model",
            "openai_base_url": own_hanging_endpoint.url,
        }
    )
    t = time.perf_counter()
    engine = SearchService.create(
        settings,
        "tools",
        store=NoIdentityStore(tools_engine.deps.store),
        keyword=tools_engine.deps.keyword,
    )
    created_with = len(own_hanging_endpoint.accepted)
    # WHEN the first search arrives
    status, body, _ = post(engine, BODY)
    cold_ms = (time.perf_counter() - t) * 1000.0
    record("embedding_api_hangs_cold", status, body, cold_ms, 60)
    # THEN the embedder was made lazily inside the search (the probe of the old constructor
    # waited 30 s x 3 attempts, past the functions' 25 s timeout): the engine was built with
    # no call to the API, the search called it and gave up at the 0.5 s deadline; the dense
    # sources are named, the sparse and structured ones answer
    assert created_with == 0
    assert own_hanging_endpoint.wait_for_connection()
    assert isinstance(engine.deps.embedder, OpenAIEmbedder)
    assert status == 200
    assert failed(body) and all(s.startswith("dense:") for s in failed(body))
    assert all("no embedding within 0.5 s" in e["message"] for e in body["errors"]), body
    assert {s.split(":")[0] for s in sources_that_answered(body)} == {"sparse", "structured"}
    assert body["candidates"]


def test_bm25_index_failing_keeps_dense_and_structured(tools_engine):
    status, body, ms = post(engine_with(tools_engine, keyword=RaisingKeywordIndex()), BODY)
    record("bm25_raises", status, body, ms, 10)
    assert status == 200
    assert failed(body) == {"sparse:bm25s"}
    assert {s.split(":")[0] for s in sources_that_answered(body)} == {"dense", "structured"}


def test_llm_hanging_hyde_is_named_and_the_search_answers(tools_engine, hanging_endpoint):
    # GIVEN HyDE on (LLM_MODEL set) against an LLM endpoint that never answers, LLM_TIMEOUT_S 0.5
    settings = tools_engine.settings.model_copy(
        update={
            "llm_model": "hung-llm",
            "openai_base_url": hanging_endpoint.url,
            "llm_timeout_s": 0.5,
            # HyDE alone: the LLM intent/planner path against a hanging server is covered in
            # tests/unit/test_llm.py (fallback to the rules at each call's deadline)
            "llm": "off",
        }
    )
    engine = engine_with(tools_engine, settings=settings, hyde=OpenAIHyde(settings))
    before = len(hanging_endpoint.accepted)
    # WHEN a search arrives
    status, body, ms = post(engine, BODY)
    record("llm_hangs_hyde", status, body, ms, 30)
    # THEN HyDE's call and its one retry each reached the server and were given up by the
    # client (the server never answers), HyDE is named in errors (timed out) and every
    # retrieval source still answers
    for _ in range(600):  # the accept thread may lag on a loaded machine (at most 60 s)
        if len(hanging_endpoint.accepted) - before >= 2:
            break
        time.sleep(0.1)
    assert len(hanging_endpoint.accepted) - before == 2
    assert status == 200
    assert failed(body) == {"hyde"}
    assert "Timeout" in body["errors"][0]["message"]
    assert {s.split(":")[0] for s in sources_that_answered(body)} == {
        "dense",
        "sparse",
        "structured",
    }
    # one call + one retry of 0.5 s, plus the search: about 1.5 s on a quiet machine; the
    # bound only tells LLM_TIMEOUT_S from the SDK's default (600 s), at a margin load cannot
    # reach (the waits are wall-clock, only the search's CPU work slows down)
    assert ms < 30_000, ms


def test_no_source_answering_is_a_503_naming_every_failed_source(tools_engine):
    # GIVEN the embedder, the BM25 index and the structured store all failing
    real = tools_engine.deps.embedder
    engine = engine_with(
        tools_engine,
        embedder=RaisingEmbedder(real.name, real.dim),
        keyword=RaisingKeywordIndex(),
        structured=RaisingStructured(),
    )
    # WHEN a search arrives
    status, body, ms = post(engine, BODY)
    record("all_sources_down", status, body, ms, 10)
    # THEN 503 with a reason that names each failed source (not a 200 with an empty list)
    assert status == 503, body
    assert body["error"] == "SourcesUnavailable"
    assert {s.split(":")[0] for s in body["failedSources"]} == {"dense", "sparse", "structured"}
    assert len(body["failedSources"]) == len(set(body["failedSources"]))
    for source in body["failedSources"]:
        assert source in body["message"]
    assert "Traceback" not in json.dumps(body)


class _Unclosable:
    """The engine as the CLI sees it, without closing the session's shared store."""

    def __init__(self, engine: SearchService) -> None:
        self._engine = engine

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    def close(self) -> None:
        pass


def test_cli_search_exits_1_naming_the_sources_when_none_answers(tools_engine, monkeypatch, capsys):
    from agentic_search_cli import cmd_search
    from agentic_search_cli import main as cli

    real = tools_engine.deps.embedder
    engine = engine_with(
        tools_engine,
        embedder=RaisingEmbedder(real.name, real.dim),
        keyword=RaisingKeywordIndex(),
        structured=RaisingStructured(),
    )
    monkeypatch.setattr(
        cmd_search, "open_service", lambda domain, settings=None: _Unclosable(engine)
    )
    # WHEN `agentic-search search` runs with every source failing
    code = cli.main(["search", QUERY, "--rounds", "1", "--json"])
    out, err = capsys.readouterr()
    # THEN exit 1 and one line naming each failed source, not an empty result table
    assert code == 1
    assert "no source could answer" in err
    for source in ("sparse:bm25s", "structured:qdrant:0", "dense:"):
        assert source in err
    assert out == ""


class _AnsweringOrchestrator:
    """Stands in for the state machine: returns a fixed response (what a SUCCEEDED Express
    execution's output would be)."""

    def __init__(self, response: dict[str, Any]) -> None:
        self.response = response

    def search(self, request: Any, correlation_id: str, caller: Any = None) -> dict[str, Any]:
        return self.response


def test_a_state_machine_answer_with_every_source_failed_is_a_503_too():
    # GIVEN the deployed path: the execution SUCCEEDED but every retrieval source failed
    errors = [
        {"source": "dense:identity:query_text", "error": "ConnectionError", "message": "refused"},
        {"source": "sparse:qdrant-sparse", "error": "ConnectionError", "message": "refused"},
        {"source": "structured:mongodb:0", "error": "ServerSelectionTimeoutError", "message": ""},
    ]
    stats = {"vectorQueriesExecuted": 0, "structuredQueriesExecuted": 0}
    response = {"candidates": [], "errors": errors, "executionStats": stats}
    event = http_api_event(
        "POST", "/search", {"content-type": "application/json"}, b'{"query": "free editor"}'
    )
    with use_runtime(Runtime(Settings(), orchestrator=_AnsweringOrchestrator(response))):
        out = api.handler(event, LocalContext(aws_request_id="sfn"))
    # AND one source answering (even with nothing found) is a 200 with its errors listed
    stats_ok = {**stats, "sparseQueriesExecuted": 1}
    answering = _AnsweringOrchestrator({**response, "executionStats": stats_ok})
    with use_runtime(Runtime(Settings(), orchestrator=answering)):
        partial = api.handler(event, LocalContext(aws_request_id="sfn2"))
    assert out["statusCode"] == 503
    body = json.loads(out["body"])
    assert body["failedSources"] == [e["source"] for e in errors]
    assert out["headers"].get("Retry-After") == "5"
    assert partial["statusCode"] == 200
