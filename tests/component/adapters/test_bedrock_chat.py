"""LLM_PROVIDER=bedrock: Amazon Bedrock's Converse API with a forced tool call, under botocore's
Stubber. The Stubber checks the EXACT keyword arguments of each ``converse`` call (model id,
system prompt, quoted query, inference config, the tool whose inputSchema is the intent or plan
JSON Schema, toolChoice naming it) and answers with Converse-shaped responses (a ``toolUse``
content block, stopReason ``tool_use``, usage and metrics). Everything past the client is real:
the planner's parsing and validation, the merge with the rules, the pipeline's fallbacks on the
bundled catalog with the real MiniLM embedder.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from agentic_search.adapters.bedrock_chat import BedrockChatClient
from agentic_search.adapters.llm_planner import LLMIntentPlanner
from agentic_search.config import DEFAULT_BEDROCK_CHAT_MODEL, Settings
from agentic_search.logic.llm_budget import Budget, LLMFallback
from agentic_search.logic.llm_prompts import (
    intent_output_model,
    intent_prompt,
    plan_output_model,
    plan_prompt,
    quote_query,
    strict_json_schema,
)
from agentic_search.pipeline.catalog import catalog_lookup
from agentic_search.pipeline.extract_intent import extract_intent
from agentic_search.pipeline.plan_query import plan_query
from agentic_search.service import SearchService
from agentic_search.wire import SearchRequest, SearchState
from agentic_search.wiring import build_chat_client, build_dependencies

QUERY = "free alternative to Cursor that works offline"
MODEL = DEFAULT_BEDROCK_CHAT_MODEL


@pytest.fixture
def stubbed(monkeypatch) -> Iterator[tuple[Any, Stubber]]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def _settings(tmp: Path, **kw: Any) -> Settings:
    return Settings(agentic_search_home=tmp, llm_provider="bedrock", cache_backend="none", **kw)


def _expected(system: str, user: str, name: str, json_schema: dict, max_tokens: int = 600):
    """The exact ``converse`` keyword arguments of a forced tool call."""
    return {
        "modelId": MODEL,
        "system": [{"text": system}],
        "messages": [{"role": "user", "content": [{"text": user}]}],
        "inferenceConfig": {"maxTokens": max_tokens, "temperature": 0.0},
        "toolConfig": {
            "tools": [
                {
                    "toolSpec": {
                        "name": name,
                        "description": f"Record the {name} read from the query.",
                        "inputSchema": {"json": json_schema},
                    }
                }
            ],
            "toolChoice": {"tool": {"name": name}},
        },
    }


def _tool_use(name: str, payload: dict[str, Any]) -> dict[str, Any]:
    """A Converse response whose message is one toolUse block (as Nova and Claude answer a
    forced tool)."""
    return {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "toolUse": {
                            "toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q",
                            "name": name,
                            "input": payload,
                        }
                    }
                ],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 1412, "outputTokens": 96, "totalTokens": 1508},
        "metrics": {"latencyMs": 612},
    }


def _intent_answer(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "primary_goal": "alternative-to",
        "reference_tool": "Cursor",
        "excluded_tools": [],
        "matches": {
            "categories": ["IDE"],
            "functionality": ["Code Completion"],
            "pricing_models": [],
            "deployment": [],
            "interface": [],
            "platforms": [],
            "user_types": [],
        },
        "must_preserve_terms": ["Cursor"],
        "semantic_query": "code editor with AI completion",
        "confidence": 0.8,
        "constraints": [{"field": "deployment", "operator": "in", "value": ["Local"]}],
    }
    return {**base, **over}


def _plan_answer() -> dict[str, Any]:
    return {
        "strategy": "multi-collection-hybrid",
        "vector_sources": [
            {
                "aspect": "identity",
                "query_vector_source": "reference_tool",
                "text": "",
                "top_k": 20,
            },
            {
                "aspect": "functionality",
                "query_vector_source": "query_text",
                "text": "AI code completion editor",
                "top_k": 20,
            },
        ],
        "keyword_text": "code editor completion",
        "structured": False,
        "fusion": "rrf",
        "confidence": 0.7,
        "rationale": "editor like Cursor",
    }


def _planner(engine: SearchService, client: Any, settings: Settings) -> LLMIntentPlanner:
    chat = BedrockChatClient(MODEL, client=client)
    return LLMIntentPlanner(engine.schema, settings, chat, lambda: catalog_lookup(engine.deps))


@pytest.fixture
def bedrock_engine(tools_engine: SearchService, stubbed, tmp_path) -> Iterator[Stubber]:
    """The session's tools engine with a Bedrock planner over the stubbed client."""
    client, stubber = stubbed
    original = tools_engine.deps
    llm = _planner(tools_engine, client, _settings(tmp_path))
    tools_engine.deps = original.derive(llm=llm)
    yield stubber
    tools_engine.deps = original


