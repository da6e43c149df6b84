"""ENRICH=bedrock in the sync path: each new record's catalog prompt goes to Bedrock Converse
as a forced tool call, checked by botocore's Stubber on the EXACT keyword arguments (model id,
system prompt, the record quoted as data, temperature 0, the answer's JSON Schema as the
tool's input schema); what comes back is filtered and indexed through the real apply path,
Edge store and MiniLM. A throttled call leaves the record indexed without enrichment, listed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from agentic_search.adapters.bedrock_chat import BedrockChatClient
from agentic_search.adapters.llm_enricher import LLMEnricher
from agentic_search.config import Settings
from agentic_search.logic.enrichment import (
    CATALOG_PROMPT,
    CatalogNeeds,
    record_prompt_text,
    user_message,
)
from agentic_search.logic.llm_prompts import strict_json_schema
from agentic_search.sync.apply import apply_changes
from agentic_search.sync.changes import insert_changes
from agentic_search.sync.files import bundled_catalog_path, read_catalog
from agentic_search.wire.records import ENRICHMENT_KEY, NEEDS_KEY
from agentic_search.wiring import build_dependencies, build_enricher

MODEL = "amazon.nova-lite-v1:0"


@pytest.fixture
def stubbed(monkeypatch) -> Iterator[tuple[Any, Stubber]]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def _expected(user: str) -> dict[str, Any]:
    name = "enrichment_catalog"
    return {
        "modelId": MODEL,
        "system": [{"text": CATALOG_PROMPT.system}],
        "messages": [{"role": "user", "content": [{"text": user}]}],
        "inferenceConfig": {"maxTokens": CATALOG_PROMPT.max_tokens, "temperature": 0.0},
        "toolConfig": {
            "tools": [
                {
                    "toolSpec": {
                        "name": name,
                        "description": f"Record the {name} read from the query.",
                        "inputSchema": {"json": strict_json_schema(CatalogNeeds)},
                    }
                }
            ],
            "toolChoice": {"tool": {"name": name}},
        },
    }


def _tool_use(payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "toolUse": {
                            "toolUseId": "tooluse_enrich",
                            "name": "enrichment_catalog",
                            "input": payload,
                        }
                    }
                ],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 310, "outputTokens": 88, "totalTokens": 398},
        "metrics": {"latencyMs": 540},
    }


def test_the_sync_path_enriches_through_bedrock_converse_on_exact_bodies(
    tmp_path: Path, stubbed, embedder
):
    client, stubber = stubbed
    settings = Settings(  # the bundled records' shipped answers would spare Bedrock the calls
        agentic_search_home=tmp_path,
        enrich="bedrock",
        enrich_model=MODEL,
        enrich_shipped=False,
        cache_backend="none",
    )
    enricher = LLMEnricher(BedrockChatClient(MODEL, client=client), max_retries=0)
    deps = build_dependencies(settings, "tools", embedder=embedder, enricher=enricher)
    lines = bundled_catalog_path().read_text().splitlines()[:2]
    path = tmp_path / "two.jsonl"
    path.write_text("\n".join(lines) + "\n")
    records = read_catalog(path, deps.schema).records
    answer = {
        "needs": ["write code faster with suggestions", "Cursor for code"],
        "category": "code editor",
    }
    user = user_message("catalog", record_prompt_text(deps.schema, records[0]))
    stubber.add_response("converse", _tool_use(answer), _expected(user))
    user = user_message("catalog", record_prompt_text(deps.schema, records[1]))
    stubber.add_client_error(
        "converse", "ThrottlingException", "Too many requests", 429, expected_params=_expected(user)
    )
    try:
        report = apply_changes(deps, insert_changes(deps.schema, records), deps.sync_status)
        assert report.counts() == {"applied": 2}  # a failed enrichment never fails the write
        assert list(report.enrichment.failed) == [records[1]["id"]]
        assert "ThrottlingException" in report.enrichment.failed[records[1]["id"]]
        got = {p["id"]: p for p in deps.store.scroll(deps.schema)}
        assert got[records[0]["id"]][NEEDS_KEY] == ["write code faster with suggestions"]
        assert got[records[0]["id"]][ENRICHMENT_KEY]["model"] == MODEL
        assert NEEDS_KEY not in got[records[1]["id"]]
        assert json.loads(json.dumps(report.wire()))["enrichment"]["asked"] == 1
    finally:
        deps.store.close()


def test_enrich_bedrock_wires_the_converse_client_on_the_enrichment_model(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    enricher = build_enricher(Settings(enrich="bedrock", enrich_model=MODEL, enrich_timeout_s=7))
    assert isinstance(enricher, LLMEnricher)
    assert isinstance(enricher.client, BedrockChatClient)
    assert enricher.model == MODEL and enricher.client.timeout_s == 7
    assert build_enricher(Settings(enrich="off")) is None
