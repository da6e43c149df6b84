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


def test_the_server_child_exits_when_its_parent_is_killed(tmp_path) -> None:
    """A parent killed by a signal runs no atexit hook: the server child watches its parent
    and returns from its serve loop once re-parented (seen on 2026-11-26: a benchmark stopped
    with SIGTERM left a 1.8 GB llama.cpp server running). The middle process here stands for
    the search process; the grandchild runs the child's watch loop."""
    import signal
    import subprocess
    import sys
    import time

    ready, done = tmp_path / "watching", tmp_path / "returned"
    grandchild = (
        "import os; from agentic_search.adapters.local_llm import wait_for_parent_exit; "
        f"parent = os.getppid(); open({str(ready)!r}, 'w').close(); "
        f"wait_for_parent_exit(parent, 0.05); open({str(done)!r}, 'w').close()"
    )
    middle = (
        "import subprocess, sys, time; "
        f"subprocess.Popen([sys.executable, '-c', {grandchild!r}]); time.sleep(600)"
    )
    proc = subprocess.Popen([sys.executable, "-c", middle])

    def appears(path: Path) -> bool:  # polled, not timed: a loaded machine only waits longer
        for _ in range(1200):
            if path.exists():
                return True
            time.sleep(0.05)
        return False

    try:
        assert appears(ready)
        assert not done.exists()  # its parent lives: it keeps serving
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert appears(done)
