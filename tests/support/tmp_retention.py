"""What the temp folder keeps after a run: only the folders of the tests that failed.

pytest's ``tmp_path_retention_policy = "failed"`` removes a passed test's ``tmp_path`` at
once, but the folders that session- and module-scoped fixtures make with
``tmp_path_factory.mktemp`` (indexed homes, copies of them, datasets) stay whenever one test
of the run failed: the whole base folder is removed only after a run without failures, and an
xdist worker's, whose base folder the controller names, never. :func:`session_folders_removed`
(autouse, session scope, set up first and so torn down last: after every other fixture) then
removes from this process's base folder all but the ``tmp_path`` of each test whose call failed.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

#: The ``tmp_path`` of each test whose call failed in this process.
FAILED_TMP_PATHS = pytest.StashKey[list[Path]]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator:
    """Note the ``tmp_path`` of a test whose call failed (pytest keeps it: so do we)."""
    report = yield
    path = getattr(item, "funcargs", {}).get("tmp_path")
    if report.when == "call" and report.failed and path is not None:
        item.config.stash.setdefault(FAILED_TMP_PATHS, []).append(Path(path))
    return report


@pytest.fixture(scope="session", autouse=True)
def session_folders_removed(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """At the end of the session, remove every folder of this process's base temp folder
    but the failed tests' (with the retention policy "failed"; "all" and "none" are left
    to pytest)."""
    yield
    if request.config.getini("tmp_path_retention_policy") != "failed":
        return
    base = tmp_path_factory.getbasetemp()
    kept = [p.resolve() for p in request.config.stash.get(FAILED_TMP_PATHS, [])]
    for child in base.iterdir():
        path = child.resolve()
        if any(path == k or path in k.parents for k in kept):
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
