"""One writer per Edge shard: an exclusive, non-blocking ``flock`` on a lock file beside the
shard directory, holding the owner's pid.

Qdrant Edge 0.9 does not guard its directory against a second process: a second
``EdgeShard.load`` of the same directory breaks the first one's flush (and loses data with
the WAL off). So every process takes this lock before it opens a shard and keeps it until the
shard is closed; a second one fails at once with a one-line error naming the holder's pid.
The kernel drops an ``flock`` when its process dies (SIGKILL included), so a crashed writer
never leaves a stale lock behind; the pid left in the file is then only informative.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from agentic_search.ports import VectorStoreError


class ShardLock:
    """An exclusive lock on ``<shard directory>.lock`` (POSIX ``flock``).

    Two locks on the same file conflict even inside one process (each holds its own open
    file description), so two stores of one process cannot both write a shard either.
    """

    def __init__(self, shard_dir: Path) -> None:
        self.shard_dir = shard_dir
        self.path = shard_dir.with_name(shard_dir.name + ".lock")
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock (no waiting) and write this process's pid into the lock file.

        Raises:
            VectorStoreError: when another process (or another store of this process)
                holds it; the message names the holder's pid and the shard.
        """
        if self._fd is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise VectorStoreError(
                f"the Qdrant Edge shard {self.shard_dir} is open for writing by another "
                f"process (pid {holder}); stop it, or point QDRANT_EDGE_PATH elsewhere"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        self._fd = fd

    def release(self) -> None:
        """Drop the lock (the lock file stays; it is reused by the next writer)."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


__all__ = ["ShardLock"]
