"""Token counts for evidence budgets: the embedder's own tokenizer when it has one, else an
approximation (words and punctuation x 1.3)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentic_search.ports import Embedder

_PIECE = re.compile(r"\w+|[^\w\s]")


def approx_token_count(texts: Sequence[str]) -> list[int]:
    """Approximate word-piece counts (words and punctuation, x1.3 rounded up, +2 for the
    special tokens): the budget counter for embedders without a local tokenizer."""
    return [2 + -(-len(_PIECE.findall(t)) * 13 // 10) for t in texts]


def token_counter(embedder: Embedder) -> Callable[[Sequence[str]], list[int]]:
    """The embedder's own ``count_tokens`` when it has one, else :func:`approx_token_count`."""
    fn = getattr(embedder, "count_tokens", None)
    return fn if callable(fn) else approx_token_count


def token_counter_name(embedder: Embedder) -> str:
    """Which counter :func:`token_counter` uses: the embedder's name, or ``approx``."""
    return embedder.name if callable(getattr(embedder, "count_tokens", None)) else "approx"


__all__ = ["approx_token_count", "token_counter", "token_counter_name"]
