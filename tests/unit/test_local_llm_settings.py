"""LLM_PROVIDER=local settings and the provider's refusal paths (no model file needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_search.adapters.local_llm import LocalLLMError, LocalLLMServer, local_server
from agentic_search.config import Settings
from agentic_search.logic.llm_budget import LLMFallback


def test_local_provider_gets_cpu_budgets_unless_set(monkeypatch) -> None:
    local = Settings(llm_provider="local", agentic_search_home=Path("/h"))
    assert (local.llm_timeout_s, local.llm_budget_s) == (30.0, 60.0)
    assert local.llm_enabled and not local.llm_plan_enabled  # auto: on, one call per query
    assert local.resolved_gguf_path == Path("/h/models/qwen2.5-coder-1.5b-instruct.gguf")
    assert local.chat_model == "qwen2.5-coder-1.5b-instruct"
    hosted = Settings()
    assert (hosted.llm_timeout_s, hosted.llm_budget_s) == (2.0, 4.0)
    assert hosted.llm_plan_enabled
    monkeypatch.setenv("LLM_TIMEOUT_S", "5")
    assert Settings(llm_provider="local").llm_timeout_s == 5.0


def test_a_missing_model_is_a_one_line_fallback_not_a_crash(tmp_path) -> None:
    missing = tmp_path / "none.gguf"
    with pytest.raises(LocalLLMError, match="make llm"):
        LocalLLMServer(missing).start(load_timeout_s=1)
    with pytest.raises(LLMFallback) as exc:
        local_server(missing, 1)
    assert exc.value.kind == "error" and not exc.value.transient
