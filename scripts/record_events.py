"""Record the events of events/: one realistic event per function and case.

Runs real searches over the bundled catalog, one step at a time through
``agentic_search.pipeline.steps.invoke`` (the JSON edge of every state) in the order of
``statemachine/search.asl.json``, and writes the input each state's function receives. The API
events are built by ``local_server.http_api_event`` (what ``agentic-search serve`` hands the
SearchApiFunction handler). See events/README.md for what each file is.

The output is deterministic: request ids, correlation ids, clock readings and durations are set
to constants, so rerunning the recorder on the same code and catalog rewrites the same files.

Usage:
    python scripts/record_events.py [--home DIR] [--out events]

``--home`` is a working folder for the embedded stores (default: a temporary folder, where the
bundled catalog is ingested first, about 15 s). It must not be in use by another process: Qdrant
local mode allows one client per folder.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if importlib.util.find_spec("agentic_search") is None:  # not installed: the layer's source
    sys.path.insert(0, str(ROOT / "layers" / "core"))

from agentic_search.adapters.caches import SqliteCache  # noqa: E402
from agentic_search.components import Components  # noqa: E402
from agentic_search.config import Settings  # noqa: E402
from agentic_search.pipeline.steps import invoke  # noqa: E402
from agentic_search.service import SearchService  # noqa: E402

#: Every recorded clock reading (epoch seconds): 2026-01-01T00:00:00Z.
FIXED_EPOCH = 1767225600.0
#: The API Gateway request time matching FIXED_EPOCH.
FIXED_TIME = "01/Jan/2026:00:00:00 +0000"
#: Results per search: keeps the fixtures small.
LIMIT = 5
#: A query answered in one round and one that goes on to a second round.
QUERY = "free code editor"
QUERY_TWO_ROUNDS = "chatbot for healthcare"

# Keys whose values are clock readings or durations (camelCase, as the state carries them).
_EPOCH_KEYS = {"startedAt"}
_DURATION_KEYS = {"ms", "totalMs", "latencyMs", "pipelineTotal"}
_DURATION_MAPS = {"stageMs", "stageTotals", "sourceMs"}
#: Scores are rounded to this many decimals: the embedder's last digits vary from run to run.
SCORE_DECIMALS = 4

INTENT_ERROR = {
    "Error": "States.Timeout",
    "Cause": "Task timed out after 10.00 seconds (the LLM intent extractor did not answer)",
}
FUSE_ERROR = {
    "Error": "Runtime.ExitError",
    "Cause": json.dumps(
        {
            "errorType": "Runtime.ExitError",
            "errorMessage": "RequestId: 6f1c0d2e-0000-4000-8000-000000000001 Error: Runtime "
            "exited with error: signal: killed",
        }
    ),
}


def stabilize(value: Any, key: str | None = None, clock: bool = True) -> Any:
    """``value`` with floats rounded to :data:`SCORE_DECIMALS` and, when ``clock``, clock
    readings set to :data:`FIXED_EPOCH` and durations to 0 (else they are left as they are)."""
    if isinstance(value, dict):
        if key in _DURATION_MAPS:
            return {k: 0.0 for k in value} if clock else value
        return {k: stabilize(v, k, clock) for k, v in value.items()}
    if isinstance(value, list):
        return [stabilize(v, None, clock) for v in value]
    if key in _EPOCH_KEYS and isinstance(value, int | float):
        return FIXED_EPOCH if clock else value
    if key in _DURATION_KEYS and isinstance(value, int | float) and not isinstance(value, bool):
        return 0.0 if clock else value
    if isinstance(value, float):
        return round(value, SCORE_DECIMALS)
    return value


class Recorder:
    """Runs the steps through :func:`invoke` and writes the events."""

    def __init__(self, components: Components, out: Path) -> None:
        self.components = components
        self.out = out
        self.written: list[Path] = []

    def write(self, rel: str, event: dict[str, Any], stable: bool = True) -> None:
        path = self.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = stabilize(copy.deepcopy(event)) if stable else event
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        self.written.append(path)

    def step(self, name: str, state: dict[str, Any]) -> dict[str, Any]:
        # Each step gets the state as it is written (scores rounded), so a replay of an event
        # computes what the recording did; but with the live clock readings (GradeRound
        # measures the round's latency from round.startedAt).
        state = stabilize(copy.deepcopy(state), clock=False)
        return invoke(name, state, lambda _: self.components)

    def retrieve_all(self, state: dict[str, Any]) -> list[dict[str, Any]]:
        """The Map: one Retrieve per sub-query, with the event its ItemSelector builds."""
        domain = state["request"]["domain"]
        return [
            self.step("Retrieve", {"domain": domain, "subQuery": sq})
            for sq in state["round"]["subQueries"]
        ]

    @staticmethod
    def initial(query: str, correlation_id: str) -> dict[str, Any]:
        """The state machine's input, as SearchApiFunction starts it."""
        return {
            "request": {"query": query, "limit": LIMIT, "domain": "tools"},
            "correlationId": correlation_id,
            "config": {"mapMaxConcurrency": 8},
        }

    def record_one_round_flow(self) -> None:
        """QUERY end to end (every step's input), then the same request again (a cache hit)."""
        state = self.initial(QUERY, "c0ffee00-0000-4000-8000-000000000001")
        self.write("cache_check/miss.json", state)
        state = self.step("CacheCheck", state)
        assert not state["cache"]["hit"], "the recorder's cache must start empty"

        self.write("extract_intent/input.json", state)
        self.write("extract_intent/fallback.json", {**state, "intentError": INTENT_ERROR})
        state = self.step("ExtractIntent", state)

        self.write("plan_query/input.json", state)
        state = self.step("PlanQuery", state)

        self.write("prepare_round/round1.json", state)
        first = True
        while True:
            state = self.step("PrepareRound", state)
            if not state["executor"]["continueSearch"] or "round" not in state:
                break
            if first:
                kinds: dict[str, dict[str, Any]] = {}
                for sq in state["round"]["subQueries"]:
                    kinds.setdefault(sq["kind"], sq)
                missing = {"dense", "sparse", "structured"} - set(kinds)
                assert not missing, f"{QUERY!r} has no {missing} sub-query: pick another query"
                for kind, sq in kinds.items():
                    self.write(f"retrieve/{kind}.json", {"domain": "tools", "subQuery": sq})
            state["round"]["results"] = self.retrieve_all(state)
            if first:
                self.write("fuse_rerank/input.json", state)
            state = self.step("FuseRerank", state)
            if first:
                self.write("grade_round/input.json", state)
            state = self.step("GradeRound", state)
            first = False
            if not state["executor"]["continueSearch"]:
                break

        self.write("finalize/input.json", state)
        state = self.step("Finalize", state)
        assert state["response"]["candidates"], f"{QUERY!r} found nothing"
        assert not state["response"].get("errors"), state["response"]["errors"]
        self.write("cache_store/input.json", state)
        self.step("CacheStore", state)

        # The same request again: CacheStore has stored the answer, so CacheCheck hits.
        again = self.initial(QUERY, "c0ffee00-0000-4000-8000-000000000002")
        self.write("cache_check/hit.json", again)
        again = self.step("CacheCheck", again)
        assert again["cache"]["hit"], "the repeated request must hit the cache"
        self.write("finalize/cache_hit.json", again)

    def record_two_round_flow(self) -> None:
        """QUERY_TWO_ROUNDS: PrepareRound's input for round 2, and Finalize's input after
        round 2's FuseRerank failed (the Catch keeps FuseRerank's input, adds ``fuseError``)."""
        state = self.initial(QUERY_TWO_ROUNDS, "c0ffee00-0000-4000-8000-000000000003")
        for name in ("CacheCheck", "ExtractIntent", "PlanQuery", "PrepareRound"):
            state = self.step(name, state)
        state["round"]["results"] = self.retrieve_all(state)
        state = self.step("FuseRerank", state)
        state = self.step("GradeRound", state)
        assert state["executor"]["continueSearch"], f"{QUERY_TWO_ROUNDS!r} stopped after round 1"
        self.write("prepare_round/round2.json", state)
        state = self.step("PrepareRound", state)
        assert state["executor"]["continueSearch"] and "round" in state
        state["round"]["results"] = self.retrieve_all(state)
        self.write("finalize/after_fuse_error.json", {**state, "fuseError": FUSE_ERROR})

    def record_api(self) -> None:
        """API Gateway HTTP API (v2) events for SearchApiFunction."""
        from agentic_search_cli.local_server import http_api_event

        api_events: list[str] = []

        def event(
            rel: str,
            method: str,
            target: str,
            body: Any = None,
            ctype: str | None = None,
            route_key: str | None = None,
        ) -> None:
            raw = b"" if body is None else json.dumps(body).encode("utf-8")
            headers = {
                "host": "localhost:8080",
                "user-agent": "curl/8.5.0",
                "accept": "*/*",
            }
            if raw:
                headers["content-type"] = ctype or "application/json"
                headers["content-length"] = str(len(raw))
            ev = http_api_event(method, target, headers, raw)
            api_events.append(rel)
            # API Gateway's request ids look like this (16 characters, base64 alphabet).
            ev["requestContext"]["requestId"] = f"Xq3vLhAAoAMEY{len(api_events):02d}="
            ev["requestContext"]["time"] = FIXED_TIME
            ev["requestContext"]["timeEpoch"] = int(FIXED_EPOCH * 1000)
            if route_key is not None:  # the route API Gateway matched (its $default route)
                ev["routeKey"] = ev["requestContext"]["routeKey"] = route_key
            self.write(f"search_api/{rel}", ev, stable=False)

        event("post_search.json", "POST", "/search", {"query": QUERY, "limit": LIMIT})
        event("post_search_invalid_limit.json", "POST", "/search", {"query": QUERY, "limit": 500})
        event(
            "post_search_unknown_field.json",
            "POST",
            "/search",
            {"query": QUERY, "limit": LIMIT, "sort": "price"},
        )
        event("post_search_empty_query.json", "POST", "/search", {"query": "", "limit": LIMIT})
        # curl -d '{"query": ...}' without -H: curl declares a form-encoded body.
        event(
            "post_search_form_encoded.json",
            "POST",
            "/search",
            {"query": QUERY, "limit": LIMIT},
            ctype="application/x-www-form-urlencoded",
        )
        event("get_health.json", "GET", "/health")
        event("get_openapi.json", "GET", "/openapi.json")
        # What no route of template.yaml matches reaches SearchApiFunction through the $default
        # route: another method of a known path (405 with Allow), an unknown path (404).
        event("default_post_sync_status.json", "POST", "/sync/status", {}, route_key="$default")
        event("default_get_search.json", "GET", "/search", route_key="$default")
        event("default_get_unknown.json", "GET", "/nothing/here", route_key="$default")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path, help="working folder (default: a temporary one)")
    ap.add_argument("--out", type=Path, default=ROOT / "events", help="events folder")
    args = ap.parse_args(argv)

    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    with tempfile.TemporaryDirectory(prefix="record-events-") as tmp:
        home = args.home or Path(tmp) / "home"
        # The embedded defaults, whatever the environment says: the events must not depend on
        # who records them.
        settings = Settings(
            agentic_search_home=home,
            qdrant_path=None,
            qdrant_url=None,
            mongodb_uri=None,
            openai_base_url=None,
            embedding_model=None,
            llm_model=None,
            reranker_model_path=None,
            reranker_url=None,
            cache_backend="none",
            max_rounds=3,
        )
        engine = SearchService.create(settings, "tools")
        try:
            if engine.ensure_bundled_catalog() is not None:
                print(f"ingested the bundled catalog into {home}", file=sys.stderr)
            # A fresh cache, so the first request is a miss and the catalog version is 0 (what
            # an empty cache in a replay computes the same key with).
            cache = SqliteCache(Path(tmp) / "cache.sqlite")
            rec = Recorder(engine.components.derive(cache=cache), args.out)
            rec.record_one_round_flow()
            rec.record_two_round_flow()
            rec.record_api()
            cache.close()
        finally:
            engine.close()
    for path in rec.written:
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
