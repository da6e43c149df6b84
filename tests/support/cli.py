"""Running the ``agentic-search`` command line as a subprocess over a given folder."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
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


@contextlib.contextmanager
def serving_process(
    home: Path, *argv: str, **env: str
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``agentic-search serve --port 0 *argv`` over ``home`` (plus ``env``) for the block:
    yields the process and its base URL once it listens; its stderr is drained in a thread
    (it never blocks on a full pipe) and kept in the process's ``stderr_lines``. At the end,
    SIGTERM and a wait (a kill after 60 s).

    Raises:
        AssertionError: when serve exits before it listens (its return code and stderr).
    """
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentic_search_cli.main", "serve", "--port", "0", *argv],
        env={**os.environ, "AGENTIC_SEARCH_HOME": str(home), **env},
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    lines: list[str] = []
    proc.stderr_lines = lines  # type: ignore[attr-defined]
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if m := re.search(r"serving on (http://[\d.]+:\d+)", line):
                url = m.group(1)
                break
        else:
            raise AssertionError(f"serve did not start (rc {proc.wait()}): {''.join(lines)}")
        threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True).start()  # type: ignore[arg-type]
        yield proc, url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
