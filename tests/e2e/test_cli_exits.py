"""The CLI exits with its documented codes when sources miss their deadline (finding 3).

A source that misses its deadline leaves its embedding call running in native code
(onnxruntime); tearing the interpreter down under it used to abort the process with rc 134
("terminate called without an active exception"). The command must exit 0 (partial results)
or 1 (nothing could answer), never abort.
"""

from __future__ import annotations

import pytest
from support.cli import run_cli


@pytest.mark.parametrize("timeout_s", ["0.05", "0.3", "0.001"])
def test_search_under_a_tight_source_deadline_exits_as_documented(indexed_home, timeout_s):
    # GIVEN an indexed folder WHEN a search runs with sources given almost no time
    proc = run_cli(
        indexed_home,
        "search",
        "AI code completion tools that work locally",
        "--json",
        SOURCE_TIMEOUT_S=timeout_s,
    )
    # THEN the process ends with a documented exit code, never an abort (134) or a signal
    assert proc.returncode in (0, 1), (proc.returncode, proc.stderr[-1500:])
    assert "terminate called" not in proc.stderr
    if proc.returncode == 0:  # partial results are a valid answer, with the errors listed
        assert proc.stdout.lstrip().startswith("{")


def test_ingest_of_an_unknown_format_exits_2_naming_the_expected_ones(indexed_home, tmp_path):
    path = tmp_path / "catalog.xml"
    path.write_text("<tools><tool id='x'/></tools>\n")
    proc = run_cli(indexed_home, "ingest", str(path))
    assert proc.returncode == 2, proc.stderr[-800:]
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("agentic-search: error: catalog.xml: unknown catalog format")
    assert "JSON Lines (.jsonl)" in line


def test_ingest_of_a_missing_file_exits_2(indexed_home, tmp_path):
    proc = run_cli(indexed_home, "ingest", str(tmp_path / "nope.jsonl"))
    assert proc.returncode == 2
    assert (
        proc.stderr.strip()
        == f"agentic-search: error: no such file or folder: {tmp_path / 'nope.jsonl'}"
    )


def test_ingest_prints_progress_lines_when_stderr_is_not_a_terminal(indexed_home, tmp_path):
    from agentic_search.sync.files import bundled_catalog_path

    lines = bundled_catalog_path().read_text().splitlines()[:5]
    path = tmp_path / "five.jsonl"
    path.write_text("\n".join(lines) + "\n\n")
    proc = run_cli(indexed_home, "ingest", str(path))
    assert proc.returncode == 0, proc.stderr[-800:]
    assert "ingesting into 'tools': 5/5 (100%)" in proc.stderr
    assert "ingested 5 of 6 lines (0 rejected, 1 blank)" in proc.stdout
    # AND the report is not hard-wrapped at 80 columns: one line per fact (issue 25 finding 15)
    (report,) = [line for line in proc.stdout.splitlines() if line.startswith("ingested")]
    assert f"from {path.resolve()}: 0 new," in report and report.endswith("docs/s)")


def test_ingest_of_a_latin1_csv_exits_2_with_one_line_naming_line_and_byte(indexed_home, tmp_path):
    # issue 25 finding 7: a Latin-1 CSV ended in a UnicodeDecodeError traceback, rc 1
    path = tmp_path / "export.csv"
    path.write_bytes("id,name\ncafe,Caf\xe9\n".encode("latin-1"))
    proc = run_cli(indexed_home, "ingest", str(path))
    assert proc.returncode == 2, proc.stderr[-800:]
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("agentic-search: error: export.csv line 2: invalid UTF-8 at byte 8;")


def test_search_with_a_domain_file_that_is_no_schema_exits_2_in_one_line(tmp_path):
    # issue 25 finding 12: `search ide --domain /etc/passwd` printed a 4-line pydantic error
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\n")
    proc = run_cli(tmp_path / "home", "search", "ide", "--domain", str(passwd))
    assert proc.returncode == 2, proc.stderr[-800:]
    (line,) = proc.stderr.strip().splitlines()
    assert line == (
        f"agentic-search: error: invalid domain schema in {passwd}: expected a YAML mapping of "
        "a domain schema (name, fields, aspects, ...), got str"
    )


def test_a_search_no_path_could_answer_is_one_line_exit_1(monkeypatch, indexed_home, capsys):
    # a SearchFailed (ExtractIntent and its rules fallback both failed) reached the user as a
    # traceback; it is the runtime failure of the documented exit 1, in one line
    from agentic_search.service import SearchService
    from agentic_search.wire.errors import SearchFailed
    from agentic_search_cli.main import main

    def failing(self, query, limit=10, rounds=None, history=None, caller=None):
        raise SearchFailed("TypeError", "the intent step broke")

    monkeypatch.setenv("AGENTIC_SEARCH_HOME", str(indexed_home))
    monkeypatch.setattr(SearchService, "search", failing)
    assert main(["search", "free code editor"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["agentic-search: error: the search failed: TypeError: the intent step broke"]
