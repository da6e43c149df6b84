"""``agentic-search bench --suite NAME``: the registry of benchmark suites and the page a run
writes.

GIVEN the registry WHEN read THEN every name is unique and every script exists. GIVEN an unknown
name THEN the command exits 2 with one line listing the known ones. GIVEN a real suite
(``query_rules``: no store, no model) run into a temporary ``--out`` THEN its RESULTS.md holds
the command, the commit, the machine and the script's output. GIVEN a script that fails THEN
the previous RESULTS.md is left as it was and the command exits with the script's code.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from support.paths import REPO

from agentic_search_cli.bench import suites
from agentic_search_cli.bench.machine import machine_info
from agentic_search_cli.main import main


def test_suite_names_are_unique_and_every_script_exists():
    names = [s.name for s in suites.ALL_SUITES]
    assert len(names) == len(set(names)), names
    assert "stages" in names
    for suite in suites.ALL_SUITES:
        assert re.fullmatch(r"[a-z][a-z0-9_]*", suite.name), suite.name
        assert suite.description and "\n" not in suite.description, suite.name
        if suite.script is not None:
            path = REPO / suite.script
            assert path.is_file(), f"{suite.name}: no {suite.script}"
            assert suite.script.startswith("benchmarks/"), suite.name
        else:
            assert importlib.util.find_spec(str(suite.module)) is not None, suite.name


def test_the_package_root_is_the_checkout():
    assert suites.repo_root() == REPO


def test_list_suites_prints_every_name_with_its_description(capsys):
    assert main(["bench", "--list-suites"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in listed] == [s.name for s in suites.ALL_SUITES]
    for line, suite in zip(listed, suites.ALL_SUITES, strict=True):
        assert line.endswith(suite.description)
    assert main(["bench", "--suite", "list"]) == 0
    assert capsys.readouterr().out.splitlines() == listed


def test_an_unknown_suite_exits_2_with_one_line_naming_the_known_ones(capsys, tmp_path):
    assert main(["bench", "--suite", "no-such-suite", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "no-such-suite" in err
    for name in suites.SUITES:
        assert name in err
    assert not any(tmp_path.iterdir())


def test_arguments_after_the_separator_need_a_suite(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--", "--runs", "1"])
    assert exc.value.code == 2
    assert "--suite" in capsys.readouterr().err


def test_a_real_suite_writes_its_results_page(capsys, tmp_path):
    out = tmp_path / "query_rules"
    assert main(["bench", "--suite", "query_rules", "--out", str(out), "--", "--runs", "1"]) == 0
    printed = capsys.readouterr()
    page = (out / suites.RESULTS_FILE).read_text(encoding="utf-8")
    assert "benchmarks/query_rules.py --runs 1`" in page
    assert "- run by: `agentic-search bench --suite query_rules -- --runs 1`" in page
    assert re.search(r"^- commit: `([0-9a-f]{7,}(\+dirty)?|unknown)`$", page, re.M)
    assert f"- machine: {suites.machine_line(machine_info())}\n" in page
    assert re.search(r"^- date: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", page, re.M)
    assert re.search(r"^- load average .* before, .* after$", page, re.M)
    # the script's table, verbatim in a fenced block, and on stdout
    assert printed.out.strip()
    assert f"```text\n{printed.out.rstrip()}\n```" in page
    assert "'cursor '" in printed.out
    assert "wrote" in printed.err


def test_a_failing_script_leaves_the_previous_page_and_exits_with_its_code(capsys, tmp_path):
    previous = tmp_path / suites.RESULTS_FILE
    previous.write_text("the previous run\n", encoding="utf-8")
    code = main(["bench", "--suite", "query_rules", "--out", str(tmp_path), "--", "--bogus"])
    assert code == 2  # argparse's, the script's own
    assert previous.read_text(encoding="utf-8") == "the previous run\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [suites.RESULTS_FILE]
    ours = [
        line for line in capsys.readouterr().err.splitlines() if line.startswith("agentic-search:")
    ]
    assert len(ours) == 1
    assert "query_rules" in ours[0] and "exit code 2" in ours[0]


def _fake_root(tmp_path: Path, body: str) -> Path:
    root = tmp_path / "root"
    (root / "benchmarks").mkdir(parents=True)
    (root / "benchmarks" / "fake.py").write_text(body, encoding="utf-8")
    return root


def test_markdown_output_is_written_as_it_is(tmp_path):
    root = _fake_root(tmp_path, "print('| a |\\n|---|\\n| 1 |')\n")
    suite = suites.Suite("fake", "a fake", script="benchmarks/fake.py", markdown=True)
    path, output = suites.run_suite(suite, root=root)
    assert path == root / "benchmarks" / "fake" / suites.RESULTS_FILE
    page = path.read_text(encoding="utf-8")
    assert page.endswith("## Output\n\n| a |\n|---|\n| 1 |\n")
    assert output == "| a |\n|---|\n| 1 |\n"


def test_text_output_with_a_fence_in_it_gets_a_longer_fence(tmp_path):
    root = _fake_root(tmp_path, "print('```\\ninside\\n```')\n")
    suite = suites.Suite("fake", "a fake", script="benchmarks/fake.py")
    path, _ = suites.run_suite(suite, root=root, out=tmp_path / "out")
    assert "````text\n```\ninside\n```\n````\n" in path.read_text(encoding="utf-8")


def test_a_missing_requirement_stops_the_suite_before_it_starts(tmp_path):
    root = _fake_root(tmp_path, "raise SystemExit('must not run')\n")
    suite = suites.Suite(
        "fake", "a fake", script="benchmarks/fake.py", requires=("datasets/scifact",)
    )
    with pytest.raises(suites.SuiteError) as exc:
        suites.run_suite(suite, root=root)
    assert "datasets/scifact" in str(exc.value) and "fake" in str(exc.value)
    assert exc.value.code == 1
    assert not (root / "benchmarks" / "fake").exists()


def test_a_suite_is_a_script_or_a_module_never_both():
    with pytest.raises(ValueError):
        suites.Suite("x", "x")
    with pytest.raises(ValueError):
        suites.Suite("x", "x", script="benchmarks/x.py", module="x")
    assert suites.Suite("x", "x", module="m", args=("a",)).argv(["b"], python="py") == [
        "py",
        "-m",
        "m",
        "a",
        "b",
    ]


def test_the_commit_is_dirty_for_a_change_but_not_for_a_results_page(tmp_path):
    import subprocess

    root = tmp_path / "repo"
    (root / "benchmarks" / "x").mkdir(parents=True)
    (root / "code.py").write_text("A = 1\n", encoding="utf-8")

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)

    git("init", "-q")
    git("add", "code.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    clean = suites.git_commit(root)
    assert re.fullmatch(r"[0-9a-f]{7,}", clean)
    (root / "benchmarks" / "x" / suites.RESULTS_FILE).write_text("page\n", encoding="utf-8")
    assert suites.git_commit(root) == clean
    (root / "code.py").write_text("A = 2\n", encoding="utf-8")
    assert suites.git_commit(root) == clean + "+dirty"
    assert suites.git_commit(tmp_path / "not-a-repo") == "unknown"


def test_an_option_of_the_whole_stage_bench_is_refused_with_a_suite(capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--suite", "query_rules", "--json", "--out", str(tmp_path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--json" in err and "after --" in err
    assert not any(tmp_path.iterdir())


def test_the_stage_defaults_are_the_parsers():
    from agentic_search_cli.cmd_bench import _STAGE_DEFAULTS
    from agentic_search_cli.main import build_parser

    args = build_parser().parse_args(["bench"])
    assert {dest: getattr(args, dest) for dest, _ in _STAGE_DEFAULTS} == dict(_STAGE_DEFAULTS)


def test_the_page_shows_the_running_interpreter_as_python(tmp_path):
    import sys

    assert suites._shown([sys.executable, "benchmarks/x.py", "--n", "a b"], tmp_path) == (
        "python benchmarks/x.py --n 'a b'"
    )
    inside = tmp_path / ".venv" / "bin" / "python3"
    assert suites._shown([str(inside), "x.py"], tmp_path) == ".venv/bin/python3 x.py"
