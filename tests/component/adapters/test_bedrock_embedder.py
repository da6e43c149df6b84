"""Amazon Bedrock embeddings (Titan Text Embeddings v2) with botocore's Stubber: the request
body InvokeModel receives, the response parsed, failures mapped to the port's error."""

from __future__ import annotations

import io
import json

import boto3
import numpy as np
import pytest
from botocore.response import StreamingBody
from botocore.stub import Stubber

from agentic_search.adapters.bedrock_embedder import TITAN_V2, BedrockEmbedder
from agentic_search.config import Settings
from agentic_search.ports import Embedder, EmbedderError
from agentic_search.wire import EmbedderIdentity
from agentic_search.wiring import build_embedder


@pytest.fixture
def stubbed(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def _expect(stubber, text: str, vector, dims: int = 256, normalize: bool = True) -> None:
    payload = json.dumps({"embedding": vector, "inputTextTokenCount": 3}).encode()
    stubber.add_response(
        "invoke_model",
        {
            "body": StreamingBody(io.BytesIO(payload), len(payload)),
            "contentType": "application/json",
        },
        expected_params={
            "modelId": TITAN_V2,
            "body": json.dumps({"inputText": text, "dimensions": dims, "normalize": normalize}),
            "contentType": "application/json",
            "accept": "application/json",
        },
    )


def test_request_body_and_response_parsing(stubbed):
    client, stubber = stubbed
    vec = [float(i) / 256 for i in range(256)]
    _expect(stubber, "local code completion", vec)
    embedder = BedrockEmbedder(dimensions=256, client=client)
    out = embedder.embed_query("local code completion")
    assert out.dtype == np.float32 and out.shape == (256,)
    np.testing.assert_allclose(out, np.asarray(vec, dtype=np.float32))


def test_documents_one_call_each_in_input_order(stubbed):
    client, stubber = stubbed
    texts = ["first", "second", "third"]
    for i, t in enumerate(texts):
        _expect(stubber, t, [float(i)] * 256)
    # one worker: the Stubber answers in the order the calls come
    out = BedrockEmbedder(dimensions=256, client=client, concurrency=1).embed_documents(texts)
    assert out.shape == (3, 256) and [row[0] for row in out] == [0.0, 1.0, 2.0]


def test_throttling_is_the_ports_error_naming_it(stubbed):
    client, stubber = stubbed
    stubber.add_client_error(
        "invoke_model",
        service_error_code="ThrottlingException",
        service_message="Too many requests, please wait before trying again.",
        http_status_code=429,
    )
    with pytest.raises(EmbedderError, match=r"ThrottlingException.*throttled") as exc:
        BedrockEmbedder(dimensions=256, client=client).embed_query("q")
    assert TITAN_V2 in str(exc.value)


def test_access_denied_and_a_short_vector_are_the_ports_error(stubbed):
    client, stubber = stubbed
    stubber.add_client_error(
        "invoke_model", service_error_code="AccessDeniedException", service_message="no access"
    )
    with pytest.raises(EmbedderError, match="AccessDeniedException: no access"):
        BedrockEmbedder(dimensions=256, client=client).embed_query("q")
    _expect(stubber, "q", [0.5] * 8)
    with pytest.raises(EmbedderError, match="no 256-dimension embedding"):
        BedrockEmbedder(dimensions=256, client=client).embed_query("q")


def test_wired_by_settings_lazily_with_its_identity(monkeypatch, tmp_path):
    # no region, no credentials: building it must not need either (no I/O before first use)
    for var in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    # as the template sets them: environment strings
    monkeypatch.setenv("EMBEDDING_PROVIDER", "bedrock")
    monkeypatch.setenv("BEDROCK_EMBEDDING_DIMENSIONS", "512")
    settings = Settings()
    embedder = build_embedder(settings)
    assert isinstance(embedder, BedrockEmbedder) and isinstance(embedder, Embedder)
    assert embedder._client is None
    assert embedder.identity == EmbedderIdentity(model=TITAN_V2, dim=512, normalized=True)
    # the first call without a region is a clear error of the port, not a botocore one
    with pytest.raises(EmbedderError, match="region"):
        embedder.embed_query("q")


def test_a_dimension_titan_does_not_offer_is_refused(monkeypatch):
    monkeypatch.setenv("BEDROCK_EMBEDDING_DIMENSIONS", "300")
    with pytest.raises(ValueError, match="256, 512 or 1024"):
        Settings()


def test_openai_provider_without_a_model_is_refused():
    with pytest.raises(EmbedderError, match="EMBEDDING_MODEL"):
        build_embedder(Settings(embedding_provider="openai", embedding_model=None))


def _count_and_throttle(calls: list):
    """A before-send hook: counts each HTTP call and answers it 429 ThrottlingException
    (botocore's standard mode retries it)."""
    from botocore.awsrequest import AWSResponse

    class _Raw:
        def stream(self, **_):
            yield b'{"message": "slow down"}'

    def hook(request, **_):
        calls.append(request.url)
        return AWSResponse(request.url, 429, {"x-amzn-ErrorType": "ThrottlingException"}, _Raw())

    return hook


def test_max_attempts_counts_every_call_the_first_included(monkeypatch):
    # botocore reads retries["max_attempts"] as retries after the first call: 3 meant 4 calls
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    client = BedrockEmbedder(region="us-east-1", max_attempts=3).client
    calls = []
    client.meta.events.register(
        "before-send.bedrock-runtime.InvokeModel", _count_and_throttle(calls)
    )
    with pytest.raises(EmbedderError):
        BedrockEmbedder(region="us-east-1", max_attempts=3, client=client).embed_query("q")
    assert len(calls) == 3
