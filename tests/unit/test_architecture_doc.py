"""ARCHITECTURE.md tells the truth about the code, and the repository cites only itself.

GIVEN ARCHITECTURE.md WHEN every ``module:qualname`` it names is imported and looked up THEN
each exists (a rename that forgets the page fails here). GIVEN the repository's text files WHEN
searched THEN none cites the design notes that lived outside it (a clone has no ``../shared``).
"""

from __future__ import annotations

import importlib
import re
import subprocess

import pytest
from support.paths import REPO

DOC = REPO / "ARCHITECTURE.md"
NAMED = re.compile(r"`(agentic_search(?:_lambda|_cli)?(?:\.\w+)*):([\w.]+)`")


def _named() -> list[tuple[str, str]]:
    return sorted(set(NAMED.findall(DOC.read_text(encoding="utf-8"))))


def test_the_walks_name_functions() -> None:
    """GIVEN the three walks WHEN their hops are counted THEN there are enough to be walks."""
    text = DOC.read_text(encoding="utf-8")
    for walk in ("### 1.", "### 2.", "### 3."):
        assert walk in text
    assert len(_named()) >= 25


@pytest.mark.parametrize(("module", "qualname"), _named(), ids=lambda v: v)
def test_every_named_function_exists(module: str, qualname: str) -> None:
    """GIVEN a hop ``module:qualname`` WHEN imported THEN the attribute path resolves."""
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    assert callable(obj)


def test_no_file_cites_what_a_clone_does_not_have() -> None:
    """GIVEN the tracked files WHEN searched for the outside design notes THEN none cites them."""
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    pattern = re.compile(r"seeds/[\w-]+\.md|\bDESIGN\.md\b|\.\./shared/seeds")
    citing = []
    for name in tracked:
        path = REPO / name
        if path.suffix not in {".py", ".md", ".yaml", ".yml", ".json", ".toml", ".txt", ""}:
            continue
        if path == REPO / "tests" / "unit" / "test_architecture_doc.py" or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        citing += [f"{name}: {m.group(0)}" for m in pattern.finditer(text)]
    assert not citing, citing
