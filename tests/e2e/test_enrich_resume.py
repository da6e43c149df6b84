"""A SIGKILL during ``ingest --enrich`` loses no LLM answer: the next run asks only for the
records that had none. The LLM is recorded at the provider edge (tests/support/fake_llm.py, an
OpenAI-compatible server on loopback that logs each request before answering), the ingest is
the real CLI in a subprocess, killed once several answers are in.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from agentic_search.config import Settings
from agentic_search.logic.enrichment import CATALOG_PROMPT, enrichment_key, record_prompt_text
from agentic_search.sync.files import bundled_catalog_path, read_catalog
from agentic_search.wiring import domain_schema
from tests.support.fake_llm import FakeLLM

N = 14
MODEL = "fake-enricher"


def _env(home: Path, fake: FakeLLM) -> dict[str, str]:
    return {
        **os.environ,
        "AGENTIC_SEARCH_HOME": str(home),
        "OPENAI_BASE_URL": fake.base_url,
        "OPENAI_API_KEY": "test",
        "ENRICH_MODEL": MODEL,
        "ENRICH_SHIPPED": "false",
        "LLM_MAX_RETRIES": "0",
        "CACHE_BACKEND": "none",
    }


def _answered(home: Path) -> set[str]:
    """The cache keys kept in the enrichment store."""
    db = home / "enrichment.sqlite"
    if not db.is_file():
        return set()
    with sqlite3.connect(db) as conn:
        return {k for (k,) in conn.execute("SELECT key FROM answers")}


def test_a_killed_enriched_ingest_resumes_without_asking_again(tmp_path):
    lines = bundled_catalog_path().read_text().splitlines()[:N]
    path = tmp_path / "part.jsonl"
    path.write_text("\n".join(lines) + "\n")
    schema = domain_schema(Settings(), "tools")
    records = read_catalog(path, schema).records
    key_of = {
        r["name"]: enrichment_key(record_prompt_text(schema, r), MODEL, CATALOG_PROMPT.version)
        for r in records
    }
    home = tmp_path / "home"
    fake = FakeLLM(tmp_path / "asked.jsonl", delay_s=0.4).start()
    cmd = [sys.executable, "-m", "agentic_search_cli.main", "ingest", str(path)]
    cmd += ["--enrich", "openai", "--no-optimize"]
    try:
        proc = subprocess.Popen(
            cmd, env=_env(home, fake), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 240
        while len(fake.asked()) < 5 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the ingest ended before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        first = fake.asked()
        finished = {name for name, key in key_of.items() if key in _answered(home)}
        assert 4 <= len(finished) < N  # killed mid-enrichment, answers kept
        done = subprocess.run(
            cmd, env=_env(home, fake), capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stderr[-2000:]
        again = fake.asked()[len(first) :]
    finally:
        fake.stop()
    # the second run asked for every record without an answer, and for none that had one
    assert not finished & set(again)
    assert set(again) | finished == set(key_of)
    assert len(again) == len(set(again))
    # and every record is indexed with its enrichment
    audit = subprocess.run(
        [sys.executable, "-c", _AUDIT, str(home)],
        env=_env(home, fake),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert audit.returncode == 0, audit.stderr[-2000:]
    counts = json.loads(audit.stdout)
    assert counts == {"points": N, "enriched": N}


_AUDIT = """
import json, sys
from pathlib import Path
from agentic_search.config import Settings
from agentic_search.wiring import build_dependencies
c = build_dependencies(Settings(agentic_search_home=Path(sys.argv[1])), "tools")
payloads = list(c.store.scroll(c.schema, payload=["id", "_enrichment"]))
print(json.dumps({"points": len(payloads), "enriched": sum("_enrichment" in p for p in payloads)}))
"""
