"""The write side of a running ``serve``: ``ingest`` and ``sync`` handed over by the CLI.

``serve`` holds every domain's shard lock, so it is the one process that may write the index
while it runs. :class:`ServeWriter` applies the writes the CLI hands over
(:mod:`~agentic_search_cli.serve_link`) with the server's own deps: the same reading of
the file (rejected lines with their numbers), the same journaled ingest (``--prune`` included)
or sync batches, one write at a time. Then, with worker processes, it gives them fresh copies
of the committed index (:meth:`WorkerPool.refresh <agentic_search_cli.serve_pool.WorkerPool.
refresh>`: new workers start on new copies while the old ones go on answering, then take
over) before it answers, so no request fails and the command returns once every new record
is searchable. Without workers (``--workers 0``), searches wait for the write (they share the
server's deps).

Each answer is a stream of JSON objects, one per line: ``{"total": N}``, ``{"done": n}``
(records of a batch written), ``{"note": "..."}``, then ``{"report": {...}}`` (ingest),
``{"summary": {...}}`` (sync), ``{"usage": "..."}`` (a usage error: exit 2) or
``{"error": "..."}`` (a runtime failure: exit 1).
"""

from __future__ import annotations

import argparse
import contextlib
import hmac
import ipaddress
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

Emit = Callable[[dict[str, Any]], None]


class _Notes:
    """A stand-in for the CLI's stderr console: each line printed becomes a ``note``."""

    is_terminal = False

    def __init__(self, emit: Emit) -> None:
        self.emit = emit

    def print(self, text: str, **_: Any) -> None:
        self.emit({"note": str(text)})


class ServeWriter:
    """Applies the CLI's writes in the ``serve`` process over its runtime ``rt``; ``pool``
    (the worker pool, or None) is refreshed after each write; ``search_lock`` (the lock
    in-process searches take, or a null context) is held during the write when there is no
    pool."""

    ROUTES = ("/_local/ingest", "/_local/sync", "/_local/copy")

    def __init__(
        self,
        rt: Any,
        token: str,
        pool: Any = None,
        search_lock: Any = None,
        maintenance: Any = None,
    ) -> None:
        self.rt = rt
        self.token = token
        self.pool = pool
        #: the Edge maintenance of the served store: ``/_local/copy`` snapshots through it
        self.maintenance = maintenance
        self.search_lock = search_lock if search_lock is not None else contextlib.nullcontext()
        self._write = threading.Lock()  # one write at a time

    def handle(self, route: str, body: dict[str, Any], emit: Emit) -> None:
        """Apply the write of ``route`` described by ``body``, streaming through ``emit``
        (``/_local/copy``: :meth:`copy`)."""
        from agentic_search.ports import EmbedderError, KeywordIndexError, VectorStoreError
        from agentic_search.sync.prune import PruneRefused

        if route == "/_local/copy":
            self.copy(body, emit)
            return
        domain = body.get("domain", "tools")
        known = self.rt.domains()
        if domain not in known:
            emit({"usage": f"unknown domain {domain!r} (known: {', '.join(known)})"})
            return
        given = body.get("schemaFingerprint")
        if given is not None and given != self.rt.deps(domain).schema.fingerprint:
            emit(
                {
                    "usage": f"serve searches {domain!r} with another version of its YAML: "
                    "stop serve, write with this one, then start serve again"
                }
            )
            return
        with self._write:
            try:
                with self.search_lock if self.pool is None else contextlib.nullcontext():
                    if route == "/_local/ingest":
                        result = self._ingest(domain, body, emit)
                    else:
                        result = self._sync(domain, body, emit)
                if result is None:
                    return
                if self.pool is not None and result.pop("changed", True):
                    emit({"note": "giving the serve workers the new index ..."})
                    self.pool.refresh()
            except (
                VectorStoreError,
                KeywordIndexError,
                EmbedderError,
                OSError,
                PruneRefused,
            ) as exc:
                # the reason in one line, as the CLI's own ingest says it (a refused prune
                # writes and journals nothing)
                emit({"error": str(exc)})
                return
            except Exception as exc:  # new workers that did not start (the old ones serve),
                # anything else: the reason in one line, never a cut-off answer
                emit({"error": f"{type(exc).__name__}: {exc}"})
                return
        emit(result)

    def copy(self, body: dict[str, Any], emit: Emit) -> None:
        """A reader's own copy of the served index: a snapshot of every served domain into
        ``body["dest"]``, a folder not there yet inside a folder of ``$AGENTIC_SEARCH_HOME/run``
        (anything else is refused), taken between writes (never of a half-written index). Emits
        ``{"copied": [collections], "dest": ...}`` or the reason it could not; with
        ``body["wait"]`` false, ``{"busy": ...}`` at once while a write is at work (a reader
        that has a copy goes on with it and asks again later) instead of waiting for it."""
        from agentic_search.ports import VectorStoreError

        runs = (Path(self.rt.settings.agentic_search_home) / "run").resolve()
        dest = Path(str(body.get("dest") or "")).resolve()
        if self.maintenance is None:
            emit({"error": "this serve keeps no Edge index to copy (a Qdrant server)"})
            return
        if dest.parent.parent != runs or dest.exists():
            emit({"usage": f"the copy goes to a new folder inside a folder of {runs}"})
            return
        if not self._write.acquire(blocking=body.get("wait", True) is not False):
            emit({"busy": "serve is writing the index"})
            return
        try:  # between writes
            copied = self.maintenance.snapshot(dest)
        except (VectorStoreError, OSError) as exc:
            emit({"error": str(exc)})
            return
        finally:
            self._write.release()
        emit({"copied": copied, "dest": str(dest)})

    def _ingest(self, domain: str, body: dict[str, Any], emit: Emit) -> dict[str, Any] | None:
        from agentic_search.service import SearchService
        from agentic_search.sync.files import CatalogFormatError, read_beir_corpus, read_catalog
        from agentic_search_cli.cmd_ingest import optimize_after_ingest

        service = SearchService(self.rt.deps(domain))
        path = Path(body["path"])
        try:
            if path.is_dir():
                if not (path / "corpus.jsonl").is_file():
                    raise CatalogFormatError(
                        f"{path} is a folder without corpus.jsonl (BEIR layout expected)"
                    )
                read = read_beir_corpus(path, service.schema)
                source, id_key = path / "corpus.jsonl", "_id"
            else:
                id_key = "_id" if service.schema.name == "documents" else None
                read = read_catalog(path, service.schema, id_key=id_key)
                source = path
        except (CatalogFormatError, FileNotFoundError) as exc:
            emit({"usage": str(exc)})
            return None
        emit({"total": len(read.records)})
        report = service.ingest_file(
            source.resolve(),
            batch_size=int(body.get("batchSize", 64)),
            read=read,
            on_progress=lambda n: emit({"done": n}),
            prune=bool(body.get("prune")),
            force=bool(body.get("force")),
            id_key=id_key,
        )
        if body.get("optimize", True):
            optimize_after_ingest(service, _Notes(emit), body.get("optimizeMinPoints"))
        return {
            "report": report.wire(),
            "units": [e.unit for e in report.errors],
            "changed": bool(report.stats.changed or report.pruned),
        }

    def _sync(self, domain: str, body: dict[str, Any], emit: Emit) -> dict[str, Any] | None:
        from agentic_search_cli.sync_cmd import sync_summary

        args = argparse.Namespace(
            events=Path(body["events"]) if body.get("events") else None,
            batch_size=int(body.get("batchSize", 64)),
            redrive=bool(body.get("redrive")),
            retry_failed=bool(body.get("retryFailed")),
            status=bool(body.get("status")),
        )
        summary = sync_summary(
            args,
            self.rt.deps(domain),
            on_total=lambda n: emit({"total": n}),
            on_progress=lambda n: emit({"done": n}),
        )
        return {"summary": summary, "changed": args.events is not None or args.redrive}


