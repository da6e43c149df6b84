"""Copies of a working folder (``AGENTIC_SEARCH_HOME``) for tests that damage, serve or
re-open one without touching the session's.

Qdrant Edge preallocates its memory-mapped files (32 MiB pages and WAL segments, most of it
holes): the bundled catalog's folder takes ~8 MB of disk and ~380 MB of apparent size.
``shutil.copytree`` writes the holes out, so each copy took the apparent size; a full run of the
suite made ~45 such copies (17 GB of ``/tmp``), and pytest keeps the last three runs' folders.
These copies go through the product's own sparse copy instead.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from agentic_search.adapters.edge.replica import copy_dir

#: What a copy leaves behind by default: lock files (held by the session's process) and the
#: ``run`` folder (a serve process's pid and port).
SKIP = ("*.lock", ".lock", "run")


def copy_home(src: Path, dst: Path, skip: tuple[str, ...] = SKIP) -> Path:
    """Copy the folder ``src`` to ``dst`` (which must not exist), keeping sparse files sparse,
    then remove what matches a name pattern of ``skip`` at any depth.

    Returns ``dst``. Raises ``OSError`` when the copy fails.
    """
    copy_dir(Path(src), Path(dst))
    for pattern in skip:
        for path in sorted(Path(dst).rglob(pattern), reverse=True):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.exists() or path.is_symlink():
                path.unlink()
    return Path(dst)
