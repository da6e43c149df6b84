"""Progress for long work: a rich bar on a terminal, periodic plain lines otherwise.

When stderr is not a terminal (a CI log, ``2> file``, a pipe), rich's live bar prints nothing
until the work ends; :class:`LineProgress` prints one line per task every
:data:`LINE_EVERY_S` seconds instead (``ingesting into 'documents': 640/5183 (12%), 41 s``),
and a last one when the task is complete. Both offer what the commands use: ``add_task``,
``advance``, ``update`` and the context manager.
"""

from __future__ import annotations

import time
from typing import Any

#: Seconds between two progress lines when stderr is not a terminal.
LINE_EVERY_S = 10.0


class LineProgress:
    """Plain progress lines on ``out`` (a rich console), at most one per task every
    ``every_s`` seconds, and one when a task reaches its total."""

    def __init__(self, out: Any, every_s: float = LINE_EVERY_S) -> None:
        self.out = out
        self.every_s = every_s
        self._tasks: dict[int, dict[str, Any]] = {}

    def __enter__(self) -> LineProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        for task_id, task in self._tasks.items():
            if not task["finished"] and exc[0] is None:
                self._line(task_id)

    def add_task(self, description: str, total: float | None = None, **_: Any) -> int:
        """A new task; returns its id."""
        task_id = len(self._tasks)
        now = time.monotonic()
        self._tasks[task_id] = {
            "description": description,
            "total": total,
            "completed": 0.0,
            "started": now,
            "last": now,
            "finished": False,
        }
        return task_id

    def update(self, task_id: int, total: float | None = None, **_: Any) -> None:
        """Set a task's total."""
        if total is not None:
            self._tasks[task_id]["total"] = total

    def advance(self, task_id: int, advance: float = 1) -> None:
        """Count ``advance`` more done; print a line when due or complete."""
        task = self._tasks[task_id]
        task["completed"] += advance
        now = time.monotonic()
        complete = task["total"] is not None and task["completed"] >= task["total"]
        if complete or now - task["last"] >= self.every_s:
            task["last"] = now
            task["finished"] = complete
            self._line(task_id)

    def _line(self, task_id: int) -> None:
        task = self._tasks[task_id]
        done, total = int(task["completed"]), task["total"]
        share = f"{done}/{int(total)} ({100 * done / total:.0f}%)" if total else f"{done}"
        elapsed = time.monotonic() - task["started"]
        eta = ""
        if total and 0 < done < total:  # the rate so far, over what is left
            eta = f", ETA {elapsed / done * (total - done):.0f} s"
        self.out.print(f"{task['description']}: {share}, {elapsed:.0f} s{eta}", markup=False)


__all__ = ["LINE_EVERY_S", "LineProgress"]
