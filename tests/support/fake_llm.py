"""A recorded-answer LLM at the provider edge: an OpenAI-compatible ``/v1/chat/completions``
on loopback (standard library only) that answers the enrichment prompts deterministically and
logs every request, so a test can count what was asked (also across processes: the log is a
file, one JSON line per request, written before the answer is sent).

Run as a module it serves until killed and prints its port on its first line::

    python -m tests.support.fake_llm --log FILE [--delay-s 0.5] [--fail ID,ID]

The answer to a catalog record is made from its ``name:`` and ``use_cases:`` lines: needs
that paraphrase the use cases (and one that names the record, which the filter must drop, and
a duplicate); a record listed in ``--fail`` is answered with HTTP 500.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def record_field(user: str, name: str) -> str:
    """A ``name: value`` line of a catalog prompt's record (HTML escapes undone)."""
    m = re.search(rf"^(?:<record>)?{name}: (.*?)(?:</record>)?$", user, re.M)
    return (m.group(1) if m else "").replace("&lt;", "<").replace("&gt;", ">")


def answer_for(user: str) -> dict[str, Any]:
    """The deterministic answer to one enrichment prompt's user message."""
    if "<chunk>" in user:
        chunk = re.search(r"<chunk>(.*?)</chunk>", user, re.S)
        words = (chunk.group(1) if chunk else "").split()[:8]
        return {"context": "This passage of the document covers " + " ".join(words) + "."}
    name = record_field(user, "name")
    uses = [u.strip() for u in record_field(user, "use_cases").split(",") if u.strip()]
    needs = [f"help me {u.lower()}" for u in uses] or ["help me with my work"]
    needs += [needs[0], f"use {name} for this"]  # a duplicate and a named one: both dropped
    return {"needs": needs, "category": "handy software"}


class FakeLLM:
    """The server: ``port`` after :meth:`start`; ``log`` gets one JSON line per request
    (``{"name": record name or "", "t": time}``)."""

    def __init__(
        self,
        log: Path,
        delay_s: float = 0.0,
        fail: set[str] | None = None,
        on_ask: Callable[[str], None] | None = None,
    ) -> None:
        self.log = Path(log)
        self.delay_s = delay_s
        self.fail = fail or set()
        #: called with the record name before each answer (a test's write during the call)
        self.on_ask = on_ask
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                user = next(m["content"] for m in body["messages"] if m["role"] == "user")
                name = record_field(user, "name")
                with fake._lock, fake.log.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"name": name, "t": time.time()}) + "\n")
                time.sleep(fake.delay_s)
                if fake.on_ask is not None:
                    fake.on_ask(name)
                if name in fake.fail:
                    self._send(500, {"error": {"message": "recorded failure"}})
                    return
                content = json.dumps(answer_for(user))
                self._send(
                    200,
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", "fake"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": content},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    },
                )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.server.server_address[1])

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible root."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeLLM:
        """Serve on a daemon thread."""
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()

    def asked(self) -> list[str]:
        """The record names asked so far, in order (one per request)."""
        if not self.log.is_file():
            return []
        return [json.loads(ln)["name"] for ln in self.log.read_text().splitlines() if ln]


def enrich_settings(home: Path, fake: FakeLLM, enrich: str = "openai") -> Any:
    """Settings that enrich through ``fake`` (``enrich="off"``: ask nothing) into ``home``,
    without the shipped answers, retries or a result cache."""
    from agentic_search.config import Settings

    return Settings(
        agentic_search_home=home,
        enrich=enrich,
        enrich_model="fake-enricher",
        enrich_shipped=False,
        openai_base_url=fake.base_url,
        openai_api_key="test",
        llm_max_retries=0,
        cache_backend="none",
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", type=Path, required=True)
    ap.add_argument("--delay-s", type=float, default=0.0)
    ap.add_argument("--fail", default="")
    args = ap.parse_args(argv)
    fake = FakeLLM(args.log, args.delay_s, {n for n in args.fail.split(",") if n})
    print(fake.port, flush=True)
    fake.server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
