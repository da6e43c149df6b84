"""Arrays kept between processes in a folder of ``.npy`` files (the
:class:`~agentic_search.ports.ArrayMemo` port): ``<folder>/<key>.npy``, written whole to a
temporary file and renamed over (a reader never sees half a file), read only when its shape
is the one asked for. A folder that cannot be written (a read-only layer) costs a recompute
per process, never an error.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

_KEY = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


class NpyFolderMemo:
    """:class:`~agentic_search.ports.ArrayMemo` over ``folder`` (created on the first write).

    Raises (``get_or_compute``):
        ValueError: for a key that is not a plain file name (letters, digits, ``_.-``).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def get_or_compute(
        self, key: str, compute: Callable[[], np.ndarray], shape: tuple[int, ...]
    ) -> np.ndarray:
        """The kept array of ``shape`` under ``key``, else ``compute()``'s, then kept."""
        import numpy as np

        if not _KEY.match(key):
            raise ValueError(f"not a memo key: {key!r}")
        path = self.folder / f"{key}.npy"
        try:
            kept = np.load(path, allow_pickle=False)
            if kept.shape == tuple(shape):
                return kept
        except (OSError, ValueError):
            pass  # absent, unreadable or truncated: computed again and written over
        array = compute()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=f".{key}.", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as out:
                    np.save(out, array, allow_pickle=False)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            pass  # not writable here: the next process computes it again
        return array


__all__ = ["NpyFolderMemo"]
