"""Evidence-snippet token counts: counted once at ingest, used by every search.

GIVEN the bundled catalog ingested into Qdrant local mode with the real MiniLM tokenizer,
WHEN searches select evidence, THEN the budget is checked against the stored counts (no
tokenizing during the search) and those counts equal the tokenizer's count of the snippet.
"""

from __future__ import annotations

from agentic_search.logic.snippets import (
    evidence_text,
    snippet_token_entries,
    stored_snippet_tokens,
)
from agentic_search.logic.tokens import token_counter_name
from agentic_search.wire import SNIPPET_CHARS, TOKENS_KEY


def test_every_ingested_record_stores_its_snippet_count(tools_engine, embedder):
    # GIVEN the ingested catalog
    schema = tools_engine.schema
    ids = [
        p[schema.id_field]
        for p in tools_engine.deps.store.scroll(schema, payload=[schema.id_field])
    ]
    records = tools_engine.deps.store.retrieve_records(schema, ids[:40])
    counter = token_counter_name(embedder)
    for rid, rec in records.items():
        payload = rec.payload or {}
        # THEN each payload holds the count of its snippet, as the tokenizer counts it
        snippet = evidence_text(schema, payload)[:SNIPPET_CHARS]
        assert (
            stored_snippet_tokens(payload, SNIPPET_CHARS, counter)
            == (embedder.count_tokens([snippet])[0])
        ), rid


def test_search_selects_evidence_without_tokenizing(tools_engine, embedder):
    # GIVEN a token counter that records what it is asked to count
    asked: list[str] = []
    real = embedder.count_tokens

    def counting(texts):
        asked.extend(texts)
        return real(texts)

    original = tools_engine.deps
    original.caches.clear_token_counts()
    tools_engine.deps = original.derive(embedder=_Counting(embedder, counting))
    try:
        # WHEN searches fill evidence packs up to the token budget
        packs = [
            tools_engine.search(q, limit=10, rounds=2).evidence
            for q in ("free alternative to Cursor", "chatbot for healthcare")
        ]
    finally:
        tools_engine.deps = original
    # THEN nothing was tokenized: the stored counts decided the budget
    assert asked == []
    # AND each selected piece carries its snippet's true count, within the budget
    for pack in packs:
        assert pack is not None and pack.evidence
        for ev in pack.evidence:
            assert ev.tokens == real([ev.text])[0]
        assert sum(ev.tokens for ev in pack.evidence) == pack.tokens <= 2048


def test_stored_count_is_ignored_for_another_snippet_length_or_counter():
    payload = {TOKENS_KEY: {"chars": SNIPPET_CHARS, "counter": "m", "tokens": 17}}
    assert stored_snippet_tokens(payload, SNIPPET_CHARS, "m") == 17
    assert stored_snippet_tokens(payload, 600, "m") is None
    assert stored_snippet_tokens(payload, SNIPPET_CHARS, "approx") is None
    assert stored_snippet_tokens({}, SNIPPET_CHARS, "m") is None
    assert stored_snippet_tokens({TOKENS_KEY: "17"}, SNIPPET_CHARS, "m") is None


def test_entries_count_the_snippet_without_the_title(tools_schema):
    # GIVEN a record whose title would change the count if it were included
    rec = {"id": "x", "name": "Zyxwvut " * 50, "description": "a short text", "category": "IDE"}
    seen: list[str] = []

    def count(texts):
        seen.extend(texts)
        return [len(t) for t in texts]

    # WHEN its entry is made THEN the counted text is the evidence text, title left out
    (entry,) = snippet_token_entries(tools_schema, [rec], count, "len", snippet_chars=200)
    assert seen == [evidence_text(tools_schema, rec)[:200]]
    assert "Zyxwvut" not in seen[0]
    assert entry == {"chars": 200, "counter": "len", "tokens": len(seen[0])}


class _Counting:
    """The real embedder with its ``count_tokens`` replaced (same name: stored counts match)."""

    def __init__(self, embedder, count_tokens) -> None:
        self._embedder = embedder
        self.count_tokens = count_tokens
        self.name, self.dim = embedder.name, embedder.dim

    def __getattr__(self, name):
        return getattr(self._embedder, name)
