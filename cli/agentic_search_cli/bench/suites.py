"""Named benchmark suites: one entry point for the scripts of ``benchmarks/``.

A suite is a script of ``benchmarks/`` (or a module, for the whole-stage bench) with its
default arguments. :func:`run_suite` runs it with the current interpreter as a subprocess from
the repository root, its stderr passed through (its progress), its stdout captured, and writes
``benchmarks/<suite>/RESULTS.md``: the exact command, the UTC date, the machine, the load
average before and after, the git commit and the script's output verbatim. A script that fails
leaves the previous ``RESULTS.md`` as it was.

Adding a suite: one :class:`Suite` in :data:`SUITES` (run the script, or at least its
``--help``, first); what it needs beyond the checkout (a dataset folder, an index, a model)
goes in ``requires`` and in its description.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentic_search_cli.bench.machine import loadavg, machine_info

#: The name of the results page written in a suite's folder.
RESULTS_FILE = "RESULTS.md"


@dataclass(frozen=True)
class Suite:
    """One named benchmark.

    Attributes:
        name: the suite's name (``--suite NAME``; its results folder ``benchmarks/<name>``).
        description: one line: what it measures, and what it needs beyond the checkout.
        script: the script's path relative to the repository root (``benchmarks/x.py``);
            exactly one of ``script`` and ``module``.
        module: a module run as ``python -m MODULE`` instead of a script.
        args: the default arguments, before the ones given after ``--``.
        requires: paths relative to the repository root that must exist (a dataset folder,
            built artefacts); a missing one stops the suite before it starts.
        markdown: the script prints Markdown (written as it is); otherwise its output goes in
            a fenced block.
    """

    name: str
    description: str
    script: str | None = None
    module: str | None = None
    args: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    markdown: bool = False

    def __post_init__(self) -> None:
        if (self.script is None) == (self.module is None):
            raise ValueError(f"suite {self.name}: give exactly one of script and module")

    def argv(self, extra: Sequence[str] = (), python: str | None = None) -> list[str]:
        """The command line: ``[python, script | -m module, *args, *extra]``."""
        target = [self.script] if self.script is not None else ["-m", str(self.module)]
        return [python or sys.executable, *target, *self.args, *extra]


#: Every suite, in the order ``--list-suites`` prints them. Paths are relative to the
#: repository root.
ALL_SUITES: tuple[Suite, ...] = (
    Suite(
        "stages",
        "the whole-search bench (agentic-search bench): per-stage latency on the golden "
        "queries, raw model and ingest throughput, handler imports; also writes "
        "benchmarks/bench/bench.json and bench.md",
        module="agentic_search_cli.main",
        args=("bench",),
        markdown=True,
    ),
    Suite(
        "query_rules",
        "wall time of the rule-based intent extractor and planner on max-length queries "
        "(no store, no model)",
        script="benchmarks/query_rules.py",
    ),
    Suite(
        "state_size",
        "bytes of the search state between the ASL's steps (Step Functions' state limit), "
        "bundled catalog indexed in a temporary folder",
        script="benchmarks/state_size.py",
    ),
    Suite(
        "golden",
        "golden-set Recall@5 and search latency on the bundled catalog, ingested into a "
        "temporary folder",
        script="benchmarks/golden.py",
    ),
    Suite(
        "no_match",
        "how often the answer-quality check says 'no good match' on the golden queries and "
        "on queries the catalog cannot answer (indexes the bundled catalog in "
        "AGENTIC_SEARCH_HOME on first use)",
        script="benchmarks/quality/no_match.py",
    ),
    Suite(
        "cli_startup",
        "whole-process cost of agentic-search search (cache hit and uncached), each run a "
        "fresh process, bundled catalog in a temporary home",
        script="benchmarks/cli_startup/cli_startup.py",
    ),
    Suite(
        "first_use",
        "the first agentic-search search in a fresh home (indexing the bundled catalog), "
        "then a second search, fresh processes",
        script="benchmarks/first_use/first_use.py",
    ),
    Suite(
        "executor_latency",
        "the executor's wall and CPU time against hybrid-rrf's, query by query; needs "
        "datasets/scifact indexed by agentic-search eval",
        script="benchmarks/executor_latency.py",
        args=("--dataset", "datasets/scifact"),
        requires=("datasets/scifact",),
    ),
    Suite(
        "rounds",
        "what the rounds after the first add, query by query; needs datasets/hotpotqa "
        "indexed by agentic-search eval",
        script="benchmarks/rounds.py",
        args=("--dataset", "datasets/hotpotqa"),
        requires=("datasets/hotpotqa",),
    ),
    Suite(
        "embedders",
        "query-embedding latency, ingest tokens/s, model bytes and RSS of the local "
        "embedding models; needs datasets/scifact/corpus.jsonl (other models with "
        "--models, EmbeddingGemma after make embedder)",
        script="benchmarks/embedders.py",
        requires=("datasets/scifact/corpus.jsonl",),
    ),
    Suite(
        "enrich_bedrock",
        "enrichment throughput through Bedrock Converse answered locally after a fixed "
        "latency (no AWS account, no model: the calls are answered on this machine)",
        script="benchmarks/enrich_bedrock.py",
    ),
    Suite(
        "cold_import",
        "cold import of every Lambda handler from the sam build artefacts; needs "
        ".aws-sam/build (make validate) and a python3.12 with boto3 (--python)",
        script="benchmarks/cold_import/cold_import.py",
        requires=(".aws-sam/build",),
    ),
)

#: The suites by name.
SUITES: Mapping[str, Suite] = {s.name: s for s in ALL_SUITES}


class SuiteError(Exception):
    """A suite that cannot run or that failed; ``code`` is the exit code to end with."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def repo_root() -> Path:
    """The checkout the suites run in: the one this package lives in when it holds
    ``benchmarks/`` (an editable install), else the current folder.

    Raises:
        SuiteError: neither holds ``benchmarks/`` (an installed package, away from a checkout).
    """
    here = Path(__file__).resolve().parents[3]
    for root in (here, Path.cwd()):
        if (root / "benchmarks").is_dir():
            return root
    raise SuiteError("no benchmarks/ folder: run the suites from a checkout of the repository")


