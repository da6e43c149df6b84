"""Copies of an Edge shard's directory, and the private folders they go in.

Copies keep the holes of the engine's preallocated, memory-mapped files (``cp --sparse``
where GNU cp is there), so a copy takes the disk the shard really uses, not its apparent size.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path


def copy_dir(src: Path, dst: Path) -> None:
    """Copy the directory ``src`` to ``dst`` (which must not exist), keeping sparse files
    sparse when GNU ``cp`` is available (else :func:`shutil.copytree`).

    Raises:
        OSError: when the copy fails (``dst`` is then removed).
    """
    try:
        if shutil.which("cp") and _gnu_cp():
            subprocess.run(
                ["cp", "-a", "--sparse=always", str(src), str(dst)],
                check=True,
                capture_output=True,
            )
        else:  # pragma: no cover - BSD/macOS cp
            shutil.copytree(src, dst)
    except (OSError, subprocess.CalledProcessError) as exc:
        shutil.rmtree(dst, ignore_errors=True)
        detail = exc.stderr.decode(errors="replace").strip() if hasattr(exc, "stderr") else exc
        raise OSError(f"could not copy {src} to {dst}: {detail}") from None


_GNU_CP: bool | None = None


def _gnu_cp() -> bool:
    global _GNU_CP
    if _GNU_CP is None:
        out = subprocess.run(["cp", "--version"], capture_output=True, text=True, check=False)
        _GNU_CP = out.returncode == 0 and "GNU" in out.stdout
    return _GNU_CP


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (signal 0; a process of another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def private_folder(runs: Path, prefix: str) -> Path:
    """A new folder ``<runs>/<prefix>-<this pid>-<random>`` for this process's copies; the
    folders of ``prefix`` left by processes no longer running are deleted first."""
    runs.mkdir(parents=True, exist_ok=True)
    for old in runs.glob(f"{prefix}-*"):
        pid = old.name.split("-")[1]
        if pid.isdigit() and not pid_alive(int(pid)):
            shutil.rmtree(old, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}-{os.getpid()}-", dir=runs))


__all__ = ["copy_dir", "pid_alive", "private_folder"]
