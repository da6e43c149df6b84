"""The serve-info file through which `ingest` and `sync` find a running `serve` (issue 25
item 5): private to its owner, ignored when its process is gone, removed only by its owner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agentic_search.config import Settings
from agentic_search_cli import serve_link


def _settings(tmp_path: Path) -> Settings:
    return Settings(agentic_search_home=tmp_path, vector_store="edge")


def _dead_pid() -> int:
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(child.stdout)


def test_the_info_file_is_private_and_names_this_process(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    info = serve_link.write_info(settings, "127.0.0.1", 8765)
    path = serve_link.info_path(settings)
    assert path.parent == settings.resolved_edge_path
    assert path.stat().st_mode & 0o777 == 0o600
    assert json.loads(path.read_text()) == {
        "pid": os.getpid(),
        "host": "127.0.0.1",
        "port": 8765,
        "token": info.token,
        "domains": ["documents", "tools"],
    }
    assert len(info.token) >= 24
    # this process is not a server to hand its own writes to
    assert serve_link.running_server(settings) is None
    serve_link.remove_info(settings)
    assert not path.exists()


def test_a_live_other_process_is_found_and_a_dead_one_is_not(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    path = serve_link.info_path(settings)
    path.parent.mkdir(parents=True)
    live = {"pid": os.getppid(), "host": "127.0.0.1", "port": 9, "token": "t"}
    path.write_text(json.dumps(live))
    assert serve_link.running_server(settings) == serve_link.ServeInfo(
        os.getppid(), "127.0.0.1", 9, "t"
    )
    # another process's file is not removed by this one
    serve_link.remove_info(settings)
    assert path.exists()
    path.write_text(json.dumps({**live, "pid": _dead_pid()}))
    assert serve_link.running_server(settings) is None
    path.write_text("{not json")
    assert serve_link.running_server(settings) is None


def test_no_server_is_looked_for_off_edge(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    path = serve_link.info_path(settings)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"pid": os.getppid(), "host": "h", "port": 1, "token": "t"}))
    assert serve_link.running_server(settings.model_copy(update={"vector_store": "local"})) is None
