"""Record the events of events/: one realistic event per function and case.

Runs real searches over the bundled catalog by interpreting the search ASL
(``layers/core/agentic_search/statemachine/search.asl.json``) with
:func:`agentic_search.pipeline.asl.interpret`, each Task through
``agentic_search.pipeline.steps.call_function`` (the JSON edge of every function), and writes
the input each state's function receives. The API events are built by
``local_server.http_api_event`` (what ``agentic-search serve`` hands the SearchApiFunction
handler). See events/README.md for what each file is.

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
from agentic_search.config import Settings  # noqa: E402
from agentic_search.dependencies import Dependencies  # noqa: E402
from agentic_search.pipeline import asl  # noqa: E402
from agentic_search.pipeline.steps import call_function, search_definition  # noqa: E402
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
#: ISO 8601 clock readings (a cached answer's computedAt), set to FIXED_EPOCH's instant.
_ISO_KEYS = {"computedAt"}
FIXED_ISO = "2026-01-01T00:00:00+00:00"
_DURATION_KEYS = {"ms", "totalMs", "latencyMs", "pipelineTotal", "lookupMs", "setupMs"}
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
    if key in _ISO_KEYS and isinstance(value, str):
        return FIXED_ISO if clock else value
    if key in _DURATION_KEYS and isinstance(value, int | float) and not isinstance(value, bool):
        return 0.0 if clock else value
    if isinstance(value, float):
        return round(value, SCORE_DECIMALS)
    return value


class Recording:
    """The interpreter's Task adapter: every function runs on its input as the event files hold it
    (scores rounded, so a replay of an event computes what the recording did; but with the live
    clock readings: GradeRound measures the round's latency from round.startedAt), and every
    input is kept, by function, in call order."""

    def __init__(self, deps: Dependencies) -> None:
        self.deps = deps
        self.inputs: dict[str, list[dict[str, Any]]] = {}

    def call(self, function: str, payload: Any) -> Any:
        event = stabilize(copy.deepcopy(payload), clock=False)
        self.inputs.setdefault(function, []).append(event)
        return call_function(function, event, lambda _: self.deps)

    def keep(self, data: Any) -> Any:
        return copy.deepcopy(data)

    def restore(self, kept: Any) -> Any:
        return kept

    def map(self, run: Any, items: Any, concurrency: int) -> list[Any]:
        return [run(i) for i in items]


class Recorder:
    """Walks the search ASL over the dependencies and writes the events."""

    def __init__(self, deps: Dependencies, out: Path) -> None:
        self.deps = deps
        self.out = out
        self.written: list[Path] = []
        self.api_events = 0

    def write(self, rel: str, event: dict[str, Any], stable: bool = True) -> None:
        path = self.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = stabilize(copy.deepcopy(event)) if stable else event
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        self.written.append(path)

    def search(self, query: str, correlation_id: str) -> tuple[dict[str, Any], Recording]:
        """One search through the ASL: its response and every function's inputs."""
        rec = Recording(self.deps)
        out = asl.interpret(search_definition(), self.initial(query, correlation_id), rec).output
        return out, rec

    @staticmethod
    def initial(query: str, correlation_id: str) -> dict[str, Any]:
        """The state machine's input, as SearchApiFunction starts it."""
        return {
            "request": {"query": query, "limit": LIMIT, "domain": "tools"},
            "correlationId": correlation_id,
            "caller": {"principals": []},
            "config": {"mapMaxConcurrency": 8},
        }

    def record_one_round_flow(self) -> None:
        """QUERY end to end (every step's input), then the same request again (a cache hit)."""
        response, rec = self.search(QUERY, "c0ffee00-0000-4000-8000-000000000001")
        seen = rec.inputs
        assert not seen["ExtractIntentFunction"][0].get("cache", {}).get("hit"), (
            "the recorder's cache must start empty"
        )
        assert response["candidates"], f"{QUERY!r} found nothing"
        assert not response.get("errors"), response["errors"]
        self.write("cache_check/miss.json", seen["CacheCheckFunction"][0])
        intent_input = seen["ExtractIntentFunction"][0]
        self.write("extract_intent/input.json", intent_input)
        self.write("extract_intent/fallback.json", {**intent_input, "intentError": INTENT_ERROR})
        self.write("plan_query/input.json", seen["PlanQueryFunction"][0])
        self.write("prepare_round/round1.json", seen["PrepareRoundFunction"][0])
        first = seen["FuseRerankFunction"][0]
        kinds: dict[str, dict[str, Any]] = {}
        for sq in first["round"]["subQueries"]:
            kinds.setdefault(sq["kind"], sq)
        missing = {"dense", "sparse", "structured"} - set(kinds)
        assert not missing, f"{QUERY!r} has no {missing} sub-query: pick another query"
        for kind, sq in kinds.items():
            # a Map item as the ASL's ItemSelector makes it: the domain, the state's caller
            item = {"domain": "tools", "caller": first["caller"], "subQuery": sq}
            self.write(f"retrieve/{kind}.json", item)
        self.write("fuse_rerank/input.json", first)
        self.write("grade_round/input.json", seen["GradeRoundFunction"][0])
        self.write("finalize/input.json", seen["FinalizeFunction"][0])
        self.write("cache_store/input.json", seen["CacheStoreFunction"][0])

        # The same request again: CacheStore has stored the answer, so CacheCheck hits.
        again, rec = self.search(QUERY, "c0ffee00-0000-4000-8000-000000000002")
        assert again["cache"]["hit"], "the repeated request must hit the cache"
        self.write("cache_check/hit.json", rec.inputs["CacheCheckFunction"][0])
        self.write("finalize/cache_hit.json", rec.inputs["FinalizeFunction"][0])

    def record_two_round_flow(self) -> None:
        """QUERY_TWO_ROUNDS: PrepareRound's input for round 2, and Finalize's input after
        round 2's FuseRerank failed (the Catch keeps FuseRerank's input, adds ``fuseError``)."""
        _, rec = self.search(QUERY_TWO_ROUNDS, "c0ffee00-0000-4000-8000-000000000003")
        prepared = rec.inputs["PrepareRoundFunction"]
        fused = rec.inputs["FuseRerankFunction"]
        assert len(prepared) >= 2 and len(fused) >= 2, f"{QUERY_TWO_ROUNDS!r} took one round"
        self.write("prepare_round/round2.json", prepared[1])
        self.write("finalize/after_fuse_error.json", {**fused[1], "fuseError": FUSE_ERROR})

    def api_event(
        self,
        rel: str,
        method: str,
        target: str,
        body: Any = None,
        ctype: str | None = None,
        route_key: str | None = None,
        headers: dict[str, str] | None = None,
        claims: dict[str, str] | None = None,
        request_id: str | None = None,
        iam_arn: str | None = None,
    ) -> None:
        """Write the API Gateway HTTP API (v2) event of one request as ``events/<rel>``
        (``claims``: what a JWT authorizer verified, as API Gateway hands them over;
        ``iam_arn``: the SigV4 caller the IAM authorizer verified)."""
        from agentic_search_cli.local_server import http_api_event

        raw = b"" if body is None else json.dumps(body).encode("utf-8")
        headers = headers or {"host": "localhost:8080", "user-agent": "curl/8.5.0", "accept": "*/*"}
        if raw:
            headers["content-type"] = ctype or "application/json"
            headers["content-length"] = str(len(raw))
        ev = http_api_event(method, target, headers, raw)
        self.api_events += 1
        # API Gateway's request ids look like this (16 characters, base64 alphabet).
        ev["requestContext"]["requestId"] = f"Xq3vLhAAoAMEY{self.api_events:02d}="
        ev["requestContext"]["time"] = FIXED_TIME
        ev["requestContext"]["timeEpoch"] = int(FIXED_EPOCH * 1000)
        if route_key is not None:  # the route API Gateway matched (its $default route)
            ev["routeKey"] = ev["requestContext"]["routeKey"] = route_key
        if claims is not None:  # API Gateway renders an array claim as "[a b]"
            ev["requestContext"]["authorizer"] = {"jwt": {"claims": claims, "scopes": None}}
        if iam_arn is not None:  # AuthMode=IAM: who signed, never its tags
            account = iam_arn.split(":")[4]
            session = iam_arn.rsplit("/", 1)[-1]
            ev["requestContext"]["authorizer"] = {
                "iam": {
                    "accessKey": "ASIAXAMPLEACCESSKEY1",
                    "accountId": account,
                    "callerId": f"AROAXAMPLEROLEID0001:{session}",
                    "cognitoIdentity": None,
                    "principalOrgId": None,
                    "userArn": iam_arn,
                    "userId": f"AROAXAMPLEROLEID0001:{session}",
                }
            }
        if request_id is not None:
            ev["requestContext"]["requestId"] = request_id
        self.write(rel, ev, stable=False)

    def record_mcp(self) -> None:
        """API Gateway HTTP API (v2) events for McpFunction: the JSON-RPC exchanges of an MCP
        client (the headers the TypeScript SDK's streamable HTTP transport sends)."""
        headers = {
            "host": "abc123.execute-api.us-east-1.amazonaws.com",
            "user-agent": "node",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2025-11-25",
        }
        client = {"name": "agentic-search-node-check", "version": "1.0.0"}
        exchanges = {
            "post_initialize.json": (
                "initialize",
                {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client},
            ),
            "post_tools_list.json": ("tools/list", {}),
            "post_tools_call_search.json": (
                "tools/call",
                {"name": "search", "arguments": {"query": QUERY, "limit": LIMIT}},
            ),
            "post_tools_call_unknown_domain.json": (
                "tools/call",
                {"name": "search", "arguments": {"query": QUERY, "domain": "recipes"}},
            ),
        }
        for n, (rel, (method, params)) in enumerate(exchanges.items(), start=1):
            message = {"jsonrpc": "2.0", "id": n, "method": method, "params": params}
            own = {k: v for k, v in headers.items() if method != "initialize" or k[:3] != "mcp"}
            self.api_event(f"mcp_api/{rel}", "POST", "/mcp", message, headers=own)

    def record_api(self) -> None:
        """API Gateway HTTP API (v2) events for SearchApiFunction."""

        def event(rel: str, *args: Any, **kwargs: Any) -> None:
            self.api_event(f"search_api/{rel}", *args, **kwargs)

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
        # A JWT-authorized search of an access-controlled domain (docs/guides/access-control.md):
        # a token with the caller's groups, and one without the claims (public records only).
        acl = {"query": "code editor", "limit": LIMIT, "domain": "acltools"}
        jwt = {"iss": "https://issuer.example.com/", "aud": "agentic-search", "exp": "1767229200"}
        event(
            "post_search_jwt_groups.json",
            "POST",
            "/search",
            acl,
            claims={**jwt, "sub": "u-alice", "groups": "[eng ops]"},
            request_id="Xq3vLhAAoAMEYJ1=",
        )
        event(
            "post_search_jwt_no_claims.json",
            "POST",
            "/search",
            acl,
            claims=jwt,
            request_id="Xq3vLhAAoAMEYJ2=",
        )
        # A SigV4-signed search (AuthMode=IAM): a session of a role whose tags name its groups.
        event(
            "post_search_iam_role.json",
            "POST",
            "/search",
            acl,
            iam_arn="arn:aws:sts::123456789012:assumed-role/search-readers/alice",
            request_id="Xq3vLhAAoAMEYJ3=",
        )


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
            rec = Recorder(engine.deps.derive(cache=cache), args.out)
            rec.record_one_round_flow()
            rec.record_two_round_flow()
            rec.record_api()
            rec.record_mcp()
            cache.close()
        finally:
            engine.close()
    for path in rec.written:
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
