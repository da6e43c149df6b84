"""The reranker adapters: a rerank API on a loopback HTTP server, and a cross-encoder folder
without its files."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from support.builders import rerank_input

from agentic_search.adapters.rerank import ApiReranker, CrossEncoderReranker
from agentic_search.pipeline.rerank import rerank_candidates
from agentic_search.ports import RerankerError

# ----- 8. ApiReranker / CrossEncoderReranker -----------------------------------------------------


class _RerankHandler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        srv: Any = self.server
        srv.requests.append(
            {"path": self.path, "headers": dict(self.headers), "body": self.rfile.read(length)}
        )
        if srv.mode == "hang-up":  # close the connection without any answer
            self.close_connection = True
            return
        status, body = srv.answer
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        # "truncate": announce more bytes than sent, then close the connection
        extra = 100 if srv.mode == "truncate" else 0
        self.send_header("Content-Length", str(len(body) + extra))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def rerank_server() -> Iterator[Any]:
    """A real HTTP server on 127.0.0.1 (random port) recording requests; set ``answer``."""
    srv: Any = ThreadingHTTPServer(("127.0.0.1", 0), _RerankHandler)
    srv.requests = []
    srv.answer = (200, b"{}")
    srv.mode = "normal"
    srv.url = f"http://127.0.0.1:{srv.server_address[1]}/rerank"
    thread = threading.Thread(target=srv.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=5)


def _answer(obj: Any, status: int = 200) -> tuple[int, bytes]:
    return status, json.dumps(obj).encode()


def test_api_reranker_maps_scores_by_index_and_sends_the_request(rerank_server: Any) -> None:
    """GIVEN an API answering index 1 -> 0.9, index 0 -> 0.1
    THEN scores [0.1, 0.9]; the POST carried query, documents, top_n 2, model and the key."""
    rerank_server.answer = _answer(
        {"results": [{"index": 1, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.1}]}
    )
    rr = ApiReranker(rerank_server.url, model="rr-1", api_key="sk-test")
    assert rr.name == "api:rr-1"
    assert rr.score("vector db", ["first", "second"]) == [0.1, 0.9]
    [req] = rerank_server.requests
    assert req["path"] == "/rerank"
    assert json.loads(req["body"]) == {
        "query": "vector db",
        "documents": ["first", "second"],
        "top_n": 2,
        "model": "rr-1",
    }
    assert req["headers"]["Authorization"] == "Bearer sk-test"
    assert req["headers"]["Content-Type"] == "application/json"


def test_api_reranker_without_model_or_key(rerank_server: Any) -> None:
    """GIVEN no model and no key; an answer scoring index 0 only (key 'score'), an
    out-of-range index and a bare list body
    THEN no 'model' in the body, no Authorization header, unscored texts get -inf."""
    rerank_server.answer = _answer([{"index": 0, "score": 2.5}, {"index": 7, "score": 9.0}])
    rr = ApiReranker(rerank_server.url)
    assert rr.name == f"api:{rerank_server.url}"
    assert rr.score("q", ["a", "b"]) == [2.5, -math.inf]
    [req] = rerank_server.requests
    assert json.loads(req["body"]) == {"query": "q", "documents": ["a", "b"], "top_n": 2}
    assert "Authorization" not in req["headers"]


def test_api_reranker_no_texts_sends_nothing(rerank_server: Any) -> None:
    """GIVEN no texts THEN [] without a request."""
    assert ApiReranker(rerank_server.url).score("q", []) == []
    assert rerank_server.requests == []


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (_answer({"error": "boom"}, status=500), "failed"),
        (_answer({"data": []}), "without 'results'"),
        ((200, b"not json"), "failed"),
        (_answer({"results": [{"index": "x", "relevance_score": 1}]}), "bad result"),
        (_answer({"results": [{"relevance_score": 1}]}), "bad result"),
    ],
)
def test_api_reranker_errors(rerank_server: Any, answer: tuple[int, bytes], message: str) -> None:
    """GIVEN a 500, a body without results, a non-JSON body or a bad result item
    THEN RerankerError."""
    rerank_server.answer = answer
    with pytest.raises(RerankerError, match=message):
        ApiReranker(rerank_server.url, timeout_s=5).score("q", ["a", "b"])


@pytest.mark.parametrize("mode", ["hang-up", "truncate"])
def test_api_reranker_broken_connection_is_a_reranker_error(rerank_server: Any, mode: str) -> None:
    """GIVEN a server that closes the connection without answering, or sends fewer body bytes
    than its Content-Length
    THEN RerankerError (the documented failure of Reranker.score), so that
    rerank_candidates keeps the fused order instead of crashing the executor."""
    rerank_server.mode = mode
    rerank_server.answer = _answer({"results": []})
    rr = ApiReranker(rerank_server.url, timeout_s=5)
    with pytest.raises(RerankerError):
        rr.score("q", ["a"])
    out, err = rerank_candidates(rr, "q", rerank_input(), 3)
    assert out == rerank_input()
    assert err is not None and err.error == "RerankerError"


def test_cross_encoder_empty_folder_names_missing_files(tmp_path: Path) -> None:
    """GIVEN an empty folder THEN RerankerError naming model.onnx and tokenizer.json;
    with model.onnx present THEN only tokenizer.json is named."""
    with pytest.raises(RerankerError, match=r"lacks model\.onnx, tokenizer\.json"):
        CrossEncoderReranker(tmp_path)
    (tmp_path / "model.onnx").write_bytes(b"")
    with pytest.raises(RerankerError, match=r"lacks tokenizer\.json \("):
        CrossEncoderReranker(tmp_path)
