"""``agentic-search chat``: a conversation with the catalog, one line a turn, each read against
the answers before it (follow-ups: "only the free ones", "not that one", "more like the
second one", "cheaper")."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from agentic_search_cli.common import (
    add_embedder_flag,
    add_llm_flag,
    console,
    open_service,
    positive_limit,
    settings_for,
)

CHAT_HELP = """\
Each line you type is one turn: the first states a need, the next ones refine it against the
results just shown, or start over when they stand alone.

  > AI code completion tools          a need
  > only the free ones                a filter on those results (shown first), then wider
  > which of those run on Linux?      another filter
  > not that one                      without the first result ("without Cursor": by name)
  > more like the second one          like result 2 ("something like #3")
  > what about for teams?             the same need, another preference
  > cheaper                           under the median price of the results shown
  > open source vector database       a new need: the conversation starts again

Commands: :reset (forget the conversation), :history (the turns so far), :explain (toggle
how each turn was read), :help, :quit (or Ctrl-D). With --json each answer is one JSON line.
"""

#: The most earlier turns sent with a query (``SearchRequest.history``'s bound).
TURNS_KEPT = 10
#: The most ids of a turn kept for the next one.
IDS_KEPT = 50


def add_parser(sub: Any) -> None:
    """Register ``chat``."""
    s = sub.add_parser(
        "chat",
        help="a conversation: each line a turn, read against the results before it",
        description="Search in turns: type a need, then refine it ('only the free ones', 'not "
        "that one', 'more like the second one', 'cheaper'); a line that stands alone starts "
        "over. Reads stdin, so a file or a pipe of lines is a scripted conversation.",
        epilog=CHAT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument(
        "--limit", "-n", type=positive_limit, default=10, help="results per turn, 1..100"
    )
    s.add_argument(
        "--explain",
        action="store_true",
        help="show how each turn was read (follow-up kind, kept, added, dropped) and the plan",
    )
    s.add_argument(
        "--json", action="store_true", help="print each answer as one line of JSON (the wire)"
    )
    s.add_argument("--domain", default="tools", help="domain name (default tools)")
    add_llm_flag(s)
    add_embedder_flag(s)


class Conversation:
    """The turns so far (oldest first, each ``{"query", "ids"}``: what ``history`` takes), at
    most :data:`TURNS_KEPT`."""

    def __init__(self) -> None:
        self.turns: list[dict[str, Any]] = []

    def add(self, query: str, ids: list[str]) -> None:
        """Remember a turn and the ids shown for it."""
        self.turns.append({"query": query, "ids": ids[:IDS_KEPT]})
        del self.turns[:-TURNS_KEPT]

    def reset(self) -> None:
        """Forget every turn."""
        self.turns.clear()


class _Searcher:
    """Searches of one chat: asked of a running ``serve`` over loopback, else run by this
    process as a reader (a private copy of the index, as ``search`` does)."""

    def __init__(self, args: argparse.Namespace) -> None:
        from agentic_search_cli.cmd_search import _serving

        self.args = args
        self.settings = settings_for(args, qdrant_edge_reader=True)
        self.server = _serving(self.settings, args.domain)
        self.service: Any = None

    def search(self, query: str, history: list[dict[str, Any]]) -> Any:
        """The response to ``query`` with ``history`` (a ``SearchResponse``).

        Raises:
            ValueError: the request is invalid (its one-line reason).
            RuntimeError: ``serve`` could not answer.
        """
        if self.server is not None:
            return self._ask_serve(query, history)
        if self.service is None:
            from agentic_search_cli.cmd_search import _before_first_search, _open_index

            self.service = open_service(self.args.domain, self.settings)
            _open_index(self.service)
            code = _before_first_search(self.service)
            if code is not None:
                raise KeyboardInterrupt
        return self.service.search(query, limit=self.args.limit, history=history or None)

    def _ask_serve(self, query: str, history: list[dict[str, Any]]) -> Any:
        from agentic_search.wire import SearchResponse
        from agentic_search_cli.serve_link import ServeLinkError, post_json

        body: dict[str, Any] = {"query": query, "limit": self.args.limit}
        body["domain"] = self.args.domain
        if history:
            body["history"] = history
        try:
            status, answer = post_json(self.server, "/search", body)
        except ServeLinkError as exc:
            raise RuntimeError(str(exc)) from None
        if status == 422:
            raise ValueError(str(answer.get("message") or answer))
        if status != 200:
            message = answer.get("message") or answer.get("error") or f"status {status}"
            raise RuntimeError(f"serve (pid {self.server.pid}): {message}")
        return SearchResponse.from_wire(answer)

    def close(self) -> None:
        if self.service is not None:
            self.service.close()


def run(args: argparse.Namespace, stdin: TextIO | None = None) -> int:
    """Run ``chat`` over ``stdin`` (default ``sys.stdin``) until EOF or ``:quit``; 0, or 1
    when the last turn could not be answered. A prompt is shown when stdin is a terminal."""
    stream = stdin or sys.stdin
    interactive = stream.isatty()
    out, err = console(), console(stderr=True)
    searcher = _Searcher(args)
    if searcher.server is not None:
        err.print(
            f"agentic-search: serve (pid {searcher.server.pid}, port {searcher.server.port}) "
            "holds the index; asking it",
            markup=False,
            soft_wrap=True,
        )
    if interactive:
        err.print("Type a need, then refine it; :help for examples, :quit to leave.", markup=False)
    chat = Conversation()
    explain = args.explain
    code = 0
    try:
        while True:
            if interactive:
                sys.stderr.write("> ")
                sys.stderr.flush()
            line = stream.readline()
            if not line:
                break
            text = line.strip()
            if not text:
                continue
            if text.startswith(":"):
                command = text[1:].strip().lower()
                if command in ("quit", "q", "exit"):
                    break
                if command == "reset":
                    chat.reset()
                    err.print("(conversation reset)", markup=False)
                elif command == "history":
                    for n, turn in enumerate(chat.turns, start=1):
                        out.print(
                            f"{n}. {turn['query']}  ->  {', '.join(turn['ids'][:5])}", markup=False
                        )
                elif command == "explain":
                    explain = not explain
                    err.print(f"(explain {'on' if explain else 'off'})", markup=False)
                elif command == "help":
                    out.print(CHAT_HELP, markup=False)
                else:
                    err.print(
                        f"unknown command {text!r}: :reset, :history, :explain, :help, :quit",
                        markup=False,
                    )
                continue
            code = _turn(searcher, chat, text, explain, args.json, out, err)
    except KeyboardInterrupt:
        sys.stderr.write("agentic-search: interrupted\n")
        return 130
    finally:
        searcher.close()
    return code


def _turn(searcher: _Searcher, chat: Conversation, text: str, explain: bool, as_json: bool,
          out: Any, err: Any) -> int:  # fmt: skip
    """One turn: validated, searched with the conversation, shown, remembered; 0 or 1."""
    from agentic_search.logic.availability import unanswered, unavailable_message
    from agentic_search.wire.search import query_problem

    problem = query_problem(text)
    if problem:
        err.print(f"agentic-search: {problem}", markup=False)
        return 1
    try:
        resp = searcher.search(text, chat.turns)
    except (ValueError, RuntimeError) as exc:
        err.print(f"agentic-search: error: {exc}", markup=False, soft_wrap=True)
        return 1
    output = resp.output.wire()
    failed = unanswered(output)
    if failed:
        err.print(
            f"agentic-search: error: {unavailable_message(failed, output['errors'])}",
            markup=False,
        )
        return 1
    ids = [c.id for c in resp.output.candidates]
    if as_json:
        sys.stdout.write(json.dumps(resp.wire(), ensure_ascii=False) + "\n")
        sys.stdout.flush()
    else:
        from agentic_search_cli.render import follow_up_lines, print_search

        if not explain:
            for line in follow_up_lines(resp.intent)[:1]:
                err.print(f"({line})", markup=False, soft_wrap=True)
        print_search(out, resp, explain)
    chat.add(text, ids)
    return 0