def get_suite(name: str, registry: Mapping[str, Suite] = SUITES) -> Suite:
    """The suite called ``name``.

    Raises:
        SuiteError: an unknown name (code 2), the message listing the known ones.
    """
    try:
        return registry[name]
    except KeyError:
        known = ", ".join(sorted(registry))
        raise SuiteError(f"unknown suite {name!r} (known: {known})", code=2) from None


def list_suites(registry: Mapping[str, Suite] = SUITES) -> str:
    """The registry as text: one ``name  description`` line per suite, in registry order."""
    width = max(len(n) for n in registry)
    return "\n".join(f"{s.name:<{width}}  {s.description}" for s in registry.values()) + "\n"


#: A git pathspec leaving the suites' pages out of the dirty check.
_NOT_RESULTS = f":(exclude,glob)benchmarks/*/{RESULTS_FILE}"


def git_commit(root: Path) -> str:
    """The short hash of ``HEAD`` in ``root``, ``+dirty`` when the work tree has changes
    (untracked files included; the suites' own ``RESULTS.md`` pages left out, so one run does
    not mark the next dirty); ``unknown`` where git or the repository is not there."""
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", ".", _NOT_RESULTS],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if status else "")


def machine_line(info: Mapping[str, Any]) -> str:
    """One line from :func:`~agentic_search_cli.bench.machine.machine_info`: CPU model,
    usable / logical CPUs, RAM (GiB), platform, Python."""
    ram = info.get("ram_bytes")
    ram_text = f"{ram / 2**30:.1f} GiB RAM" if ram else "RAM unknown"
    return (
        f"{info.get('cpu_model')}, {info.get('usable_cpus')} usable of "
        f"{info.get('logical_cpus')} logical CPUs, {ram_text}, {info.get('platform')}, "
        f"Python {info.get('python')}"
    )


def _shown(argv: Sequence[str], root: Path) -> str:
    """``argv`` as a shell line another machine can run: the running interpreter shown as
    ``python`` (the page's machine line names its version), another one relative to ``root``
    when it is inside."""
    first = Path(argv[0])
    if argv[0] == sys.executable:
        first_text = "python"
    else:
        try:
            first_text = str(first.relative_to(root))
        except ValueError:
            first_text = str(first)
    return shlex.join([first_text, *argv[1:]])


def _fenced(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}text\n{text.rstrip()}\n{fence}"


