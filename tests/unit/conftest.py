"""The unit tier is pure: no model, no index, no AWS. Asking for a fixture that loads them
fails the test with where it belongs instead (tests/component, tests/aws or tests/e2e)."""

from __future__ import annotations

import pytest

REFUSED = ("session_home", "embedder", "tools_engine", "counting", "sync_engine", "aws", "wired")


def _refuse(name: str):
    @pytest.fixture(name=name)
    def refused():
        pytest.fail(
            f"a unit test may not use the {name!r} fixture (it loads the model, an index or "
            "AWS fakes): move the test to tests/component, tests/aws or tests/e2e"
        )

    return refused


for _name in REFUSED:
    globals()[f"_refused_{_name}"] = _refuse(_name)
