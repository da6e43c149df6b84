"""The redrive asks again for records whose enrichment failed (the deployed sync sees a record
only when it changes): through the real ingest, the Edge store, MiniLM and the sync status,
with the LLM at the provider edge recorded (tests/support/fake_llm.py), and a fixed clock.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_search.service import SearchService
from agentic_search.sync.apply import apply_changes
from agentic_search.sync.changes import CatalogChange, ChangeOp
from agentic_search.sync.enrich_redrive import (
    parked_enrichment,
    redrive_enrichment,
    unpark_enrichment,
)
from agentic_search.sync.files import bundled_catalog_path, read_catalog
from agentic_search.sync.redrive import MAX_ATTEMPTS, backoff_minutes
from agentic_search.wire import ENTITY_KEY, INTERNAL_KEYS
from agentic_search.wire.records import NEEDS_KEY
from tests.support.fake_llm import FakeLLM, enrich_settings

N = 8
T0 = 1_900_000_000.0


@pytest.fixture
def records() -> list[dict]:
    lines = bundled_catalog_path().read_text().splitlines()
    return [json.loads(ln) for ln in lines[:N]]


@pytest.fixture
def catalog(tmp_path: Path, records: list[dict]) -> Path:
    path = tmp_path / "part.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _engine(home: Path, fake: FakeLLM, embedder, enrich: str = "openai") -> SearchService:
    return SearchService.create(enrich_settings(home, fake, enrich), "tools", embedder=embedder)


def _payload(engine: SearchService, rid: str) -> dict:
    return engine.deps.store.retrieve_records(engine.schema, [rid])[rid].payload or {}


@pytest.fixture
def failed_once(tmp_path, embedder, catalog, records):
    """An index of N records whose 6th record's enrichment failed at ingest (still failing)."""
    fake = FakeLLM(tmp_path / "asked.jsonl", fail={records[5]["name"]}).start()
    engine = _engine(tmp_path / "home", fake, embedder)
    report = engine.ingest_file(catalog)
    assert list(report.stats.enrichment.failed) == [records[5]["id"]]
    yield engine, fake, records[5]
    engine.close()
    fake.stop()


def test_a_failed_enrichment_is_asked_again_with_backoff_and_written_when_answered(
    failed_once, catalog
):
    engine, fake, rec = failed_once
    deps, status = engine.deps, engine.deps.sync_status
    before = len(fake.asked())
    # still failing: asked once, rescheduled after the first backoff, record left as it was
    out = redrive_enrichment(deps, status, clock=lambda: T0)
    assert (out.attempted, out.enriched, out.rescheduled, out.parked) == (1, 0, 1, 0)
    assert fake.asked()[before:] == [rec["name"]]
    assert NEEDS_KEY not in _payload(engine, rec["id"])
    # not due again before its backoff has passed
    assert redrive_enrichment(deps, status, clock=lambda: T0 + 30).attempted == 0
    assert len(fake.asked()) == before + 1
    # answered: the enrichment is written beside the unchanged fields, nothing else is asked
    fake.fail.clear()
    out = redrive_enrichment(deps, status, clock=lambda: T0 + 60 * backoff_minutes(1))
    assert (out.attempted, out.enriched, out.rescheduled) == (1, 1, 0)
    assert fake.asked()[before:] == [rec["name"], rec["name"]]
    p = _payload(engine, rec["id"])
    assert p.get(NEEDS_KEY)
    validated = {r["id"]: r for r in read_catalog(catalog, engine.schema).records}
    own = {k: v for k, v in p.items() if k not in INTERNAL_KEYS | {ENTITY_KEY}}
    assert own == validated[rec["id"]]
    assert deps.enrichment_store.failures("tools") == {}
    assert status.get("tools", [rec["id"]])[rec["id"]].status == "synced"
    # and the index reads as the file says: a re-ingest finds every record unchanged
    report = engine.ingest_file(catalog)
    assert report.stats.unchanged == N and not report.stats.enrichment.failed
    # nothing left to do
    assert redrive_enrichment(deps, status, clock=lambda: T0 + 10_000).attempted == 0


