"""Record real HyDE passages and later-round queries of a local GGUF model for the unit tests.

Starts the ``LLM_PROVIDER=local`` server on the given model and runs the project's own
:class:`~agentic_search.adapters.llm_writer.LLMHyde` and
:class:`~agentic_search.adapters.llm_writer.LLMRoundWriter` through a client that records
every call: so the system prompt, user message, JSON schema and token cap are exactly what
the adapters send. One JSON line per call: the model file's sha256, the sha256 of the system
prompt, of the user message and of the schema, the inputs, the raw reply and the call's time.
Nothing is edited by hand.

    python benchmarks/llm/record_writer_replies.py MODEL.gguf \
        --out tests/unit/data/llm_writer_replies.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

#: HyDE: tuning-split queries of benchmarks/tools_queries (never held-out ones).
HYDE_QUERIES = [
    "turn my slide deck into a narrated explainer video",
    "transcrever áudio para texto offline",
    "self-hosted alternative to Notion AI",
]
#: Later rounds: a query, the catalog records found so far (ids in the bundled catalog) and
#: the coverage targets still missing (labels as the grader writes them).
ROUND_SCENARIOS: list[dict[str, Any]] = [
    {
        "query": "free Windows desktop app to upscale images",
        "found": ["leonardo-ai", "krea"],
        "missing": ["platforms ~ Windows", "upscale"],
    },
    {
        "query": "transcribe meetings offline on Linux",
        "found": ["otter-ai", "fireflies-ai", "assemblyai"],
        "missing": ["deployment in [Local]", "platforms ~ Linux"],
    },
]


def sha256_text(text: str) -> str:
    """Hex sha256 of UTF-8 text."""
    return hashlib.sha256(text.encode()).hexdigest()


class RecordingClient:
    """Wraps a ChatJSONClient; keeps (system, user, schema, reply, seconds) of every call."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model = inner.model
        self.calls: list[dict[str, Any]] = []

    def complete_json(self, system: str, user: str, **kw: Any) -> str:
        t = time.perf_counter()
        reply = self.inner.complete_json(system, user, **kw)
        self.calls.append(
            {
                "prompt_sha256": sha256_text(system),
                "user_sha256": sha256_text(user),
                "schema_sha256": sha256_text(json.dumps(kw["json_schema"], sort_keys=True)),
                "reply": reply,
                "seconds": round(time.perf_counter() - t, 2),
            }
        )
        return reply


def found_records(ids: list[str]) -> list[tuple[str, str]]:
    """``(name, description)`` of bundled catalog records, in ``ids`` order."""
    import agentic_search

    catalog = Path(agentic_search.__file__).parent / "data" / "tools.jsonl"
    by_id = {}
    for line in catalog.read_text().splitlines():
        if line.strip():
            rec = json.loads(line)
            by_id[rec["id"]] = (rec["name"], rec["description"])
    return [by_id[i] for i in ids]


def main(argv: list[str] | None = None) -> int:
    """Entry point (see module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    from assemble_llm import sha256_of

    from agentic_search.adapters.llm_writer import LLMHyde, LLMRoundWriter
    from agentic_search.adapters.local_llm import local_server
    from agentic_search.adapters.openai_chat import OpenAIChatClient
    from agentic_search.config import Settings
    from agentic_search.logic.schema import load_schema

    schema = load_schema("tools")
    model_sha = sha256_of(args.model)
    t0 = time.perf_counter()
    server = local_server(args.model, 300.0)
    print(f"loaded {args.model.name} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    settings = Settings(
        llm_provider="local",
        llm_gguf_path=args.model,
        openai_base_url=server.base_url,
        llm_timeout_s=300.0,
        llm_max_retries=0,
    )
    client = RecordingClient(OpenAIChatClient(settings))
    hyde, writer = LLMHyde(schema, settings, client), LLMRoundWriter(schema, settings, client)
    jobs: list[tuple[str, dict[str, Any]]] = [("hyde", {"query": q}) for q in HYDE_QUERIES]
    jobs += [("rounds", s) for s in ROUND_SCENARIOS]
    with args.out.open("a") as out:
        for kind, job in jobs:
            try:  # a reply the adapter refuses is recorded too (the tests replay it)
                if kind == "hyde":
                    hyde.generate(job["query"])
                else:
                    writer.write(job["query"], found_records(job["found"]), job["missing"], [])
            except Exception as exc:  # the recording says what happened
                print(f"  refused: {exc}", file=sys.stderr)
            row = {
                "kind": kind,
                "model": args.model.stem,
                "model_sha256": model_sha,
                **job,
                **client.calls[-1],
                "recorded": time.strftime("%Y-%m-%d", time.gmtime()),
            }
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()
            print(f"{row['seconds']:6.1f} s  {kind}: {job['query']}", file=sys.stderr)
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
