"""How a CLI write reaches a running ``serve``: its serve-info file and the loopback client.

``serve`` (with Qdrant Edge) holds the shard lock of every domain it serves, so a second process
cannot write the index while it runs. Instead, ``serve`` writes ``serve.json`` beside the
shard locks (``$QDRANT_EDGE_PATH/serve.json``, mode 0600: its pid, port and a random token)
once it listens, and removes it when it stops. ``agentic-search ingest`` and ``sync`` find the
file, check that its pid is alive, and hand their write to the server's writer over loopback
(``POST /_local/ingest``, ``POST /_local/sync``; the token proves the caller can read the
folder, and the server answers these routes to loopback clients only). ``agentic-search
search`` asks its ``POST /search`` the same way (:func:`post_json`): the server answers from
the index it holds, never from a half-written one (docs/concurrency.md). The server streams one
JSON object per line (progress, notes, then the result), applies the write with its own writer
(journaled as the CLI's own), then gives its worker processes fresh copies of the index before
it answers: when the command returns, every new record is searchable through ``serve``.

Long: both ends of one small protocol (the serve-info file, the client, and how the CLI shows
the answer) in one file, so a change to one side is seen with the other.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import secrets
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The serve-info file's name, in the Edge folder beside the shard locks.
INFO_NAME = "serve.json"
#: The header that carries the serve-info token.
TOKEN_HEADER = "x-agentic-search-token"
#: The principals a local CLI asks as (a JSON list): ``serve`` trusts it only when it is bound
#: to loopback and the request carries its token (:mod:`agentic_search_cli.serve_access`).
PRINCIPALS_HEADER = "x-agentic-search-principals"
#: Seconds the client waits for the next line of the server's answer (an embedding batch, a
#: worker restart): generous, the server is working, not gone.
READ_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class ServeInfo:
    """A running ``serve``: its pid, where it listens, the token of its write routes and the
    domains it serves (it holds their shard locks; the built-ins for a file that names none)."""

    pid: int
    host: str
    port: int
    token: str
    domains: tuple[str, ...] = ("documents", "tools")


def info_path(settings: Any) -> Path:
    """``serve.json`` of the Edge folder of ``settings``."""
    return Path(settings.resolved_edge_path) / INFO_NAME


def write_info(
    settings: Any, host: str, port: int, domains: tuple[str, ...] = ("documents", "tools")
) -> ServeInfo:
    """Write this process's serve-info file (atomically, mode 0600) and return it."""
    info = ServeInfo(os.getpid(), host, port, secrets.token_urlsafe(24), tuple(domains))
    path = info_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({**info.__dict__, "domains": list(info.domains)}, f)
    os.replace(tmp, path)
    return info


def remove_info(settings: Any) -> None:
    """Remove the serve-info file when it is this process's (a later ``serve`` may own it)."""
    path = info_path(settings)
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text()).get("pid") == os.getpid():
            path.unlink()


