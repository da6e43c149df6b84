"""HyDE passages and later-round queries written by an LLM (adapters/llm_writer.py), replayed
from answers RECORDED from the real local runtime (Qwen2.5-Coder 0.5B GGUF through xllamacpp,
benchmarks/llm/record_writer_replies.py): ``tests/unit/data/llm_writer_replies.jsonl`` holds
each raw reply with the model file's sha256 and the hashes of the system prompt, the user
message and the schema the adapter sent. None is hand-written. The replay client answers only
a call whose prompt and message hash to the recorded ones, so a changed prompt shows up as a
stale recording, never as a silently different test.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from support.builders import intent_for, plan_with

from agentic_search.adapters.llm_writer import LLMHyde, LLMRoundWriter
from agentic_search.config import Settings
from agentic_search.dependencies import Dependencies
from agentic_search.logic.executor.rounds import executor_gate, prepare_round_queries
from agentic_search.logic.llm_budget import LLMFallback
from agentic_search.logic.llm_prompts import (
    MAX_TEXT,
    MAX_WRITTEN_QUERIES,
    HydeOutput,
    NextQueriesOutput,
    hyde_prompt,
    next_round_message,
    next_round_prompt,
    quote_query,
    strict_json_schema,
)
from agentic_search.pipeline.prepare_round import next_round
from agentic_search.ports import HydeError
from agentic_search.wire import Coverage, CoverageItem

ROOT = Path(__file__).resolve().parents[2]
ROWS = [
    json.loads(line)
    for line in (ROOT / "tests/unit/data/llm_writer_replies.jsonl").read_text().splitlines()
    if line.strip()
]
HYDE = [r for r in ROWS if r["kind"] == "hyde"]
ROUNDS = [r for r in ROWS if r["kind"] == "rounds"]
#: The sha256 values `make llm` pins (scripts/assemble_llm.py).
PINNED = set(re.findall(r'sha256="([0-9a-f]{64})"', (ROOT / "scripts/assemble_llm.py").read_text()))
CATALOG = {
    rec["id"]: (rec["name"], rec["description"])
    for rec in map(
        json.loads,
        (ROOT / "layers/core/agentic_search/data/tools.jsonl").read_text().splitlines(),
    )
}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class ReplayClient:
    """A ChatJSONClient that answers with the recorded reply whose system prompt and user
    message hash to what the adapter sends (KeyError otherwise: a stale recording)."""

    model = "qwen2.5-coder-0.5b-instruct"

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.replies = {(r["prompt_sha256"], r["user_sha256"]): r["reply"] for r in rows}
        self.calls: list[dict[str, Any]] = []

    def complete_json(self, system: str, user: str, **kw: Any) -> str:
        self.calls.append({"system": system, "user": user, **kw})
        return self.replies[(_sha(system), _sha(user))]


class FailingClient:
    model = "m"

    def complete_json(self, *a: Any, **kw: Any) -> str:
        raise LLMFallback("timeout", "no answer within 30.0 s", transient=True)


def test_recordings_are_current_and_from_a_pinned_model(tools_schema) -> None:
    """Every recorded reply came from a model `make llm` pins and answered the prompt, the
    message and the schema the adapters send today."""
    assert len(HYDE) >= 3 and len(ROUNDS) >= 2 and len(PINNED) == 2
    hyde_schema = _sha(json.dumps(strict_json_schema(HydeOutput), sort_keys=True))
    rounds_schema = _sha(json.dumps(strict_json_schema(NextQueriesOutput), sort_keys=True))
    for row in HYDE:
        assert row["model_sha256"] in PINNED
        assert row["prompt_sha256"] == _sha(hyde_prompt(tools_schema)), row["query"]
        assert row["user_sha256"] == _sha(quote_query(row["query"])), row["query"]
        assert row["schema_sha256"] == hyde_schema
    for row in ROUNDS:
        found = [CATALOG[i] for i in row["found"]]
        message = next_round_message(row["query"], found, row["missing"])
        assert row["model_sha256"] in PINNED
        assert row["prompt_sha256"] == _sha(next_round_prompt(tools_schema)), row["query"]
        assert row["user_sha256"] == _sha(message), row["query"]
        assert row["schema_sha256"] == rounds_schema


@pytest.mark.parametrize("row", HYDE, ids=[r["query"] for r in HYDE])
def test_a_recorded_hyde_passage_is_round_ones_extra_dense_query(row, tools_schema) -> None:
    client = ReplayClient(HYDE)
    settings = Settings(llm_provider="local", llm_hyde="on")
    hyde = LLMHyde(tools_schema, settings, client)
    try:
        expected = HydeOutput.model_validate_json(row["reply"]).passage.strip()
    except ValueError:  # the small model ran past the token cap: a real failure, replayed
        with pytest.raises(HydeError, match="Invalid JSON"):
            hyde.generate(row["query"])
        return
    passage = hyde.generate(row["query"])
    assert passage == expected and passage
    [call] = client.calls
    assert call["schema_name"] == "passage" and call["timeout_s"] == settings.llm_timeout_s
    intent = intent_for(query=row["query"], must_preserve_terms=[])
    state = executor_gate(plan_with(), intent, tools_schema)
    plan, queries = prepare_round_queries(state, tools_schema, hyde_passage=passage)
    assert plan is not None and plan.vector_sources[-1].query_vector_source == "hyde"
    assert plan.vector_sources[-1].text == passage and plan.fusion == "rrf"
    assert queries[-1].purpose == "hyde"


def test_a_failed_hyde_call_is_a_hyde_error_naming_the_model(tools_schema) -> None:
    hyde = LLMHyde(tools_schema, Settings(), FailingClient())
    with pytest.raises(HydeError, match=r"llm:m: timeout: no answer within 30\.0 s"):
        hyde.generate("q")


def _round_two(tools_schema, row: dict[str, Any]):
    """A state after round 1 for a recorded scenario: its query, the recorded evidence in the
    pool, the recorded missing targets uncovered."""
    from support.builders import ev

    intent = intent_for(query=row["query"], must_preserve_terms=[], constraints=[])
    state = executor_gate(plan_with(), intent, tools_schema)
    state.pool = [
        ev(i, title=CATALOG[i][0], text=CATALOG[i][1], rel=1.0 - n / 10)
        for n, i in enumerate(row["found"])
    ]
    # the targets are the recorded labels (as the grader names them), all uncovered
    from agentic_search.wire import CoverageTarget

    state.targets = [CoverageTarget(kind="term", label=m, text=m) for m in row["missing"]]
    state.coverage = Coverage(
        items=[CoverageItem(kind="term", label=m, covered=False) for m in row["missing"]]
    )
    state.round_index = 1
    return state


def _dependencies(tools_schema, writer) -> Dependencies:
    return Dependencies(
        Settings(),
        tools_schema,
        {},
        keyword=SimpleNamespace(name="qdrant-sparse"),
        structured=SimpleNamespace(system="qdrant"),
        hyde=None,
        round_writer=writer,
    )


@pytest.mark.parametrize("row", ROUNDS, ids=[r["query"] for r in ROUNDS])
def test_recorded_round_queries_join_round_two_as_llm_dense_queries(row, tools_schema) -> None:
    client = ReplayClient(ROUNDS)
    writer = LLMRoundWriter(tools_schema, Settings(llm_rounds="on"), client)
    state = _round_two(tools_schema, row)
    work = next_round(_dependencies(tools_schema, writer), state)
    assert work is not None and work.index == 2 and not work.report.errors
    recorded = [" ".join(q.split()) for q in json.loads(row["reply"])["queries"]]
    written = [v.text for v in work.plan.vector_sources if v.query_vector_source == "llm"]
    # what the model wrote, minus what the writer refuses (the query itself, repeats)
    assert (
        written
        == [q for q in dict.fromkeys(recorded) if q.casefold() != row["query"].casefold()][
            :MAX_WRITTEN_QUERIES
        ]
    )
    assert all(len(q) <= MAX_TEXT for q in written)
    assert [q.text for q in work.report.queries if q.purpose == "llm"] == written
    if written:
        assert work.plan.fusion == "rrf"
    assert state.asked[-len(written) :] == [f"llm:{q}" for q in written] or not written


def test_a_failed_round_writer_is_the_rounds_error_not_the_searchs(tools_schema) -> None:
    writer = LLMRoundWriter(tools_schema, Settings(), FailingClient())
    state = _round_two(tools_schema, ROUNDS[0])
    work = next_round(_dependencies(tools_schema, writer), state)
    assert work is not None  # the rules' round-2 queries still run
    [err] = work.report.errors
    assert err.source == "llm-round" and "timeout" in err.message
    assert not [v for v in work.plan.vector_sources if v.query_vector_source == "llm"]


def test_written_queries_are_never_asked_twice(tools_schema) -> None:
    from agentic_search.logic.llm_answers import written_queries

    q = "transcribe meetings offline"
    got = written_queries(
        ["  Offline  speech to text ", q.upper(), "offline speech to text", "x"], q, []
    )
    assert got == ["Offline speech to text"]
    assert written_queries(["offline speech to text", "local whisper app"], q, got) == [
        "local whisper app"
    ]


def test_both_are_off_by_default_and_follow_the_provider(tools_schema, tmp_path) -> None:
    from agentic_search.wiring import build_dependencies

    off = build_dependencies(Settings(agentic_search_home=tmp_path), "tools")
    assert off.round_writer is None and off.hyde is None
    on = build_dependencies(
        Settings(
            agentic_search_home=tmp_path, llm_provider="bedrock", llm_hyde="on", llm_rounds="on"
        ),
        "tools",
    )
    assert isinstance(on.hyde, LLMHyde) and isinstance(on.round_writer, LLMRoundWriter)
    assert on.hyde.name == "llm:amazon.nova-micro-v1:0"
    assert type(on.round_writer.client).__name__ == "BedrockChatClient"
