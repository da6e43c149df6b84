"""LLM_PROVIDER=local against the real runtime: the xllamacpp server child on a GGUF that
`make llm` assembled. Opt-in (``pytest -m llm_local``) and skipped unless xllamacpp is
installed and the model file exists (``LLM_GGUF_PATH``, else the default path under
``AGENTIC_SEARCH_HOME``): the default suite and CI never need the model.

It asserts what the provider guarantees whatever the model answers: the server becomes ready,
the search runs on the LLM path or falls back with a reason, the merged intent keeps the
constraint the rules read, and the child is gone after stop.
"""

from __future__ import annotations

import importlib.util

import pytest

from agentic_search.adapters.local_llm import LocalLLMServer
from agentic_search.config import Settings

pytestmark = pytest.mark.llm_local

if importlib.util.find_spec("xllamacpp") is None:
    pytest.skip("xllamacpp is not installed (make llm)", allow_module_level=True)
MODEL = Settings(llm_provider="local").resolved_gguf_path
if not MODEL.is_file():
    pytest.skip(f"no GGUF at {MODEL} (make llm, or LLM_GGUF_PATH)", allow_module_level=True)


def test_local_server_starts_answers_and_stops(tmp_path, monkeypatch) -> None:
    from agentic_search.adapters.llm_planner import LLMIntentPlanner
    from agentic_search.adapters.openai_chat import OpenAIChatClient
    from agentic_search.logic.intent import CatalogLookup
    from agentic_search.logic.intent_merge import merge_intents
    from agentic_search.logic.intent_rules import RuleBasedIntentExtractor
    from agentic_search.logic.llm_budget import Budget, LLMFallback
    from agentic_search.logic.schema import load_schema

    server = LocalLLMServer(MODEL).start(load_timeout_s=300)
    try:
        assert server.ready()
        settings = Settings(
            llm_provider="local", llm_gguf_path=MODEL, openai_base_url=server.base_url
        )
        assert settings.llm_timeout_s == 30.0  # the local default, not the hosted 2 s
        schema = load_schema("tools")
        planner = LLMIntentPlanner(
            schema, settings, OpenAIChatClient(settings), CatalogLookup.empty
        )
        query = "herramienta gratuita para transcribir audio"
        rules = RuleBasedIntentExtractor(schema, CatalogLookup.empty()).extract(query)
        try:
            llm = planner.extract(query, Budget(settings.llm_budget_s))
        except LLMFallback as exc:
            assert exc.kind in ("timeout", "invalid", "low-confidence", "budget"), exc
            return
        merged, fields, _ = merge_intents(rules, llm)
        for c in rules.constraints:
            assert c in merged.constraints
        assert merged.query == query
        assert set(fields.values()) <= {"rules", "llm", "both"}
    finally:
        proc = server.proc
        server.stop()
        assert proc is not None and proc.poll() is not None
