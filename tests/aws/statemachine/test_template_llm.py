"""template.yaml's LLM choice (LlmProvider none|openai|bedrock, LlmModelId): Bedrock's Converse
grant (bedrock:InvokeModel) on that one model's foundation-model ARN, given only to the two
functions that ask the LLM (ExtractIntent, PlanQuery) and only when bedrock is chosen, and to
PrepareRound only when LlmHyde or LlmRounds asks the model too; the settings those functions
get; the Rules that refuse an OpenAI LLM with no endpoint and LLM writes with no provider."""

from __future__ import annotations

from typing import Any

import pytest
from support.template import (
    ALL_SET_PARAMETERS,
    NO_VALUE,
    REQUIRED_PARAMETERS,
    as_list,
    failed_assertions,
    sam_transform,
    statements,
)

from agentic_search.config import DEFAULT_BEDROCK_CHAT_MODEL, Settings

LLM_FUNCTIONS = {"ExtractIntentFunction", "PlanQueryFunction"}
WRITER = "PrepareRoundFunction"  # writes HyDE passages and later rounds' queries
BEDROCK = {**REQUIRED_PARAMETERS, "LlmProvider": "bedrock"}
ARN = "arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/${LlmModelId}"


def _llm_grants(deployed: dict[str, Any]) -> dict[str, list[Any]]:
    """Role -> resources of every statement granting a bedrock: action on the LLM model (the
    embedders' grants name BedrockEmbeddingModel and are not counted here)."""
    out: dict[str, list[Any]] = {}
    for where, statement in statements(deployed):
        actions = as_list(statement["Action"])
        if not any(a.startswith("bedrock:") for a in actions):
            continue
        resources = as_list(statement["Resource"])
        if any("BedrockEmbeddingModel" in str(r) for r in resources):
            continue
        assert actions == ["bedrock:InvokeModel"], statement  # Converse needs no more
        out.setdefault(where.split("/")[0], []).extend(resources)
    return out


def _env(deployed: dict[str, Any], function: str) -> dict[str, Any]:
    return deployed["Resources"][function]["Properties"]["Environment"]["Variables"]


def test_bedrock_grants_converse_on_the_one_model_to_the_llm_functions_only(template, region):
    deployed = sam_transform(template, BEDROCK)
    grants = _llm_grants(deployed)
    assert set(grants) == {f"{f}Role" for f in LLM_FUNCTIONS}
    for resources in grants.values():
        [arn] = resources  # one model, no wildcard
        assert arn == {"Fn::Sub": ARN}
    for function in LLM_FUNCTIONS:
        env = _env(deployed, function)
        assert env["LLM"] == "on"
        assert env["LLM_PROVIDER"] == {"Ref": "LlmProvider"}
        assert env["LLM_MODEL"] == {"Ref": "LlmModelId"}
    # the other functions neither get the grant nor the provider (but CacheCheck, which keys
    # the result cache by the LLM choice and calls no LLM: no grant, checked above)
    for name, resource in deployed["Resources"].items():
        if resource["Type"] == "AWS::Lambda::Function" and name not in {
            *LLM_FUNCTIONS,
            "CacheCheckFunction",
            WRITER,  # the provider for HyDE / LLM rounds; its grant only when they are on
        }:
            env = resource["Properties"].get("Environment", {}).get("Variables", {})
            assert "LLM_PROVIDER" not in env, name


@pytest.mark.parametrize(
    "overrides",
    [REQUIRED_PARAMETERS, ALL_SET_PARAMETERS, {**BEDROCK, "LlmProvider": "none"}],
)
def test_no_llm_grant_unless_bedrock_is_chosen(template, region, overrides):
    deployed = sam_transform(template, overrides)
    assert _llm_grants(deployed) == {}


def test_llm_provider_none_turns_the_llm_path_off_openai_keeps_its_model(template, region):
    off = sam_transform(template, REQUIRED_PARAMETERS)
    for function in LLM_FUNCTIONS:
        env = _env(off, function)
        assert env["LLM"] == "off" and env.get("LLM_PROVIDER", NO_VALUE) == NO_VALUE
    on = sam_transform(template, ALL_SET_PARAMETERS)  # LlmProvider openai, LlmModel set
    for function in LLM_FUNCTIONS:
        env = _env(on, function)
        assert env["LLM"] == "on" and env["LLM_PROVIDER"] == {"Ref": "LlmProvider"}
        assert env["LLM_MODEL"] == {"Ref": "LlmModel"}