def _intent_and_plan(engine: SearchService, query: str = QUERY) -> SearchState:
    c = engine.deps
    state = extract_intent(SearchState(request=SearchRequest(query=query, limit=10)), c)
    return plan_query(state, c)


def _expect_intent(stubber: Stubber, schema, query: str = QUERY, **response: Any) -> None:
    js = strict_json_schema(intent_output_model(schema))
    stubber.add_response(
        "converse",
        response or _tool_use("intent", _intent_answer()),
        expected_params=_expected(intent_prompt(schema), quote_query(query), "intent", js),
    )


# ----- the request and the answer -----------------------------------------------------------------


def test_intent_and_plan_are_forced_tool_calls_with_the_schema_as_input_schema(
    bedrock_engine, tools_engine
):
    stubber, schema = bedrock_engine, tools_engine.schema
    _expect_intent(stubber, schema)
    plan_js = strict_json_schema(plan_output_model(schema))
    # The plan call's user message carries the merged intent: accept any text there, check the
    # rest exactly.
    expected_plan = _expected(plan_prompt(schema), "PLACEHOLDER", "plan", plan_js)
    from botocore.stub import ANY

    expected_plan["messages"] = [{"role": "user", "content": [{"text": ANY}]}]
    stubber.add_response("converse", _tool_use("plan", _plan_answer()), expected_plan)

    state = _intent_and_plan(tools_engine)

    assert state.extractor.path == "llm" and state.intent.extractor == f"llm:{MODEL}"
    assert state.intent.reference_tool == "cursor"
    assert "deployment in [Local]" in {f.label() for f in state.intent.constraints}
    assert state.planner.path == "llm" and state.executor.plan.planner == f"llm:{MODEL}"
    assert any(
        v.query_vector_source == "reference_tool" for v in state.executor.plan.vector_sources
    )


def test_an_answer_without_the_tool_call_is_invalid_not_a_crash(bedrock_engine, tools_engine):
    stubber, schema = bedrock_engine, tools_engine.schema
    text_only = {
        "output": {"message": {"role": "assistant", "content": [{"text": '{"primary_goal": '}]}},
        "stopReason": "max_tokens",
        "usage": {"inputTokens": 1412, "outputTokens": 600, "totalTokens": 2012},
        "metrics": {"latencyMs": 3120},
    }
    _expect_intent(stubber, schema, **text_only)
    stubber.add_client_error("converse", "ValidationException", "unused", 400)  # the plan call
    state = _intent_and_plan(tools_engine)
    assert state.extractor.path == "rules" and state.extractor.fallback == "invalid"
    assert "no intent tool call (stop: max_tokens)" in state.extractor.reason
    assert state.intent.extractor == "rules" and state.executor.plan.filters


def test_a_tool_input_outside_the_schema_falls_back_as_invalid(bedrock_engine, tools_engine):
    stubber, schema = bedrock_engine, tools_engine.schema
    _expect_intent(stubber, schema, **_tool_use("intent", _intent_answer(confidence=7)))
    stubber.add_client_error("converse", "ValidationException", "unused", 400)
    state = _intent_and_plan(tools_engine)
    assert state.extractor.path == "rules" and state.extractor.fallback == "invalid"
    assert state.extractor.transient is False


# ----- errors: throttling and validation fall back to the rules, listed in the response ----------


def test_throttling_falls_back_to_the_rules_transient_and_named(bedrock_engine, tools_engine):
    stubber = bedrock_engine
    stubber.add_client_error(
        "converse",
        service_error_code="ThrottlingException",
        service_message="Too many requests, please wait before trying again.",
        http_status_code=429,
    )
    stubber.add_client_error(
        "converse",
        service_error_code="ValidationException",
        service_message="This model doesn't support the toolConfig.toolChoice.tool field.",
        http_status_code=400,
    )
    state = _intent_and_plan(tools_engine)
    assert state.extractor.path == "rules" and state.extractor.fallback == "error"
    assert state.extractor.transient is True  # not cached: the same query may succeed later
    assert f"Bedrock {MODEL}: ThrottlingException" in state.extractor.reason
    assert state.planner.path == "rules" and state.planner.fallback == "error"
    assert state.planner.transient is False  # a refused request stays refused
    assert "ValidationException" in state.planner.reason and "toolChoice" in state.planner.reason
    assert state.executor is not None and state.executor.plan.planner == "rules"


