"""Crash consistency (issue 19): ingest and sync killed with SIGKILL mid-write, then re-run,
leave the store, the keyword index, the sync status and the journal equal to the catalog.

The harness is benchmarks/reliability/crash.py (its ``--runs 100`` figures are in
benchmarks/reliability/); here it runs 4 trials whose kills land after the first journaled
write (so each exercises the completion of an interrupted write).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _harness():
    spec = importlib.util.spec_from_file_location(
        "crash_harness", REPO / "benchmarks" / "reliability" / "crash.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_sigkill_mid_write_then_rerun_leaves_the_index_equal_to_the_catalog(tmp_path):
    crash = _harness()
    trials = crash.run_trials(4, tmp_path, seed=11, after_write_starts=True)
    assert [t.kind for t in trials] == ["ingest", "sync", "ingest", "sync"]
    for t in trials:
        assert t.rerun_code == 0, t
        assert t.consistent, t.audit
    # the kills landed mid-command: a journaled write was cut short in most trials
    assert sum(t.journaled_at_kill for t in trials) >= 2
    assert not all(t.exited_before_kill for t in trials)


def test_the_audit_sees_a_store_that_does_not_equal_the_catalog(tmp_path):
    # the check above can fail: a folder missing records, or holding an extra one, is caught
    crash = _harness()
    records = crash.catalog()
    home = tmp_path / "home"
    path = tmp_path / "part.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records[:30]))
    assert crash.cli(home, "ingest", str(path)).returncode == 0
    result = crash.audit_home(home, records[:29] + records[31:])
    assert not result["consistent"]
    assert result["missing"] == sorted(r["id"] for r in records[31:])
    assert result["extra"] == [records[29]["id"]]