def test_a_record_that_keeps_failing_is_parked_until_unparked(failed_once):
    engine, fake, rec = failed_once
    deps, status = engine.deps, engine.deps.sync_status
    now = T0
    for attempt in range(1, MAX_ATTEMPTS + 1):
        out = redrive_enrichment(deps, status, clock=lambda t=now: t)
        assert out.attempted == 1 and out.errors.keys() == {rec["id"]}
        assert out.parked == (1 if attempt == MAX_ATTEMPTS else 0)
        now += 60 * backoff_minutes(attempt)
    assert parked_enrichment(deps) == [rec["id"]]
    asked = len(fake.asked())
    assert redrive_enrichment(deps, status, clock=lambda: now + 86_400).attempted == 0
    assert len(fake.asked()) == asked
    # still listed as failed (ingest --enrich --status shows it), asked again once unparked
    assert rec["id"] in deps.enrichment_store.failures("tools")
    assert unpark_enrichment(deps) == [rec["id"]]
    fake.fail.clear()
    out = redrive_enrichment(deps, status, clock=lambda: now + 86_400)
    assert out.enriched == 1 and parked_enrichment(deps) == []


def test_a_change_written_during_the_call_wins_over_the_older_image(failed_once):
    engine, fake, rec = failed_once
    deps, status = engine.deps, engine.deps.sync_status
    newer = {**rec, "description": rec["description"] + " Now with offline mode."}
    change = CatalogChange(op=ChangeOp.MODIFY, domain="tools", record_id=rec["id"], record=newer)

    def write_meanwhile(name: str) -> None:
        if name == rec["name"] and fake.on_ask is not None:
            fake.on_ask = None
            apply_changes(deps, [change], status, enrich=False)

    fake.fail.clear()
    fake.on_ask = write_meanwhile
    out = redrive_enrichment(deps, status, clock=lambda: T0)
    assert out.enriched == 0 and "changed during the call" in out.skipped[rec["id"]]
    assert _payload(engine, rec["id"])["description"] == newer["description"]
    # the newer image, written without an enrichment, stays listed and the next pass
    # enriches it (not the older one)
    assert rec["id"] in deps.enrichment_store.failures("tools")
    out = redrive_enrichment(deps, status, clock=lambda: T0)
    assert out.enriched == 1
    p = _payload(engine, rec["id"])
    assert p["description"] == newer["description"] and p.get(NEEDS_KEY)


def test_a_record_with_a_pending_change_is_left_to_that_change(failed_once):
    engine, fake, rec = failed_once
    deps, status = engine.deps, engine.deps.sync_status
    [entry] = status.get("tools", [rec["id"]]).values()
    status.put([entry.model_copy(update={"status": "pending"})])
    before = len(fake.asked())
    out = redrive_enrichment(deps, status, clock=lambda: T0)
    assert out.attempted == 0 and "pending change" in out.skipped[rec["id"]]
    assert len(fake.asked()) == before


def test_without_an_enricher_nothing_is_asked_and_the_failure_stays_listed(
    tmp_path, failed_once, embedder
):
    engine, fake, rec = failed_once
    engine.close()
    off = _engine(tmp_path / "home", fake, embedder, enrich="off")
    try:
        before = len(fake.asked())
        out = redrive_enrichment(off.deps, off.deps.sync_status, clock=lambda: T0)
        assert out.attempted == 0 and len(fake.asked()) == before
        assert rec["id"] in off.deps.enrichment_store.failures("tools")
    finally:
        off.close()


def test_sync_redrive_on_the_command_line_asks_again_and_says_so(failed_once, monkeypatch, capsys):
    from agentic_search_cli import main as cli
    from agentic_search_cli import sync_cmd

    engine, fake, rec = failed_once
    monkeypatch.setattr(sync_cmd, "open_service", lambda domain: engine)
    monkeypatch.setattr(engine, "close", lambda: None)  # the fixture closes it
    fake.fail.clear()
    assert cli.main(["sync", "--redrive"]) == 0
    out = capsys.readouterr().out
    assert "enrichment asked again: 1 record(s), 1 enriched, 0 rescheduled, 0 parked" in out
    assert _payload(engine, rec["id"]).get(NEEDS_KEY)


def test_the_index_says_what_is_unenriched_when_the_failure_list_is_another_containers(
    failed_once,
):
    # a deployed redrive runs in a container of its own: the sync's failure list is not in
    # its enrichment store, the index still shows the record without an enrichment
    engine, fake, rec = failed_once
    deps = engine.deps
    deps.enrichment_store.set_failures("tools", {})
    fake.fail.clear()
    before = len(fake.asked())
    out = redrive_enrichment(deps, deps.sync_status, clock=lambda: T0)
    assert (out.attempted, out.enriched) == (1, 1)
    assert fake.asked()[before:] == [rec["name"]]
    assert _payload(engine, rec["id"]).get(NEEDS_KEY)