def results_markdown(
    suite: Suite,
    *,
    command: str,
    invocation: str,
    date: datetime,
    seconds: float,
    machine: str,
    load_before: Sequence[float] | None,
    load_after: Sequence[float] | None,
    commit: str,
    output: str,
) -> str:
    """The ``RESULTS.md`` page of one run (``seconds``: the script's wall time)."""

    def load(values: Sequence[float] | None) -> str:
        return " ".join(f"{v:.2f}" for v in values) if values else "unknown"

    body = output.rstrip() if suite.markdown else _fenced(output)
    return (
        f"# Suite `{suite.name}`\n\n"
        f"{suite.description[:1].upper()}{suite.description[1:]}.\n\n"
        f"- command: `{command}`\n"
        f"- run by: `{invocation}`\n"
        f"- date: {date.strftime('%Y-%m-%d %H:%M:%S')} UTC ({seconds:.1f} s wall)\n"
        f"- machine: {machine}\n"
        f"- load average (1, 5, 15 min): {load(load_before)} before, "
        f"{load(load_after)} after\n"
        f"- commit: `{commit}`\n\n"
        f"## Output\n\n{body}\n"
    )


def run_suite(
    suite: Suite,
    extra: Sequence[str] = (),
    *,
    out: Path | None = None,
    root: Path | None = None,
    invocation: str | None = None,
    say: Callable[[str], None] = lambda _line: None,
) -> tuple[Path, str]:
    """Run ``suite`` (its default args, then ``extra``) from ``root`` and write its page.

    Args:
        suite: the suite to run.
        extra: arguments appended to the suite's defaults.
        out: the folder of ``RESULTS.md`` (default ``<root>/benchmarks/<suite>``; made if
            missing; a relative one is taken from the current folder).
        root: the repository root (default :func:`repo_root`).
        invocation: the command the user typed, recorded beside the script's.
        say: receives one progress line at a time (the caller prints them on stderr).

    Returns:
        (the ``RESULTS.md`` written, the script's stdout).

    Raises:
        SuiteError: a path in ``requires`` is missing, the script cannot start, or it exited
            non-zero (``code`` = its exit code, 128 + N when signal N ended it;
            ``RESULTS.md`` is then left as it was).
    """
    root = (root or repo_root()).resolve()
    missing = [p for p in suite.requires if not (root / p).exists()]
    if missing:
        raise SuiteError(f"suite {suite.name} needs {', '.join(missing)} under {root} (missing)")
    folder = (out if out is not None else root / "benchmarks" / suite.name).resolve()
    if folder.exists() and not folder.is_dir():
        raise SuiteError(f"{folder} exists and is not a folder", code=2)
    argv = suite.argv(extra)
    command = _shown(argv, root)
    commit = git_commit(root)
    machine = machine_line(machine_info())
    load_before = loadavg()
    say(f"suite {suite.name}: {command}")
    started = datetime.now(UTC)
    t = time.perf_counter()
    try:
        proc = subprocess.run(argv, cwd=root, stdout=subprocess.PIPE, text=True)
    except OSError as exc:
        raise SuiteError(f"suite {suite.name} could not start: {exc}") from exc
    seconds = time.perf_counter() - t
    load_after = loadavg()
    if proc.returncode != 0:
        raise SuiteError(
            f"suite {suite.name} failed with exit code {proc.returncode} "
            f"({folder / RESULTS_FILE} left as it was)",
            code=proc.returncode if proc.returncode > 0 else 128 - proc.returncode,
        )
    page = results_markdown(
        suite,
        command=command,
        invocation=invocation or command,
        date=started,
        seconds=seconds,
        machine=machine,
        load_before=load_before,
        load_after=load_after,
        commit=commit,
        output=proc.stdout,
    )
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / RESULTS_FILE
    tmp = folder / f".{RESULTS_FILE}.{os.getpid()}.tmp"
    try:
        tmp.write_text(page, encoding="utf-8")
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    say(f"suite {suite.name}: done in {seconds:.1f} s, wrote {target}")
    return target, proc.stdout


__all__ = [
    "ALL_SUITES",
    "RESULTS_FILE",
    "SUITES",
    "Suite",
    "SuiteError",
    "get_suite",
    "git_commit",
    "list_suites",
    "machine_line",
    "repo_root",
    "results_markdown",
    "run_suite",
]
