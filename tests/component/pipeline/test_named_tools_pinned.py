"""Named tools listed without a cue word ("Cursor and Windsurf pricing") are what the user
asks about: they rank first (issue 27, item 5; before: DeepSeek API 1st, Cursor 7th)."""

from __future__ import annotations


def test_named_tools_without_cue_word_rank_first(tools_engine) -> None:
    resp = tools_engine.search("Cursor and Windsurf pricing", limit=10)
    top2 = {c.id for c in resp.output.candidates[:2]}
    assert top2 == {"cursor", "windsurf"}, [c.id for c in resp.output.candidates[:5]]
