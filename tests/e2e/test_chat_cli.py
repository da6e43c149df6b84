"""``agentic-search chat``: a conversation through the CLI, each line a turn read against the
results before it, driven as a person would (a terminal: a pty) and as a script would (a
pipe). Each turn's answer is checked against the engine's own answer to the same
conversation."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from support.cli import run_cli

ENV = {"CACHE_BACKEND": "none", "OMP_WAIT_POLICY": "PASSIVE"}
NEED = "AI code completion tools"


def _answers(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def test_a_piped_conversation_reads_each_line_against_the_last_answer(
    indexed_home: Path, tools_engine
):
    lines = [NEED, "only the free ones", "not that one", ":reset", "not that one", ":quit", NEED]
    done = run_cli(
        indexed_home, "chat", "--json", "--limit", "5", input="\n".join(lines) + "\n",
        timeout=900, **ENV,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    first, free, excluded, after_reset = _answers(done.stdout)  # :quit ends it: 4 answers
    shown = [c["id"] for c in first["candidates"]]
    assert "followUp" not in first["intent"]
    assert free["intent"]["followUp"]["kind"] == "filter"
    # the second turn is what the engine answers to that conversation
    history = [{"query": NEED, "ids": shown}]
    expected = tools_engine.search("only the free ones", limit=5, history=history)
    assert [c["id"] for c in free["candidates"]] == [c.id for c in expected.output.candidates]
    # "not that one" excludes the first result shown by the turn before it
    up = excluded["intent"]["followUp"]
    assert up["kind"] == "exclude" and up["turn"] == 2
    free_ids = [c["id"] for c in free["candidates"]]
    assert excluded["intent"]["excludedTools"] == [free_ids[0]]
    assert free_ids[0] not in [c["id"] for c in excluded["candidates"]]
    # after :reset there is no conversation: the line is a query of its own
    assert "followUp" not in after_reset["intent"]
    assert "(conversation reset)" in done.stderr


def test_help_teaches_the_follow_ups_and_the_commands(indexed_home: Path):
    done = run_cli(indexed_home, "chat", "--help", **ENV)
    assert done.returncode == 0
    for words in ("only the free ones", "not that one", "more like the second one", "cheaper",
                  ":reset", ":quit"):  # fmt: skip
        assert words in done.stdout, words


def test_a_terminal_gets_a_prompt_and_the_follow_up_line(indexed_home: Path):
    """GIVEN chat on a terminal (a pty) WHEN a person types a need, then a follow-up, then
    :quit THEN it prompts, shows each table, says how the follow-up was read, and exits 0."""
    main, child = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentic_search_cli.main", "chat", "--limit", "3"],
        stdin=child,
        stdout=child,
        stderr=child,
        env={**os.environ, "AGENTIC_SEARCH_HOME": str(indexed_home), "COLUMNS": "120", **ENV},
        close_fds=True,
    )
    os.close(child)
    seen = b""

    def until(text: bytes, timeout: float = 600.0) -> None:
        nonlocal seen
        end = time.monotonic() + timeout
        while text not in seen:
            assert time.monotonic() < end, seen.decode(errors="replace")[-2000:]
            ready, _, _ = select.select([main], [], [], 1.0)
            if ready:
                try:
                    seen += os.read(main, 65536)
                except OSError:  # the child closed the terminal
                    break
        assert text in seen, seen.decode(errors="replace")[-2000:]

    try:
        until(b"> ")
        os.write(main, f"{NEED}\n".encode())
        until(b"results for")
        mark = len(seen)
        os.write(main, b"which of those run on Linux?\n")
        until(b"follow-up: filter of turn 1")
        until(b"results for")
        assert b"searched as 'AI code completion tools run on linux'" in seen[mark:]
        os.write(main, b":quit\n")
        assert proc.wait(timeout=120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(main)
