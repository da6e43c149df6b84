"""Record real intent answers of a local GGUF model for the unit tests to replay.

Starts the ``LLM_PROVIDER=local`` server (:mod:`agentic_search.adapters.local_llm`) on the
given model, sends the tools domain's intent prompt for each query exactly as
:class:`~agentic_search.adapters.llm_planner.LLMIntentPlanner` does (same system prompt, same
``<query>`` quoting, same JSON-schema response format), and appends one JSON line per answer:
the model file's sha256, the sha256 of the system prompt and of the response schema, the
query, the raw reply text and the call's time. Nothing is edited by hand; the tests check the
prompt hash against today's prompt so a changed prompt shows up as stale recordings.

    python benchmarks/llm/record_replies.py MODEL.gguf --out tests/unit/data/llm_replies.jsonl
    # every tuning-split query of some kinds (for benchmarks/llm/replay_merge.py):
    python benchmarks/llm/record_replies.py MODEL.gguf --tuning task,non-english --out R.jsonl

Only the tuning split can be recorded (``--tuning``): prompts and merge are tuned on it, the
held-out split is only ever measured.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

#: Tuning-split queries of benchmarks/tools_queries (never held-out ones), one per kind at least.
QUERIES = [
    "turn my slide deck into a narrated explainer video",
    "write unit tests for my Python module automatically",
    "editor de código con IA que funcione sin conexión",
    "Rechtschreibprüfung für Deutsch, selbst gehostet",
    "cloner ma voix pour doubler mes vidéos",
    "transcrever áudio para texto offline",
    "free Windows desktop app to upscale images",
    "MIT licensed speech to text",
    "self-hosted alternative to Notion AI",
    "put a natural voice on my audiobook manuscript",
    "add subtitles in three languages to my marketing video",
    "crear una presentación a partir de mis notas",
]


def sha256_text(text: str) -> str:
    """Hex sha256 of UTF-8 text."""
    return hashlib.sha256(text.encode()).hexdigest()


def tuning_queries(kinds: str) -> list[str]:
    """The texts of the tuning-split queries of benchmarks/tools_queries of ``kinds``
    (comma-separated ``type`` values, or ``all``), in file order."""
    data = Path(__file__).resolve().parents[1] / "tools_queries" / "queries.jsonl"
    rows = [json.loads(line) for line in data.read_text().splitlines() if line.strip()]
    wanted = set(kinds.split(","))
    return [
        q["text"]
        for q in rows
        if q["split"] == "tuning" and ("all" in wanted or q["type"] in wanted)
    ]


def main(argv: list[str] | None = None) -> int:
    """Entry point (see module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument(
        "--tuning", default="", help="record these kinds of the tuning split instead (a,b or all)"
    )
    args = ap.parse_args(argv)
    queries = tuning_queries(args.tuning) if args.tuning else QUERIES
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    from assemble_llm import sha256_of
    from openai import OpenAI

    from agentic_search.adapters.local_llm import local_server
    from agentic_search.adapters.openai_chat import response_format
    from agentic_search.logic.llm_prompts import (
        intent_output_model,
        intent_prompt,
        quote_query,
        strict_json_schema,
    )
    from agentic_search.logic.schema import load_schema

    schema = load_schema("tools")
    system = intent_prompt(schema)
    json_schema = strict_json_schema(intent_output_model(schema))
    model_sha = sha256_of(args.model)
    t0 = time.perf_counter()
    server = local_server(args.model, 300.0)
    print(f"loaded {args.model.name} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    client = OpenAI(base_url=server.base_url, api_key="none", timeout=300, max_retries=0)
    with args.out.open("a") as out:
        for query in queries:
            t = time.perf_counter()
            resp = client.chat.completions.create(
                model=args.model.stem,
                messages=[
                    {"role": "system", "content": system},
                    {"role": "user", "content": quote_query(query)},
                ],
                response_format=response_format("json_schema", "intent", json_schema),  # type: ignore[arg-type]
                temperature=0.0,
                max_tokens=600,
            )
            row = {
                "model": args.model.stem,
                "model_sha256": model_sha,
                "prompt_sha256": sha256_text(system),
                "schema_sha256": sha256_text(json.dumps(json_schema, sort_keys=True)),
                "query": query,
                "reply": resp.choices[0].message.content,
                "completion_tokens": resp.usage.completion_tokens if resp.usage else None,
                "seconds": round(time.perf_counter() - t, 2),
                "recorded": time.strftime("%Y-%m-%d", time.gmtime()),
            }
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()
            print(f"{row['seconds']:6.1f} s  {query}", file=sys.stderr)
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