def running_server(settings: Any) -> ServeInfo | None:
    """The ``serve`` running over the Edge folder of ``settings`` (None when there is none:
    no file, an unreadable one, or one left by a process that is gone)."""
    if settings.vector_store != "edge" or settings.qdrant_url:
        return None
    try:
        raw = json.loads(info_path(settings).read_text())
        info = ServeInfo(int(raw["pid"]), str(raw["host"]), int(raw["port"]), str(raw["token"]))
        if isinstance(raw.get("domains"), list):
            info = ServeInfo(info.pid, info.host, info.port, info.token, tuple(raw["domains"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if info.pid == os.getpid() or not alive(info.pid):
        return None
    return info


def serving(domain: str) -> tuple[ServeInfo, str, str | None] | None:
    """The running ``serve`` that holds ``domain``'s index (a name or a YAML path: the name
    its schema declares), with that name and, for a YAML path, its schema's fingerprint
    (the writer refuses a YAML other than the one it serves); None when no serve runs or it
    does not serve that domain (then the command writes the index itself)."""
    from agentic_search.config import Settings
    from agentic_search.logic.schema import SchemaError
    from agentic_search.wiring import domain_schema

    settings = Settings()
    info = running_server(settings)
    if info is None:
        return None
    try:
        schema = domain_schema(settings, domain)
    except SchemaError:
        return None  # the command's own open says why, in one line
    if schema.name not in info.domains:
        return None
    return info, schema.name, schema.fingerprint if schema.source is not None else None


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists (signal 0; a process of another user counts)."""
    from agentic_search.adapters.edge.copying import pid_alive

    return pid_alive(pid)


def held_message(settings: Any, exc: Exception) -> str:
    """The lock error of ``exc``, or, when the holder is a running ``serve``, which one."""
    info = running_server(settings)
    if info is not None and f"(pid {info.pid})" in str(exc):
        return (
            f"agentic-search serve (pid {info.pid}) is already serving "
            f"{settings.resolved_edge_path} on port {info.port}; stop it, or point "
            "QDRANT_EDGE_PATH elsewhere"
        )
    return str(exc)


@contextlib.contextmanager
def reader_settings(settings: Any, who: str) -> Iterator[Any]:
    """Settings that read the index without writing it, for a command that only reads it
    (``eval`` of an index as it is, ``bench``'s golden queries; ``mcp`` renews its copy:
    :mod:`agentic_search_cli.reader_copy`), as ``search``
    reads (docs/concurrency.md): with ``serve`` running over the folder, a copy it snapshots
    between writes into a private folder under ``$AGENTIC_SEARCH_HOME/run`` (``who``-<pid>-*,
    ``POST /_local/copy``; deleted when the block ends), searched by this process as its own;
    otherwise ``QDRANT_EDGE_READER`` (the store copies the shard under its read gate while no
    writer is at work). A Qdrant server needs neither.

    Raises:
        ServeLinkError: when ``serve`` could not make the copy.
    """
    info = running_server(settings)
    if settings.vector_store != "edge" or settings.qdrant_url:
        yield settings
        return
    if info is None:
        yield settings.model_copy(update={"qdrant_edge_reader": True})
        return
    import shutil

    folder = serve_copy(info, settings, who)
    assert folder is not None  # (it waited for serve's write)
    try:
        sys.stderr.write(
            f"agentic-search: serve (pid {info.pid}, port {info.port}) holds the index; "
            f"reading a copy it took ({folder})\n"
        )
        yield settings.model_copy(update={"qdrant_edge_path": folder / "edge"})
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def serve_copy(info: ServeInfo, settings: Any, who: str, wait: bool = True) -> Path | None:
    """Ask the running ``serve`` ``info`` for a copy of the index it holds (``POST
    /_local/copy``), taken between writes into ``<folder>/edge`` of a new private folder
    ``$AGENTIC_SEARCH_HOME/run/<who>-<pid>-*``; returns that folder (the caller deletes it).
    Without ``wait``, None at once while serve is writing (nothing is left behind).

    Raises:
        ServeLinkError: when ``serve`` could not make the copy (the folder is removed).
    """
    import shutil

    from agentic_search.adapters.edge.copying import private_folder

    folder = private_folder(Path(settings.agentic_search_home) / "run", who)
    try:
        last: dict[str, Any] = {}
        body = {"dest": str(folder / "edge"), "wait": wait}
        for line in post_lines(info, "/_local/copy", body):
            last = line
        if "busy" in last:
            shutil.rmtree(folder, ignore_errors=True)
            return None
        if "copied" not in last:
            reason = last.get("usage") or last.get("error") or "no answer"
            raise ServeLinkError(f"serve (pid {info.pid}) could not copy the index: {reason}")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder


class ServeLinkError(RuntimeError):
    """The running ``serve`` could not be reached, or broke off its answer."""


def post_lines(info: ServeInfo, route: str, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """POST ``body`` (JSON) to ``route`` of the running server on loopback and yield each
    JSON object of its line-by-line answer.

    Raises:
        ServeLinkError: when the server cannot be reached, refuses the call (its message), or
            its answer is cut short.
    """
    conn, where = _connection(info)
    try:
        resp = _post(conn, info, route, body)
        if resp.status != 200:
            detail = resp.read().decode(errors="replace")
            with contextlib.suppress(ValueError, AttributeError):
                detail = json.loads(detail)["message"]
            raise ServeLinkError(f"{where} refused the write ({resp.status}): {detail}")
        for line in resp:
            if line.strip():
                yield json.loads(line)
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise ServeLinkError(f"lost {where}: {exc}") from None
    finally:
        conn.close()


def post_json(
    info: ServeInfo, route: str, body: dict[str, Any], principals: list[str] | None = None
) -> tuple[int, dict[str, Any]]:
    """POST ``body`` (JSON) to ``route`` of the running server on loopback, as ``principals``
    when given: its status and JSON answer (an answer that is not a JSON object becomes
    ``{"message": <its text>}``).

    Raises:
        ServeLinkError: when the server cannot be reached or breaks off its answer.
    """
    conn, where = _connection(info)
    try:
        resp = _post(conn, info, route, body, principals)
        raw = resp.read()
    except (OSError, http.client.HTTPException) as exc:
        raise ServeLinkError(f"lost {where}: {exc}") from None
    finally:
        conn.close()
    try:
        answer = json.loads(raw)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        answer = {"message": raw.decode(errors="replace")[:500]}
    return resp.status, answer


def _connection(info: ServeInfo) -> tuple[http.client.HTTPConnection, str]:
    """A loopback connection to the server and the words that name it in errors."""
    host = "127.0.0.1" if info.host in ("", "0.0.0.0", "::", "localhost") else info.host
    conn = http.client.HTTPConnection(host, info.port, timeout=READ_TIMEOUT_S)
    return conn, f"agentic-search serve (pid {info.pid}) on port {info.port}"


def _post(
    conn: http.client.HTTPConnection,
    info: ServeInfo,
    route: str,
    body: dict[str, Any],
    principals: list[str] | None = None,
) -> http.client.HTTPResponse:
    headers = {"content-type": "application/json", TOKEN_HEADER: info.token}
    if principals is not None:
        headers[PRINCIPALS_HEADER] = json.dumps(principals)
    conn.request("POST", route, body=json.dumps(body).encode(), headers=headers)
    return conn.getresponse()


# ----- the CLI's side --------------------------------------------------------------------------


def follow(info: ServeInfo, route: str, body: dict[str, Any], what: str | None) -> dict[str, Any]:
    """Send the write, show its progress on stderr (as ``what``; None: no progress bar), and
    return its last line (the result).

    Raises:
        SystemExit: 2 on a usage error the server found, 1 on its runtime error or a lost
            connection, 130 on Ctrl-C (the server completes the write).
    """
    from agentic_search_cli.common import console, progress_bar, usage_error

    err = console(stderr=True)
    err.print(
        f"agentic-search: serve (pid {info.pid}, port {info.port}) holds the index; "
        "handing it the write",
        markup=False,
        soft_wrap=True,
    )
    last: dict[str, Any] = {}
    try:
        with progress_bar(err) if what else contextlib.nullcontext() as progress:
            task = progress.add_task(what, total=None) if progress is not None else None
            for line in post_lines(info, route, body):
                if "total" in line or "done" in line:
                    if progress is not None and "total" in line:
                        progress.update(task, total=line["total"])
                    elif progress is not None:
                        progress.advance(task, line["done"])
                elif "note" in line:
                    err.print(line["note"], markup=False, soft_wrap=True)
                else:
                    last = line
    except ServeLinkError as exc:
        sys.stderr.write(f"agentic-search: error: {exc}\n")
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        sys.stderr.write(
            f"agentic-search: interrupted; serve (pid {info.pid}) completes the write\n"
        )
        raise SystemExit(130) from None
    if "usage" in last:
        usage_error(last["usage"])
    if "error" in last or not last:
        sys.stderr.write(
            f"agentic-search: error: {last.get('error', 'serve ended its answer early')}\n"
        )
        raise SystemExit(1)
    return last


def run_ingest(
    args: Any,
    path: Path,
    info: ServeInfo,
    domain: str | None = None,
    fingerprint: str | None = None,
) -> int:
    """``agentic-search ingest`` through the running ``serve`` ``info``: the same report (and
    ``--json``, ``--strict``) as in-process. ``--rebuild`` is refused (exit 1): it drops the
    index the server is serving."""
    from agentic_search.sync.files import LineError
    from agentic_search.sync.indexer import WriteStats
    from agentic_search.sync.ingest import IngestReport
    from agentic_search_cli.common import console
    from agentic_search_cli.render import print_ingest

    if args.rebuild:
        sys.stderr.write(
            f"agentic-search: error: ingest --rebuild drops the index that serve (pid "
            f"{info.pid}) is serving: stop it first\n"
        )
        return 1
    domain = domain or args.domain
    body = {
        "domain": domain,
        "schemaFingerprint": fingerprint,
        "path": str(path.resolve()),
        "batchSize": args.batch_size,
        "prune": args.prune,
        "force": args.force,
        "optimize": not args.no_optimize,
        "optimizeMinPoints": args.optimize_min_points,
    }
    result = follow(info, "/_local/ingest", body, f"ingesting into {domain!r} (serve)")
    w = result["report"]
    units = result.get("units") or ["line"] * len(w["errors"])
    report = IngestReport(
        path=w["path"],
        lines=w["lines"],
        valid=w["valid"],
        errors=[
            LineError(e["line"], e["reason"], e["id"], unit)
            for e, unit in zip(w["errors"], units, strict=False)
        ],
        stats=WriteStats(
            inserted=w["inserted"],
            updated_vectors=w["updatedVectors"],
            updated_payload=w["updatedPayload"],
            unchanged=w["unchanged"],
            embedded_texts=w["embeddedTexts"],
        ),
        seconds=w["seconds"],
        stale=w["notInFile"],
        pruned=w["pruned"],
        blank=w["blank"],
        kept=w["keptRejected"],
    )
    if args.json:
        sys.stdout.write(json.dumps(report.wire(), indent=2) + "\n")
    else:
        print_ingest(console(), report)
    return 1 if args.strict and report.errors else 0


def sync_body(args: Any) -> dict[str, Any]:
    """The body of ``POST /_local/sync`` for the ``sync`` command's ``args``."""
    return {
        "domain": args.domain,
        "events": str(args.events.resolve()) if args.events is not None else None,
        "batchSize": args.batch_size,
        "redrive": args.redrive,
        "retryFailed": args.retry_failed,
        "status": args.status,
    }


__all__ = [
    "INFO_NAME",
    "TOKEN_HEADER",
    "ServeInfo",
    "ServeLinkError",
    "alive",
    "follow",
    "held_message",
    "info_path",
    "post_json",
    "post_lines",
    "remove_info",
    "run_ingest",
    "running_server",
    "serve_copy",
    "sync_body",
    "write_info",
]
