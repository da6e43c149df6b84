"""Every benchmark script still runs: ``python SCRIPT --help`` imports the whole module (and
whatever it imports from the package) and answers its usage, exit 0. A script that imports a
name the package no longer has (``benchmarks/llm_paths.py`` imported ``SearchSteps`` long after
it was gone) or that reads its inputs at import time fails here, not on the day someone needs
the figure again."""

from __future__ import annotations

import subprocess
import sys

import pytest
from support.paths import REPO


def _is_script(path) -> bool:
    """A script parses its own arguments or hands its ``__main__`` to another script's parser
    (``npm_queries/build.py`` runs ``tools_queries/build.py``'s ``main``)."""
    text = path.read_text(encoding="utf-8")
    return "argparse" in text or 'if __name__ == "__main__":' in text


SCRIPTS = sorted(
    p for p in (REPO / "benchmarks").rglob("*.py") if p.name != "__init__.py" and _is_script(p)
)


def test_every_benchmark_script_is_covered() -> None:
    """GIVEN benchmarks/ WHEN the scripts are listed THEN every .py there is a script (takes
    arguments), so none escapes the --help run below."""
    every = sorted(p for p in (REPO / "benchmarks").rglob("*.py") if p.name != "__init__.py")
    assert every and every == SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(REPO)))
def test_benchmark_script_answers_help(script) -> None:
    """GIVEN a benchmark script WHEN run with --help THEN it exits 0 with its usage."""
    done = subprocess.run(
        [sys.executable, str(script), "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("usage:"), done.stdout[:500]
