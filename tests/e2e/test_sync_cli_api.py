"""`agentic-search sync` and the /sync/* routes of the HTTP API.

GIVEN events/sync files, WHEN `agentic-search sync FILE` runs, THEN valid changes are applied,
the bad record is named by position and id on stderr and counted in the summary (exit 0, as
ingest's; 1 with --strict or when a change failed), and a replay embeds
nothing. GIVEN sync status entries, WHEN the /sync/* routes are called through the API
handler (API Gateway v2 events), THEN they answer status counts, failed and pending lists, one
record's per-aspect entry, and re-queue parked failures.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from support import lambdas
from support.aws import FakeContext
from support.lambdas import runtime_over, use_runtime
from support.paths import EVENTS as ALL_EVENTS

from agentic_search.adapters.sync_status import SqliteSyncStatus
from agentic_search.logic.schema import load_schema
from agentic_search.logic.text import aspect_text
from agentic_search.sync.apply import apply_changes
from agentic_search.sync.changes import CatalogChange, ChangeOp
from agentic_search.sync.indexer import Indexer
from agentic_search_cli import main as cli
from agentic_search_cli import sync_cmd

EVENTS = ALL_EVENTS / "sync"
HEALTH = ALL_EVENTS / "search_api" / "get_health.json"


@pytest.fixture()
def cli_engine(sync_engine, monkeypatch):
    monkeypatch.setattr(sync_cmd, "open_service", lambda domain: sync_engine)
    monkeypatch.setattr(sync_engine, "close", lambda: None)  # the fixture closes it
    return sync_engine


def test_sync_applies_the_valid_changes_and_names_the_bad_record(cli_engine, counting, capsys):
    # the example of `sync --help`, whose item 4 is malformed on purpose (issue 47 item 12):
    # a reported rejection, not a failed run
    rc = cli.main(["sync", str(EVENTS / "stream_mixed_batch.json")])
    captured = capsys.readouterr()
    assert rc == 0
    assert "rejected: item 4 (id 'syncdemo-notes')" in captured.err
    assert "description: Field required" in captured.err
    assert "1 applied, 2 superseded" in captured.out
    assert "; 1 record(s) rejected (listed on stderr)" in captured.out
    point = cli_engine.deps.store.retrieve_records(cli_engine.schema, ["syncdemo-notes"])
    schema, stored = cli_engine.schema, point["syncdemo-notes"].payload
    # the newest valid change, once: one text for each aspect the record has words for
    assert counting.texts == sum(1 for a in schema.aspects if aspect_text(schema, a.name, stored))
    assert counting.texts >= 4
    assert point["syncdemo-notes"].payload["features"][-1] == "searchable meeting archive"
    counting.texts = 0
    assert cli.main(["sync", str(EVENTS / "stream_modify_aspect.json"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["changes"]["outcomes"] == {"duplicate": 1}
    assert counting.texts == 0


def test_a_change_that_fails_to_write_exits_1_and_stays_pending(cli_engine, monkeypatch, capsys):
    # GIVEN a store that fails every write WHEN a valid change is synced
    monkeypatch.setattr(Indexer, "upsert", _raise)
    rc = cli.main(["sync", str(EVENTS / "stream_insert.json")])
    captured = capsys.readouterr()
    # THEN the run fails (the change is pending, not applied), naming it
    assert rc == 1
    assert "error: item 1" in captured.err and "Qdrant timeout" in captured.err
    assert "rejected" not in captured.out


def test_sync_reads_json_lines_and_reports_the_bad_line(cli_engine, tmp_path: Path, capsys):
    event = load_event("eventbridge_modify.json")
    lines = [json.dumps(event), "{not json", json.dumps({**event, "detail": {"operation": "x"}})]
    path = tmp_path / "changes.jsonl"
    path.write_text("\n".join(lines) + "\n")
    rc = cli.main(["sync", str(path), "--json", "--strict"])
    captured = capsys.readouterr()
    assert rc == 1  # --strict: a rejected record fails the command
    assert "line 2" in captured.err and "malformed JSON" in captured.err
    assert "line 3" in captured.err and "unknown operation" in captured.err
    assert json.loads(captured.out)["changes"]["outcomes"] == {"applied": 1}


def test_sync_without_a_file_prints_the_status(cli_engine, capsys):
    assert cli.main(["sync", "--status"]) == 0
    assert "0 pending, 0 failed" in capsys.readouterr().out


def test_sync_status_counts_a_deleted_record_apart_from_the_synced(cli_engine, capsys):
    # GIVEN a record synced in, then removed (its entry stays, as a tombstone)
    assert cli.main(["sync", str(EVENTS / "stream_insert.json")]) == 0
    assert cli.main(["sync", str(EVENTS / "stream_remove.json")]) == 0
    capsys.readouterr()
    # WHEN the status is asked for THEN the tombstone is not counted as synced (issue 25 #14)
    assert cli.main(["sync", "--status"]) == 0
    out = capsys.readouterr().out
    assert "sync status of 'tools': 0 synced, 0 pending, 0 failed, 1 deleted" in out


# ----- the /sync/* routes ----------------------------------------------------------------------


def http_event(method: str, path: str, query: str = "") -> dict:
    event = copy.deepcopy(json.loads(HEALTH.read_text()))
    event["routeKey"] = event["requestContext"]["routeKey"] = f"{method} {path}"
    event["rawPath"] = event["requestContext"]["http"]["path"] = path
    event["requestContext"]["http"]["method"] = method
    event["rawQueryString"] = query
    if query:
        event["queryStringParameters"] = dict(p.split("=") for p in query.split("&"))
    return event


@pytest.fixture()
def api(sync_engine, tmp_path: Path, monkeypatch):
    """The API handler with a SQLite status store holding one synced and one failed record."""
    from agentic_search_lambda import api as api_module

    status = SqliteSyncStatus(tmp_path / "sync.sqlite")
    record = copy.deepcopy(next(iter(sync_engine.deps.store.scroll(sync_engine.schema))))
    record.pop("_hashes", None)
    good = CatalogChange(op=ChangeOp.MODIFY, record_id=record["id"], version=5, record=record)
    apply_changes(sync_engine.deps, [good], status)
    broken = CatalogChange(op=ChangeOp.REMOVE, record_id="ghost", version=9)
    monkeypatch.setattr(Indexer, "delete", _raise)
    apply_changes(sync_engine.deps, [broken], status)
    entry = status.get("tools", ["ghost"])["ghost"]
    entry.status, entry.retry_count = "failed", 5
    status.put([entry])
    with use_runtime(runtime_over(sync_engine, sync_status=status)):
        yield lambda m, p, q="": _call(api_module, m, p, q), record["id"]


def _raise(*args, **kwargs):
    raise RuntimeError("Qdrant timeout")


def _call(api_module, method: str, path: str, query: str) -> tuple[int, dict]:
    out = api_module.handler(http_event(method, path, query), FakeContext())
    return out["statusCode"], json.loads(out["body"])


def test_sync_status_counts_every_status(api):
    call, _ = api
    code, body = call("GET", "/sync/status")
    assert code == 200
    assert body == {
        "domain": "tools",
        "counts": {"synced": 1, "pending": 0, "failed": 1, "deleted": 0},
        "healthy": False,
    }


def test_failed_pending_and_one_tool(api):
    call, rid = api
    code, body = call("GET", "/sync/failed", "limit=10")
    assert code == 200
    [entry] = body["entries"]
    assert entry["recordId"] == "ghost" and "Qdrant timeout" in entry["lastError"]
    assert entry["retryCount"] == 5
    assert call("GET", "/sync/pending")[1]["entries"] == []
    code, body = call("GET", f"/sync/tool/{rid}")
    assert code == 200 and body["status"] == "synced" and body["appliedVersion"] == 5
    # every aspect the domain declares (an empty one, such as needs without enrichment, too)
    assert set(body["aspects"]) == {a.name for a in load_schema("tools").aspects}
    assert {"identity", "functionality", "usecases", "interface"} <= set(body["aspects"])
    assert all(a["contentHash"] and a["status"] == "synced" for a in body["aspects"].values())
    assert call("GET", "/sync/tool/nope")[0] == 404
    assert call("GET", "/sync/failed", "limit=0")[0] == 422


def test_retry_re_queues_a_parked_failure(api):
    call, _ = api
    assert call("POST", "/sync/retry/nope")[0] == 404
    code, body = call("POST", "/sync/retry/ghost")
    assert code == 202 and body == {"queued": ["ghost"]}
    [entry] = call("GET", "/sync/pending")[1]["entries"]
    assert entry["retryCount"] == 0 and entry["nextAttemptAt"] is not None
    assert call("POST", "/sync/retry-all")[1] == {"queued": [], "skipped": {}}  # none parked


def test_record_ids_in_the_path_are_percent_decoded(api, sync_engine):
    # GIVEN a record whose id has a space and a slash-free escape (a record sync marked synced)
    call, _ = api
    from agentic_search_lambda.runtime import runtime

    status = runtime().sync_status
    entry = status.get("tools", ["ghost"])["ghost"].model_copy(update={"record_id": "Sync H Space"})
    status.put([entry])
    # WHEN it is asked for percent-encoded THEN it is found, and retried, by its decoded id
    code, body = call("GET", "/sync/tool/Sync%20H%20Space")
    assert code == 200 and body["recordId"] == "Sync H Space"
    code, body = call("POST", "/sync/retry/Sync%20H%20Space")
    assert code == 202 and body == {"queued": ["Sync H Space"]}


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/sync/status"),
        ("GET", "/sync/failed"),
        ("GET", "/sync/pending"),
        ("GET", "/sync/tool/ghost"),
        ("POST", "/sync/retry/ghost"),
        ("POST", "/sync/retry-all"),
    ],
)
def test_an_unknown_domain_is_a_422_naming_the_field_on_every_route(api, method, path):
    call, _ = api
    code, body = call(method, path, "domain=zzz")
    assert code == 422
    assert [d["field"] for d in body["detail"]] == ["domain"]
    assert "unknown domain 'zzz'" in body["detail"][0]["message"]


def test_a_failure_with_nothing_to_re_apply_is_a_409_with_the_reason(api, cli_engine, capsys):
    # GIVEN a record whose change was refused (parked with no change to re-apply)
    call, _ = api
    from agentic_search.sync.redrive import park_rejected
    from agentic_search_lambda.runtime import runtime

    status = runtime().sync_status
    park_rejected(status, "tools", "sync-c", "rejected: price_monthly_usd: finite number")
    # WHEN it is listed as failed and retried THEN 409 says why, not 404
    failed = {e["recordId"] for e in call("GET", "/sync/failed")[1]["entries"]}
    assert "sync-c" in failed
    code, body = call("POST", "/sync/retry/sync-c")
    assert code == 409 and body["error"] == "NothingToRetry"
    assert "no change to re-apply" in body["message"] and "finite number" in body["message"]
    # AND retry-all re-queues the others and names it as skipped
    code, body = call("POST", "/sync/retry-all")
    assert code == 202 and "sync-c" in body["skipped"] and body["queued"] == ["ghost"]


def test_the_cli_says_why_a_parked_change_is_not_re_queued(cli_engine, capsys, tmp_path):
    from agentic_search.sync.redrive import park_rejected
    from agentic_search.wiring import build_sync_status

    status = build_sync_status(cli_engine.deps.settings)
    park_rejected(status, "tools", "sync-c", "rejected: id: String should match pattern")
    assert cli.main(["sync", "--retry-failed"]) == 0
    out = capsys.readouterr().out
    assert "re-queued 0 parked change(s); 1 not re-queued:" in out
    assert "sync-c: no change to re-apply (rejected: id: String should match pattern)" in out


def test_the_openapi_document_lists_every_status_a_sync_route_answers():
    # what the fuzzing of the published document checks: no undocumented status
    from agentic_search_lambda.api import openapi_document

    paths = json.loads(openapi_document())["paths"]
    documented = {
        (m.upper(), p): set(op["responses"]) for p, ops in paths.items() for m, op in ops.items()
    }
    assert documented[("GET", "/sync/status")] >= {"200", "422"}
    assert documented[("GET", "/sync/tool/{id}")] >= {"200", "404", "422"}
    assert documented[("POST", "/sync/retry/{id}")] >= {"202", "404", "409", "422"}
    assert documented[("POST", "/sync/retry-all")] >= {"202", "422"}


def load_event(name: str) -> dict:
    """A fresh copy of ``events/sync/<name>``."""
    return lambdas.load_event(f"sync/{name}")