def test_an_openai_llm_without_an_endpoint_is_refused(template):
    failed = failed_assertions(template, {"LlmProvider": "openai"})
    assert any("LlmProvider openai needs OpenAiBaseUrl" in f for f in failed), failed
    assert failed_assertions(template, {"LlmProvider": "bedrock"}) == []
    assert failed_assertions(template, ALL_SET_PARAMETERS) == []


def test_template_defaults_and_values_agree_with_the_settings(template):
    params = template["Parameters"]
    assert params["LlmModelId"]["Default"] == DEFAULT_BEDROCK_CHAT_MODEL
    assert params["LlmProvider"]["Default"] == "none"
    providers = set(Settings.model_fields["llm_provider"].annotation.__args__)
    # every provider a stack can choose is one the code knows (local is for laptops)
    assert set(params["LlmProvider"]["AllowedValues"]) - {"none"} <= providers


@pytest.mark.parametrize(
    "parameters",
    [REQUIRED_PARAMETERS, ALL_SET_PARAMETERS, BEDROCK],
    ids=["none", "openai", "bedrock"],
)
def test_cache_check_keys_the_llm_choice_the_llm_functions_run_with(template, region, parameters):
    # GIVEN a stack deployed with each LLM choice
    deployed = sam_transform(template, parameters)
    # THEN CacheCheck (which computes the result cache key from its own settings) sees the
    # same LLM, provider and model as the functions that ask the LLM, so a stack switched
    # to the LLM is never served the rules' cached answer
    keys = ("LLM", "LLM_PROVIDER", "LLM_MODEL")
    cache_check = _env(deployed, "CacheCheckFunction")
    for function in LLM_FUNCTIONS:
        env = _env(deployed, function)
        assert {k: cache_check.get(k, NO_VALUE) for k in keys} == {
            k: env.get(k, NO_VALUE) for k in keys
        }


@pytest.mark.parametrize("writes", [{"LlmHyde": "on"}, {"LlmRounds": "on"}])
def test_llm_writes_on_bedrock_grant_prepare_round_the_same_one_model(template, region, writes):
    # GIVEN a Bedrock stack whose HyDE passages or later rounds' queries the model writes
    deployed = sam_transform(template, {**BEDROCK, **writes})
    # THEN PrepareRound, which writes them, gets Converse on that one model, as do the two
    # functions that read the query; no other function does
    grants = _llm_grants(deployed)
    assert set(grants) == {f"{f}Role" for f in {*LLM_FUNCTIONS, WRITER}}
    assert grants[f"{WRITER}Role"] == [{"Fn::Sub": ARN}]
    # AND it runs with the provider, model and switches the laptop's Settings read
    env = _env(deployed, WRITER)
    assert env["LLM_PROVIDER"] == {"Ref": "LlmProvider"}
    assert env["LLM_MODEL"] == {"Ref": "LlmModelId"}
    assert env["LLM_HYDE"] == {"Ref": "LlmHyde"} and env["LLM_ROUNDS"] == {"Ref": "LlmRounds"}


@pytest.mark.parametrize(
    "parameters",
    [BEDROCK, {**BEDROCK, "LlmHyde": "off"}, {**ALL_SET_PARAMETERS, "LlmRounds": "on"}],
    ids=["bedrock-defaults", "bedrock-hyde-off", "openai-rounds"],
)
def test_prepare_round_gets_no_bedrock_grant_unless_it_asks_bedrock(template, region, parameters):
    assert f"{WRITER}Role" not in _llm_grants(sam_transform(template, parameters))


@pytest.mark.parametrize("writes", [{"LlmHyde": "on"}, {"LlmRounds": "on"}])
def test_llm_writes_without_a_provider_are_refused(template, writes):
    failed = failed_assertions(template, {**REQUIRED_PARAMETERS, **writes})
    assert any("LlmHyde on or LlmRounds on asks LlmProvider" in f for f in failed), failed
    assert failed_assertions(template, {**BEDROCK, **writes}) == []


def test_llm_write_switches_agree_with_the_settings_and_key_the_result_cache(template, region):
    params = template["Parameters"]
    for parameter, field in (("LlmHyde", "llm_hyde"), ("LlmRounds", "llm_rounds")):
        assert set(params[parameter]["AllowedValues"]) == set(
            Settings.model_fields[field].annotation.__args__
        )
        assert params[parameter]["Default"] == Settings.model_fields[field].default
    # CacheCheck computes the result cache key with the same switches PrepareRound runs with
    deployed = sam_transform(template, {**BEDROCK, "LlmHyde": "on", "LlmRounds": "on"})
    cache_check, writer = _env(deployed, "CacheCheckFunction"), _env(deployed, WRITER)
    for key in ("LLM_HYDE", "LLM_ROUNDS"):
        assert cache_check[key] == writer[key]
