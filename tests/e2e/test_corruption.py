"""Corruption is a clear error, isolated (finding 4): every file of the local-mode store
(``VECTOR_STORE=local``, pinned here: its per-collection folders are what this checks),
truncated or zeroed in turn, gives one-line errors; the other domain is unaffected; ``serve``
starts and reports it in ``/health``; ``ingest --rebuild`` restores the answers."""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import run_cli
from support.homes import copy_home
from support.http import start_serve, wait_serving

from agentic_search.config import Settings
from agentic_search.ports import KeywordIndexError, SyncStatusError, VectorStoreError
from agentic_search.service import SearchService
from agentic_search.wire.errors import SearchFailed

DOCS = [
    {"_id": f"d{i}", "title": f"Field note {i}", "text": f"Glaciers retreat {i}: ice sheets melt."}
    for i in range(12)
]


@pytest.fixture(scope="module", autouse=True)
def _local_mode() -> Iterator[None]:
    """Every store of this module, the CLI and serve included, is local mode."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VECTOR_STORE", "local")
        yield


@pytest.fixture(scope="module")
def base(_local_mode, embedder, tmp_path_factory) -> tuple[Path, Path]:
    """A folder with both domains indexed (tools: the bundled catalog; documents: 12 notes)
    and a sync status, and the documents file."""
    root = tmp_path_factory.mktemp("corrupt")
    home = root / "home"
    docs = root / "docs.jsonl"
    docs.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    tools = SearchService.create(Settings(agentic_search_home=home), "tools", embedder=embedder)
    try:
        report = tools.ensure_bundled_catalog()
        assert report is not None and not report.errors
    finally:
        tools.close()
    shutil.rmtree(home / "journal", ignore_errors=True)
    service = SearchService.create(
        Settings(agentic_search_home=home), "documents", embedder=embedder
    )
    try:
        service.ingest_file(docs, id_key="_id")
    finally:
        service.close()
    return home, docs


def _files(home: Path) -> list[str]:
    return sorted(
        str(p.relative_to(home))
        for p in home.rglob("*")
        if p.is_file() and "models" not in p.parts and not p.name.endswith(".lock")
    )


def _damage(path: Path, mode: str) -> None:
    size = path.stat().st_size
    path.write_bytes(b"\0" * size if mode == "zero" else path.read_bytes()[: size // 2])


def _outcome(home: Path, domain: str, query: str, embedder) -> tuple[str, str]:
    """('ok', '') | ('partial', failed sources) | ('error', the one-line message)."""
    settings = Settings(agentic_search_home=home, cache_backend="none")
    service = SearchService.create(settings, domain, embedder=embedder)
    try:
        out = service.search(query, limit=3).output
    except (VectorStoreError, KeywordIndexError) as exc:
        return "error", str(exc)
    except SearchFailed as exc:  # the state machine's failure: its cause is the store's line
        assert exc.error == "VectorStoreError", exc
        return "error", exc.cause
    finally:
        service.close()
    failed = ",".join(sorted(e.source for e in out.errors))
    return ("partial", failed) if failed else ("ok", "")


def test_every_damaged_file_is_one_line_and_isolated(base, tmp_path, embedder):
    home, _ = base
    files = _files(home)
    assert any(f.endswith("storage.sqlite") for f in files) and "sync.sqlite" in files
    seen: dict[str, set[str]] = {}
    for mode in ("truncate", "zero"):
        for rel in files:
            copy = tmp_path / f"{mode}-{rel.replace('/', '_')}"
            copy_home(home, copy, skip=())
            _damage(copy / rel, mode)
            owner = next((d for d in ("tools", "documents") if f"/{d}/" in f"/{rel}"), None)
            for domain, query in (("tools", "vector database"), ("documents", "glaciers")):
                kind, detail = _outcome(copy, domain, query, embedder)
                seen.setdefault(rel, set()).add(kind)
                if owner != domain:  # another domain's file, or a shared one: unaffected
                    assert kind == "ok", (mode, rel, domain, detail)
                elif kind == "error":
                    assert "\n" not in detail and "--rebuild" in detail, (mode, rel, detail)
                    assert str(copy) in detail
                else:  # BM25 lives in the same collection: no source fails alone
                    raise AssertionError(("partial", mode, rel, detail))
            if rel == "sync.sqlite":
                from agentic_search.wiring import build_sync_status

                with pytest.raises(SyncStatusError) as err:
                    build_sync_status(Settings(agentic_search_home=copy)).counts("tools")
                assert "\n" not in str(err.value) and "--rebuild" in str(err.value)
            shutil.rmtree(copy)
    # every store file failed its own domain in some way (the check could fail)
    assert all(seen[f] != {"ok"} for f in files if f.startswith("qdrant/"))


def test_serve_starts_reports_the_damage_and_rebuild_restores_the_answers(base, tmp_path):
    home, docs = base
    copy = tmp_path / "home"
    copy_home(home, copy, skip=())
    before = _ids(run_cli(copy, "search", "glaciers", "--domain", "documents", "--json"))
    damaged = next(copy.rglob("documents/storage.sqlite"))
    _damage(damaged, "truncate")
    # GIVEN a damaged documents collection: serve starts, and /health names it
    proc = start_serve(copy)
    try:
        host, port = wait_serving(proc)
        url = f"http://{host}:{port}"
        with urllib.request.urlopen(f"{url}/health?deep=true", timeout=60) as r:
            health = json.loads(r.read())
        assert health["status"] == "degraded"
        assert health["domains"]["tools"] == "ok"
        assert health["domains"]["documents"].startswith("error: the 'documents' index at")
        req = urllib.request.Request(
            f"{url}/search", data=json.dumps({"query": "vector database"}).encode()
        )
        with urllib.request.urlopen(req, timeout=60) as r:
            assert json.loads(r.read())["candidates"]
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    # WHEN the repair command it names runs THEN the answers are those of before
    fixed = run_cli(copy, "ingest", str(docs), "--rebuild", "--domain", "documents")
    assert fixed.returncode == 0, fixed.stderr[-800:]
    after = _ids(run_cli(copy, "search", "glaciers", "--domain", "documents", "--json"))
    assert after == before and before


def _ids(proc: subprocess.CompletedProcess[str]) -> list[str]:
    assert proc.returncode == 0, proc.stderr[-800:]
    return [c["id"] for c in json.loads(proc.stdout)["candidates"]]