def test_the_response_lists_the_bedrock_error(bedrock_engine, tools_engine):
    from agentic_search.pipeline.runner import LocalRunner

    stubber = bedrock_engine
    for _ in range(2):
        stubber.add_client_error(
            "converse",
            service_error_code="AccessDeniedException",
            service_message="You don't have access to the model with the specified model ID.",
            http_status_code=403,
        )
    runner = LocalRunner(lambda _: tools_engine.deps, map_max_concurrency=4)
    resp = runner.run(SearchRequest(query="free code editor", limit=5)).state.response
    runner.close()
    assert resp["extractor"]["path"] == "rules" and resp["extractor"]["fallback"] == "error"
    assert "AccessDeniedException" in resp["extractor"]["reason"]
    assert resp["extractor"]["transient"] is True  # granting access fixes it: not cached
    assert "AccessDeniedException" in resp["planner"]["reason"]
    assert resp["candidates"]  # the rules answered


def test_a_read_timeout_is_a_transient_timeout(stubbed, tools_schema):
    from botocore.exceptions import ReadTimeoutError

    client, _ = stubbed
    chat = BedrockChatClient(MODEL, client=client)

    def hang(**_: Any) -> Any:
        raise ReadTimeoutError(endpoint_url="https://bedrock-runtime.us-east-1.amazonaws.com")

    client.converse = hang
    with pytest.raises(LLMFallback) as exc:
        chat.complete_json(
            "s", "u", schema_name="intent", json_schema={}, timeout_s=1, max_retries=0, max_tokens=1
        )
    assert exc.value.kind == "timeout" and exc.value.transient
    assert MODEL in exc.value.reason


# ----- settings and wiring ------------------------------------------------------------------------


def test_bedrock_settings_model_region_budgets_and_wiring(monkeypatch, tmp_path):
    s = _settings(tmp_path)
    assert s.llm_enabled and s.llm_plan_enabled  # auto: on, intent and plan
    assert s.chat_model == MODEL
    assert (s.llm_timeout_s, s.llm_budget_s) == (5.0, 8.0)
    monkeypatch.setenv("LLM_MODEL", "anthropic.claude-3-haiku-20240307-v1:0")
    monkeypatch.setenv("BEDROCK_REGION", "eu-central-1")
    monkeypatch.setenv("LLM_TIMEOUT_S", "3")
    env = Settings(llm_provider="bedrock", agentic_search_home=tmp_path)
    chat = build_chat_client(env)
    assert isinstance(chat, BedrockChatClient)
    assert (chat.model, chat.region, chat.timeout_s) == (
        "anthropic.claude-3-haiku-20240307-v1:0",
        "eu-central-1",
        3.0,
    )
    # the client is made on first use, in the configured region, with the SDK's retries
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    made = chat.client(max_retries=2)
    assert made.meta.region_name == "eu-central-1"
    assert made.meta.config.retries["total_max_attempts"] == 3
    assert chat.client(max_retries=2) is made
    c = build_dependencies(env, "tools")
    assert c.llm is not None and c.llm.name == "llm:anthropic.claude-3-haiku-20240307-v1:0"
    assert build_chat_client(Settings()).__class__.__name__ == "OpenAIChatClient"


def test_the_planner_budget_bounds_a_bedrock_call(stubbed, tools_engine, tmp_path):
    client, _ = stubbed
    llm = _planner(tools_engine, client, _settings(tmp_path))
    with pytest.raises(LLMFallback) as exc:  # no budget left: no call is made at all
        llm.extract(QUERY, Budget(total_s=0.05))
    assert exc.value.kind == "budget"


def test_a_missing_region_is_a_transient_fallback_so_it_is_not_cached(monkeypatch):
    # Found running the CLI without AWS configuration: a non-transient fallback is stored in
    # the plan cache, so fixing the configuration would not help that query for a day.
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    chat = BedrockChatClient(MODEL)
    with pytest.raises(LLMFallback) as exc:
        chat.complete_json(
            "s", "u", schema_name="intent", json_schema={}, timeout_s=1, max_retries=0, max_tokens=1
        )
    assert exc.value.kind == "error" and exc.value.transient is True
    assert "region" in exc.value.reason and MODEL in exc.value.reason
