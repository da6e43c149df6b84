"""The browser the search page's tests drive (tests/e2e/test_search_page.py): Debian's
``chromium`` and ``chromium-driver``. Missing, the page's tests are skipped as one module with
one line naming the install; where ``CI`` is set (``CI=true``, as CI services and ``.ci/run``
set it) each of its browser tests fails instead, so CI cannot skip them silently."""

from __future__ import annotations

import os
import shutil

import pytest

INSTALL = "apt-get update && apt-get install -y chromium chromium-driver"
REASON = f"the browser tests need Chromium and its driver: {INSTALL}"


def in_ci() -> bool:
    """Whether the environment says CI (``CI=true``, ``1`` or ``yes``)."""
    return os.environ.get("CI", "").strip().lower() in {"true", "1", "yes"}


def browser_paths() -> tuple[str, str] | None:
    """The chromium and chromedriver executables on PATH. Missing: the calling module is skipped
    (one line naming the install), or under CI ``None``, which :func:`require` fails on in each
    test (a collection error would stop the whole run, not only these tests)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if chromium and driver:
        return chromium, driver
    if not in_ci():
        pytest.skip(REASON, allow_module_level=True)
    return None


def require(paths: tuple[str, str] | None) -> tuple[str, str]:
    """``paths``, or a failure naming the install (CI without the browser)."""
    if paths is None:
        pytest.fail(f"{REASON} (CI is set: they must run)", pytrace=False)
    return paths
