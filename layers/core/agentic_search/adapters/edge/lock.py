"""One writer per Edge shard: an exclusive, non-blocking ``flock`` on a lock file beside the
shard directory, holding the owner's pid.

Qdrant Edge 0.9 does not guard its directory against a second process: a second
``EdgeShard.load`` of the same directory breaks the first one's flush (and loses data with
the WAL off). So every process takes this lock before it opens a shard and keeps it until the
shard is closed; a second one fails at once with a one-line error naming the holder's pid.
The kernel drops an ``flock`` when its process dies (SIGKILL included), so a crashed writer
never leaves a stale lock behind; the pid left in the file is then only informative.

Readers never open the writer's directory: a reader copies the shard (:class:`ReadGate`,
``<shard directory>.read.lock``, held shared for the copy) and opens its copy. A writer holds
that gate exclusively from just after its writer lock until it closes, so a copy is only ever
taken between two writers' sessions: never of a half-written state. Readers share the gate
with each other; a writer waits for the copies in flight (each a fraction of a second), a
reader waits for the writer.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable
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
        #: held exclusively with the lock: no reader copies the shard meanwhile
        self.gate = ReadGate(shard_dir)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._fd is not None

    def acquire(self, waiting: Callable[[str], None] | None = None) -> None:
        """Take the lock and write this process's pid into the lock file, then the read gate
        exclusively (waiting for the readers' copies in flight). With ``waiting``, a lock
        another writer holds is waited for (``waiting`` is called with its pid before each
        wait of :data:`WAIT_POLL_S`; it may raise to give up); without, it is an error.

        Raises:
            VectorStoreError: (without ``waiting``) when another process (or another store of
                this process) holds it; the message names the holder's pid and the shard.
        """
        if self._fd is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "unknown"
                if waiting is None:
                    os.close(fd)
                    raise VectorStoreError(
                        f"the Qdrant Edge shard {self.shard_dir} is open for writing by another "
                        f"process (pid {holder}); stop it, or point QDRANT_EDGE_PATH elsewhere"
                    ) from None
                try:
                    waiting(holder)
                    time.sleep(WAIT_POLL_S)
                except BaseException:
                    os.close(fd)
                    raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        try:
            self.gate.exclude()
        except BaseException:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            raise
        self._fd = fd

    def release(self) -> None:
        """Drop the lock and the read gate (the files stay; they are reused)."""
        if self._fd is not None:
            self.gate.release()
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def holder_pid(lock_file: Path) -> str:
    """The pid a writer left in ``lock_file`` ("unknown" when there is none)."""
    try:
        return lock_file.read_text(encoding="ascii", errors="replace").strip() or "unknown"
    except OSError:
        return "unknown"


#: Seconds between a waiting reader's attempts at the read gate.
WAIT_POLL_S = 0.1


class ReadGate:
    """``<shard directory>.read.lock`` (POSIX ``flock``): shared by readers while each copies
    the shard, exclusive to the writer for its whole session (see the module docstring)."""

    def __init__(self, shard_dir: Path) -> None:
        self.shard_dir = shard_dir
        self.path = shard_dir.with_name(shard_dir.name + ".read.lock")
        #: the writer lock's file, whose pid names the writer a reader waits for
        self.writer_file = shard_dir.with_name(shard_dir.name + ".lock")
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the gate (shared or exclusive)."""
        return self._fd is not None

    def _open(self) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)

    def share(self, waiting: Callable[[str], None] | None = None) -> None:
        """Take the gate shared, waiting while a writer holds it; ``waiting`` is called with
        the writer's pid before each wait of :data:`WAIT_POLL_S` (it may raise to give up:
        the exception passes, the gate is not held)."""
        if self._fd is not None:
            return
        fd = self._open()
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if waiting is not None:
                        waiting(holder_pid(self.writer_file))
                    time.sleep(WAIT_POLL_S)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def writer_at_work(self) -> bool:
        """Whether a writer holds the gate now (a look, no waiting; False when this object
        holds it)."""
        if self._fd is not None:
            return False
        fd = self._open()
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)  # closing drops the look's shared lock
        return False

    def exclude(self) -> None:
        """Take the gate exclusively (a writer, after its :class:`ShardLock`), waiting for the
        readers' copies in flight."""
        if self._fd is not None:
            return
        fd = self._open()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def release(self) -> None:
        """Drop the gate (the file stays)."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


__all__ = ["WAIT_POLL_S", "ReadGate", "ShardLock", "holder_pid"]
