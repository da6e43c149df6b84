"""The search page's browser tests skip without Chromium outside CI and fail without it in CI.

GIVEN a machine without Chromium or its driver WHEN the page's tests start THEN outside CI they
are skipped with one line saying how to enable them, and with ``CI=true`` they fail naming the
same install (CI cannot skip them); GIVEN both on PATH THEN their paths are used.
"""

from __future__ import annotations

import shutil

import pytest
from support.browser import browser_paths, require

INSTALL = r"apt-get update && apt-get install -y chromium chromium-driver"


def test_a_missing_browser_skips_naming_the_install(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=INSTALL):
        browser_paths()


@pytest.mark.parametrize("ci", ["true", "1", "TRUE"])
def test_a_missing_browser_fails_in_ci(monkeypatch, ci):
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    monkeypatch.setenv("CI", ci)
    paths = browser_paths()  # no module-level failure: the rest of the run goes on
    with pytest.raises(pytest.fail.Exception, match=INSTALL):
        require(paths)


def test_a_present_browser_is_used(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setenv("CI", "true")
    assert require(browser_paths()) == ("/usr/bin/chromium", "/usr/bin/chromedriver")
