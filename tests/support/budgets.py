"""Settings no busy host can cut: rounds without a latency budget a loaded machine reaches, and
sources without a deadline it reaches. What a test checks must not depend on how busy the host
is; a test of a budget or a deadline sets its own small one (and waits on events, not clocks).
"""

from __future__ import annotations

from typing import Any

#: A round budget (ms) and a source deadline (s) far beyond any search on a loaded host.
UNBOUNDED: dict[str, float] = {"round_budget_ms": 600_000.0, "source_timeout_s": 600.0}
#: The same, as the environment variables every Settings of the test process reads.
UNBOUNDED_ENV: dict[str, str] = {name.upper(): f"{value:g}" for name, value in UNBOUNDED.items()}


def unbounded(settings: Any) -> Any:
    """``settings`` (a :class:`agentic_search.config.Settings`) with neither a round budget nor
    a source deadline a busy host can reach."""
    return settings.model_copy(update=UNBOUNDED)
