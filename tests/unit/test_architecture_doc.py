"""ARCHITECTURE.md and the documentation site tell the truth about the code, and the
repository cites only itself.

GIVEN ARCHITECTURE.md and every page under docs/ WHEN every ``module:qualname`` they name is
imported and looked up THEN each exists, and every repository path they name in backticks
exists (a rename that forgets a page fails here). GIVEN the site WHEN its pages and nav are
read THEN its architecture page is ARCHITECTURE.md and every page is in the nav. GIVEN the
repository's text files WHEN searched THEN none cites the design notes that lived outside it (a
clone has no ``../shared``).
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import subprocess

import pytest
import yaml
from support.paths import REPO

DOC = REPO / "ARCHITECTURE.md"
DOCS = REPO / "docs"
PAGES = [DOC, REPO / "README.md", *sorted(DOCS.rglob("*.md"))]
NAMED = re.compile(r"`(agentic_search(?:_lambda|_cli)?(?:\.\w+)*):([\w.]+)`")
#: A repository path in backticks: a top-level folder of the repository, then a file or folder.
REPO_PATH = re.compile(
    r"`((?:layers|tests|benchmarks|scripts|functions|cli|statemachine|events|docs)/[\w./-]+)`"
)


def _named() -> list[tuple[str, str]]:
    found = set()
    for page in (DOC, *sorted(DOCS.rglob("*.md"))):
        found |= set(NAMED.findall(page.read_text(encoding="utf-8")))
    return sorted(found)


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


def test_every_repository_path_the_pages_name_exists() -> None:
    """GIVEN the README, ARCHITECTURE.md and docs/ WHEN each backticked repository path is
    looked up THEN it exists (``path::test`` names a test in a file that exists)."""
    missing = [
        f"{page.relative_to(REPO)}: {path}"
        for page in PAGES
        for path in REPO_PATH.findall(page.read_text(encoding="utf-8"))
        if not (REPO / path.split("::")[0].rstrip(".")).exists()
    ]
    assert not missing, missing


def _nav_pages(entries: list) -> list[str]:
    pages: list[str] = []
    for entry in entries:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_the_site_shows_architecture_md_and_every_page() -> None:
    """GIVEN mkdocs.yml and docs/ WHEN the nav is read THEN every Markdown page under docs/ is in
    it, every entry is a page or one the build generates, and the generated architecture page
    is ARCHITECTURE.md itself (one copy)."""
    spec = importlib.util.spec_from_file_location("docs_hooks", REPO / "scripts" / "docs_hooks.py")
    assert spec and spec.loader
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    nav = _nav_pages(yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))["nav"])
    written = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    generated = {p for p in hooks.PAGES if p.endswith(".md")} | {"reference/http-api.md"}
    assert written - set(nav) == set(), f"pages missing from mkdocs.yml's nav: {written - set(nav)}"
    assert set(nav) - written - generated == set()
    assert not written & generated, "a generated page is also written by hand"
    assert "explanation/architecture.md" in nav
    assert hooks.architecture_page() == DOC.read_text(encoding="utf-8")


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