def answer(handler: Any, body: bytes) -> None:
    """Answer ``POST /_local/ingest`` or ``/_local/sync`` on the local server's request
    ``handler`` (a ``BaseHTTPRequestHandler`` whose class holds the ``writer``): to a
    loopback client holding the serve-info token only, as a stream of JSON lines. These
    routes are the local server's, not the deployed API's."""
    from agentic_search_cli.serve_link import TOKEN_HEADER

    writer, route = handler.writer, handler.path.split("?", 1)[0]
    if writer is None or route not in writer.ROUTES:
        handler._send_json(404, "NotFound", f"no route {route}")
        return
    if handler.command != "POST":
        handler._send_json(405, "MethodNotAllowed", f"{route} takes POST")
        return
    token = handler.headers.get(TOKEN_HEADER) or ""
    try:
        loopback = ipaddress.ip_address(handler.client_address[0]).is_loopback
    except ValueError:
        loopback = False
    if not loopback or not hmac.compare_digest(token.encode(), writer.token.encode()):
        message = "the write routes answer a loopback client with the token"
        handler._send_json(403, "Forbidden", message)
        return
    try:
        payload = json.loads(body)
        if not isinstance(payload, dict):
            raise ValueError("not an object")
    except ValueError as exc:
        handler._send_json(400, "BadRequest", f"the body is not a JSON object: {exc}")
        return
    handler.close_connection = True  # HTTP/1.0: the answer ends when the connection closes
    handler.send_response(200)
    handler.send_header("content-type", "application/x-ndjson")
    handler.end_headers()

    def emit(obj: dict[str, Any]) -> None:
        # a client gone (Ctrl-C) does not stop the write: it completes, as journaled
        with contextlib.suppress(OSError):
            handler.wfile.write((json.dumps(obj) + "\n").encode())
            handler.wfile.flush()

    writer.handle(route, payload, emit)


__all__ = ["ServeWriter", "answer"]
