"""Recorded LLM answers for the LLM-path tests: a chat completion around an assistant's
content, and well-formed intent and plan answers over the tools schema (keyword overrides)."""

from __future__ import annotations

from typing import Any


def chat_completion(content: str) -> dict[str, Any]:
    """An OpenAI chat completion whose assistant message is ``content``."""
    return {
        "id": "chatcmpl-recorded",
        "object": "chat.completion",
        "created": 1_767_225_600,
        "model": "recorded",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def intent_answer(**over: Any) -> dict[str, Any]:
    """A well-formed intent answer for "free alternative to Cursor that works offline"."""
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
        "constraints": [
            {"field": "pricing_model", "operator": "in", "value": ["Free", "Open Source"]},
            {"field": "deployment", "operator": "in", "value": ["Local"]},
        ],
    }
    base.update(over)
    return base


def plan_answer(**over: Any) -> dict[str, Any]:
    """A well-formed plan answer with three sources (RRF)."""
    base: dict[str, Any] = {
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
    base.update(over)
    return base
