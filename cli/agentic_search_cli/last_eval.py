"""The last evaluation, for ``serve``'s page: where ``eval`` keeps it and how ``serve`` answers it.

Every ``agentic-search eval`` run records its summary in ``$AGENTIC_SEARCH_HOME/eval/last/``:
``summary.json`` (:func:`summary_of`: dataset, split, date, the metrics, each system's means,
error count and latency percentiles) and, when matplotlib is installed, ``metrics.png`` (the
systems x metrics figure ``eval --out`` also writes). ``serve`` answers two GET routes of its
own (not the deployed API's, which has no evaluation: there they are 404 "no route" and the
page leaves the section out):

* ``GET /eval/last``: 200 with the summary (``"available": true``), or 200 with
  ``{"available": false, "message"}`` saying how to record one;
* ``GET /eval/last.png``: 200 ``image/png``, or 404 when there is none.

Both carry the page's headers (its Content-Security-Policy): the page loads them from its
own origin.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

#: The folder under ``$AGENTIC_SEARCH_HOME`` holding the last evaluation.
LAST_DIR = Path("eval") / "last"
SUMMARY_FILE = "summary.json"
FIGURE_FILE = "metrics.png"
#: The routes ``serve`` answers from the last evaluation's folder.
ROUTES = ("/eval/last", "/eval/last.png")


def last_dir(home: Path) -> Path:
    """The last evaluation's folder under the working folder ``home``."""
    return Path(home) / LAST_DIR


def summary_of(result: Any, figure: bool, now: float | None = None) -> dict[str, Any]:
    """The recorded summary of an :class:`~agentic_search_cli.evaluation.run.EvaluationResult`:
    ``{"available": true, "date" (UTC, ISO 8601), "dataset", "split", "queries", "metrics"
    (reported, in order), "systems": {name: {metric: mean, "errors", "latency_ms"} or
    {"available": false, "reason"}}, "errors" (failed queries, all systems), "figure"
    (the PNG's name, or None)}``; the means are those of ``eval --json`` (4 decimals)."""
    full = result.summary()
    systems = {
        name: {k: v for k, v in s.items() if k in (*result.metrics, "errors", "latency_ms")}
        if s.get("available", True)
        else s
        for name, s in full["systems"].items()
    }
    return {
        "available": True,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
        "dataset": full["dataset"],
        "split": full["split"],
        "queries": full["queries"],
        "metrics": list(result.metrics),
        "systems": systems,
        "errors": sum(int(s.get("errors", 0)) for s in systems.values()),
        "figure": FIGURE_FILE if figure else None,
    }


def write_summary(home: Path, summary: dict[str, Any]) -> Path:
    """Write ``summary`` as the last evaluation's ``summary.json`` (atomically); its path."""
    folder = last_dir(home)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / SUMMARY_FILE
    tmp = folder / f".{SUMMARY_FILE}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def read_summary(home: Path) -> dict[str, Any] | None:
    """The last evaluation's summary, or None when none was recorded (or it is unreadable)."""
    try:
        summary = json.loads((last_dir(home) / SUMMARY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return summary if isinstance(summary, dict) else None


def answer(method: str, route: str, home: Path) -> tuple[int, dict[str, str], bytes]:
    """``serve``'s answer to ``method route`` (one of :data:`ROUTES`): (status, headers, body)."""
    from agentic_search_lambda.search_page import PAGE_HEADERS

    def error(status: int, name: str, message: str, **extra: str) -> tuple[int, dict, bytes]:
        body = json.dumps({"error": name, "message": message}).encode()
        return status, {"content-type": "application/json", **PAGE_HEADERS, **extra}, body

    if method != "GET":
        return error(405, "MethodNotAllowed", f"{method} {route}: use GET", allow="GET")
    summary = read_summary(home)
    if route == "/eval/last":
        if summary is None:
            summary = {
                "available": False,
                "message": "no evaluation recorded yet: run `agentic-search eval --dataset DIR` "
                "and reload",
            }
        body = json.dumps(summary, ensure_ascii=False).encode()
        return 200, {"content-type": "application/json", **PAGE_HEADERS}, body
    figure = last_dir(home) / FIGURE_FILE
    if summary is None or not summary.get("figure") or not figure.is_file():
        return error(404, "NotFound", "no figure of an evaluation recorded")
    return 200, {"content-type": "image/png", **PAGE_HEADERS}, figure.read_bytes()


__all__ = [
    "FIGURE_FILE",
    "LAST_DIR",
    "ROUTES",
    "SUMMARY_FILE",
    "answer",
    "last_dir",
    "read_summary",
    "summary_of",
    "write_summary",
]
