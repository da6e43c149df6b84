"""template.yaml's embedder choice: the Rules that refuse a stack with no usable embedder
(evaluated here with the parameter values CloudFormation would get), and Bedrock's grant,
given only to the embedding functions and only when chosen."""

from __future__ import annotations

from typing import Any

import pytest
from support.template import (
    ALL_SET_PARAMETERS,
    FAKE_SECRET,
    REQUIRED_PARAMETERS,
    as_list,
    failed_assertions,
    sam_transform,
    statements,
)

TITAN = "amazon.titan-embed-text-v2:0"


KEY = FAKE_SECRET.format("OpenAiKeySecretArn")


@pytest.mark.parametrize(
    "overrides",
    [
        {},  # auto, no EmbeddingModel: the local MiniLM of EmbedLayer
        {"EmbeddingProvider": "local"},
        {"EmbeddingProvider": "bedrock"},
        {"EmbeddingProvider": "bedrock", "BedrockEmbeddingDimensions": "256"},
        {"EmbeddingModel": "text-embedding-3-small", "OpenAiKeySecretArn": KEY},
        {"EmbeddingModel": "nomic-embed", "OpenAiBaseUrl": "http://llm.internal:8080/v1"},
        {"EmbeddingProvider": "openai", "EmbeddingModel": "m", "OpenAiKeySecretArn": KEY},
        ALL_SET_PARAMETERS,
    ],
)
def test_stacks_with_a_usable_embedder_pass_every_rule(template, overrides):
    assert failed_assertions(template, overrides) == []


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"EmbeddingProvider": "openai"}, "EmbeddingProvider openai needs EmbeddingModel"),
        (
            {"EmbeddingModel": "text-embedding-3-small"},  # auto: openai, but no key, no URL
            "need OpenAiBaseUrl (a self-hosted endpoint) or OpenAiKeySecretArn",
        ),
        (
            {"EmbeddingProvider": "openai", "EmbeddingModel": "m"},
            "api.openai.com needs a key",
        ),
        (
            {"EmbeddingProvider": "bedrock", "EmbeddingModel": "text-embedding-3-small"},
            "leave it empty with EmbeddingProvider local or bedrock",
        ),
        (
            {"EmbeddingProvider": "local", "EmbeddingModel": "m", "OpenAiKeySecretArn": KEY},
            "leave it empty with EmbeddingProvider local or bedrock",
        ),
    ],
)
def test_a_stack_with_no_usable_embedder_is_refused_by_a_rule(template, overrides, expected):
    failed = failed_assertions(template, overrides)
    assert len(failed) >= 1 and any(expected in f for f in failed), failed


def _bedrock_grants(deployed: dict[str, Any]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for where, statement in statements(deployed):
        if any(a.startswith("bedrock:") for a in as_list(statement["Action"])):
            assert as_list(statement["Action"]) == ["bedrock:InvokeModel"], statement
            out.setdefault(where.split("/")[0], []).extend(as_list(statement["Resource"]))
    return out


def _embedding_roles(deployed: dict[str, Any]) -> set[str]:
    return {
        f"{name}Role"
        for name, r in deployed["Resources"].items()
        if r["Type"] == "AWS::Lambda::Function"
        and any(
            layer.get("Ref", "").startswith("EmbedLayer")  # SAM suffixes a layer's hash
            for layer in r["Properties"].get("Layers", [])
        )
    }


def test_bedrock_grants_invoke_model_on_the_model_to_the_embedding_functions_only(template, region):
    deployed = sam_transform(template, {**REQUIRED_PARAMETERS, "EmbeddingProvider": "bedrock"})
    grants = _bedrock_grants(deployed)
    roles = _embedding_roles(deployed)
    assert len(roles) == 5 and set(grants) == roles
    for resources in grants.values():
        [arn] = resources
        assert "foundation-model/${BedrockEmbeddingModel}" in arn["Fn::Sub"]
        assert arn["Fn::Sub"].startswith("arn:${AWS::Partition}:bedrock:${AWS::Region}::")
    env = deployed["Resources"]["RetrieveFunction"]["Properties"]["Environment"]["Variables"]
    assert env["EMBEDDING_PROVIDER"] == {"Ref": "EmbeddingProvider"}
    assert env["BEDROCK_EMBEDDING_MODEL"] == {"Ref": "BedrockEmbeddingModel"}
    assert env["BEDROCK_EMBEDDING_DIMENSIONS"] == {"Ref": "BedrockEmbeddingDimensions"}


@pytest.mark.parametrize("overrides", [REQUIRED_PARAMETERS, ALL_SET_PARAMETERS])
def test_no_bedrock_grant_or_setting_unless_chosen(template, region, overrides):
    deployed = sam_transform(template, overrides)
    assert _bedrock_grants(deployed) == {}
    env = deployed["Resources"]["RetrieveFunction"]["Properties"]["Environment"]["Variables"]
    assert "BEDROCK_EMBEDDING_MODEL" not in env


def test_the_default_bedrock_model_is_titan_v2_and_settings_agree(template):
    from agentic_search.config import Settings

    params = template["Parameters"]
    assert params["BedrockEmbeddingModel"]["Default"] == TITAN
    assert Settings().bedrock_embedding_model == TITAN
    assert set(params["EmbeddingProvider"]["AllowedValues"]) == set(
        Settings.model_fields["embedding_provider"].annotation.__args__
    )
