"""The LLM path's time budget and its fallback signal: what an intent or plan call may spend,
and the exception that sends the request back to the rules (not ports: values and outcomes the
LLM adapters and the pipeline share)."""

from __future__ import annotations

from dataclasses import dataclass


class LLMFallback(Exception):
    """The LLM path gave no usable answer; ``reason`` says why, ``kind`` names the class of
    failure (timeout, error, invalid, low-confidence, budget) and ``transient`` whether the
    same request may succeed later (then the fallback is not cached)."""

    def __init__(self, kind: str, reason: str, *, transient: bool = False) -> None:
        self.kind = kind
        self.reason = reason[:500]
        self.transient = transient
        super().__init__(f"{kind}: {self.reason}")


@dataclass
class Budget:
    """What is left of a request's LLM time (seconds), across the intent and plan calls."""

    total_s: float
    spent_s: float = 0.0

    @property
    def remaining_s(self) -> float:
        """Seconds left (never negative)."""
        return max(0.0, self.total_s - self.spent_s)


__all__ = ["Budget", "LLMFallback"]
