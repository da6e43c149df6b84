"""The OpenAI-compatible embedder does no I/O when made: the client is built and the dimension
probed on first use, against a real HTTP server on loopback that counts its requests."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import numpy as np
import pytest

from agentic_search.adapters.embedders import OpenAIEmbedder


class EmbeddingsApi(BaseHTTPRequestHandler):
    """POST /v1/embeddings: a 3-dimensional vector per input, [i + 1, 0, 0] for input i."""

    requests: ClassVar[list[list[str]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        type(self).requests.append(texts)
        data = [
            {"object": "embedding", "index": i, "embedding": [float(i + 1), 0.0, 0.0]}
            for i in range(len(texts))
        ]
        out = json.dumps(
            {"object": "list", "data": data, "model": body["model"], "usage": {}}
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def api() -> Iterator[str]:
    EmbeddingsApi.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), EmbeddingsApi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_nothing_is_called_until_first_use_then_the_dimension_is_probed_once(api):
    # WHEN the embedder is made with no dimension given
    embedder = OpenAIEmbedder("some-model", base_url=api, api_key="k")
    # THEN no request was sent
    assert EmbeddingsApi.requests == []
    # WHEN its dimension is read, one probe is sent, and never again
    assert embedder.dim == 3
    assert embedder.dim == 3
    assert EmbeddingsApi.requests == [["dimension probe"]]
    # AND embedding sends the texts, unit vectors come back in input order
    vectors = embedder.embed_documents(["a", "b"])
    assert EmbeddingsApi.requests[-1] == ["a", "b"]
    assert np.allclose(vectors, [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])


def test_a_given_dimension_is_never_probed(api):
    embedder = OpenAIEmbedder("some-model", base_url=api, api_key="k", dim=3)
    assert embedder.dim == 3
    assert embedder.embed_documents([]).shape == (0, 3)
    assert embedder.embed_query("q").shape == (3,)
    assert EmbeddingsApi.requests == [["q"]]
