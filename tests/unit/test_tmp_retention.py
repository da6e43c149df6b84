"""The README's promise: a run keeps in the temp folder only the folders of the tests that
failed (issue 47 item 12: ~225 MB of session folders were left after a run with a failure).
An inner pytest session with this suite's retention hooks (tests/support/tmp_retention.py)
and a session-, a module-scoped fixture folder, a passing and a failing test."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

INNER = """
import pytest

@pytest.fixture(scope="session")
def session_folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("session-folder")
    (path / "index").write_bytes(b"x" * 1024)
    return path

@pytest.fixture(scope="module")
def module_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("module-folder")

def test_passes(session_folder, module_folder, tmp_path):
    (tmp_path / "scratch").write_text("passed")

def test_fails(session_folder, tmp_path):
    (tmp_path / "evidence").write_text("what the failure left")
    assert False
"""


def test_a_run_with_a_failure_keeps_only_the_failed_tests_folder(pytester: pytest.Pytester):
    pytester.makeini("[pytest]\ntmp_path_retention_policy = failed\ntmp_path_retention_count = 1\n")
    pytester.makeconftest(
        "from support.tmp_retention import pytest_runtest_makereport, session_folders_removed\n"
    )
    pytester.makepyfile(test_inner=INNER)
    base = pytester.path / "basetemp"
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", f"--basetemp={base}")
    result.assert_outcomes(passed=1, failed=1)
    left = sorted(p.name for p in base.iterdir() if not p.is_symlink())  # (pytest's "current")
    assert left == ["test_fails0"]
    assert (base / "test_fails0" / "evidence").read_text() == "what the failure left"
