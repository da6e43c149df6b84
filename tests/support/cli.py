"""Running the ``agentic-search`` command line as a subprocess over a given folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_cli(
    home: Path, *argv: str, timeout: float = 300, input: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run ``agentic-search *argv`` with ``AGENTIC_SEARCH_HOME=home`` (plus ``env``) and
    return the finished process (text stdout/stderr); raises ``subprocess.TimeoutExpired``
    after ``timeout`` seconds."""
    return subprocess.run(
        [sys.executable, "-m", "agentic_search_cli.main", *argv],
        capture_output=True,
        text=True,
        input=input,
        env={**os.environ, "AGENTIC_SEARCH_HOME": str(home), **env},
        timeout=timeout,
        check=False,
    )
