"""Write journals (the :class:`~agentic_search.ports.WriteJournal` port).

:class:`FileJournal` keeps one small JSON file per domain under a folder of the working home
(``$AGENTIC_SEARCH_HOME/journal/<domain>.json``), written atomically: to a temporary file,
flushed and fsynced, then renamed over the old one (POSIX ``rename`` is atomic), and the folder
fsynced, so a crash leaves either the old intent or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


class FileJournal:
    """One atomic JSON file per domain under ``root``."""

    name = "file"

    def __init__(self, root: Path) -> None:
        self.root = root

    def _file(self, domain: str) -> Path:
        return self.root / f"{domain}.json"

    def begin(self, domain: str, intent: dict[str, Any]) -> None:
        """Write ``intent`` durably (see the module docstring).

        Raises:
            OSError: when the folder cannot be written (a full disk, permissions).
        """
        self.root.mkdir(parents=True, exist_ok=True)
        target = self._file(domain)
        tmp = target.with_suffix(".json.tmp")
        with tmp.open("w", encoding="utf-8") as fh:
            json.dump(intent, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        _fsync_dir(self.root)

    def pending(self, domain: str) -> dict[str, Any] | None:
        """The domain's unfinished write; None when there is none, or when the file does not
        parse (only a torn write of a journal that was being replaced, which ``os.replace``
        rules out, could leave one: it is treated as no intent and removed)."""
        target = self._file(domain)
        try:
            text = target.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            intent = json.loads(text)
        except ValueError:
            target.unlink(missing_ok=True)
            return None
        return intent if isinstance(intent, dict) else None

    def finish(self, domain: str) -> None:
        """Remove the domain's intent (no error when there is none)."""
        self._file(domain).unlink(missing_ok=True)
        if self.root.is_dir():
            _fsync_dir(self.root)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


__all__ = ["FileJournal"]
