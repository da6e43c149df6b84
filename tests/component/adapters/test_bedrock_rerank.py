"""BEDROCK_RERANK_MODEL: Amazon Bedrock's Rerank API (``bedrock-agent-runtime`` ``rerank``)
under botocore's Stubber, which checks the EXACT keyword arguments of each call (the text
query, each text as an inline text document, the model's foundation-model ARN, every result
asked for) against the service model and answers Rerank-shaped responses (results sorted by
relevance, each with its input index). Past the client everything is real: the pipeline's
top-N rerank (FuseRerank's ``rerank_candidates``), the fused order kept on a failure with the
error listed, and the client the wiring builds (one attempt, the timeout)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from support.builders import rerank_input

from agentic_search.adapters.bedrock_rerank import BedrockReranker, model_arn
from agentic_search.config import Settings
from agentic_search.pipeline.rerank import rerank_candidates
from agentic_search.ports import RerankerError
from agentic_search.wiring import build_reranker

REGION = "us-east-1"


@pytest.fixture
def stubbed(monkeypatch) -> Iterator[tuple[Any, Stubber]]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    client = boto3.client("bedrock-agent-runtime", region_name=REGION)
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def expected(model: str, query: str, texts: list[str]) -> dict[str, Any]:
    """The exact ``rerank`` keyword arguments, written out as Bedrock documents them."""
    return {
        "queries": [{"type": "TEXT", "textQuery": {"text": query}}],
        "sources": [
            {
                "type": "INLINE",
                "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": t}},
            }
            for t in texts
        ],
        "rerankingConfiguration": {
            "type": "BEDROCK_RERANKING_MODEL",
            "bedrockRerankingConfiguration": {
                "numberOfResults": len(texts),
                "modelConfiguration": {
                    "modelArn": f"arn:aws:bedrock:{REGION}::foundation-model/{model}"
                },
            },
        },
    }


@pytest.mark.parametrize("model", ["amazon.rerank-v1:0", "cohere.rerank-v3-5:0"])
def test_the_top_n_are_sent_as_documented_and_scored_by_their_index(stubbed, model):
    client, stubber = stubbed
    texts = ["T1. one", ". two", "T3. three"]  # the top 3 of rerank_input(), as FuseRerank sends
    stubber.add_response(
        "rerank",
        {
            "results": [  # Bedrock answers by relevance, each naming its input index
                {"index": 1, "relevanceScore": 0.91},
                {"index": 2, "relevanceScore": 0.40},
                {"index": 0, "relevanceScore": 0.02},
            ]
        },
        expected(model, "the query", texts),
    )
    reranker = BedrockReranker(model, client=client)
    out, err = rerank_candidates(reranker, "the query", rerank_input(), 3)
    assert err is None
    assert [e.id for e in out] == ["e2", "e3", "e1", "e4"]  # e4 beyond top-N, after them
    assert [e.rerank_score for e in out] == [0.91, 0.4, 0.02, None]
    assert [e.fused_score for e in out] == [0.3, 0.2, 0.4, 0.1]  # beside, not replaced
    assert reranker.name == f"bedrock:{model}"


def test_a_text_bedrock_did_not_rank_scores_last(stubbed):
    client, stubber = stubbed
    texts = ["a", "b"]
    stubber.add_response(
        "rerank",
        {"results": [{"index": 1, "relevanceScore": 0.5}]},
        expected("amazon.rerank-v1:0", "q", texts),
    )
    assert BedrockReranker("amazon.rerank-v1:0", client=client).score("q", texts) == [
        float("-inf"),
        0.5,
    ]


@pytest.mark.parametrize(
    "code", ["ThrottlingException", "AccessDeniedException", "ValidationException"]
)
def test_a_failing_call_keeps_the_fused_order_and_is_listed(stubbed, code):
    client, stubber = stubbed
    texts = ["T1. one", ". two", "T3. three"]
    stubber.add_client_error(
        "rerank",
        service_error_code=code,
        service_message="no",
        expected_params=expected("amazon.rerank-v1:0", "the query", texts),
    )
    evidence = rerank_input()
    out, err = rerank_candidates(
        BedrockReranker("amazon.rerank-v1:0", client=client), "the query", evidence, 3
    )
    assert [e.id for e in out] == [e.id for e in evidence]  # the fused order
    assert err is not None and err.source == "reranker" and err.error == "RerankerError"
    assert "Bedrock Rerank amazon.rerank-v1:0 failed" in err.message and code in err.message


def test_a_malformed_answer_is_an_error_not_a_wrong_order(stubbed):
    client, stubber = stubbed
    stubber.add_response(
        "rerank",
        {"results": [{"index": 7, "relevanceScore": 0.5}]},
        expected("amazon.rerank-v1:0", "q", ["a"]),
    )
    with pytest.raises(RerankerError, match="bad result"):
        BedrockReranker("amazon.rerank-v1:0", client=client).score("q", ["a"])


def test_the_wiring_builds_one_attempt_within_the_timeout(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    settings = Settings(bedrock_rerank_model="cohere.rerank-v3-5:0", bedrock_region="eu-central-1")
    reranker = build_reranker(settings)
    assert isinstance(reranker, BedrockReranker)
    config = reranker.client().meta.config
    assert (config.read_timeout, config.connect_timeout) == (3.0, 3.0)
    assert config.retries["total_max_attempts"] == 1
    assert reranker.client().meta.region_name == "eu-central-1"
    assert "cohere.rerank-v3-5:0" in settings.answer_settings["reranker"]
    assert model_arn("amazon.rerank-v1:0", "cn-north-1").startswith("arn:aws-cn:bedrock:")
