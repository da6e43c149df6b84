"""Where the working folder is when nothing names it (issue 47, item 3): one per-user data
folder, whatever folder a command runs from, unless a project-local ``.agentic-search`` is in
the current folder or a parent, or ``AGENTIC_SEARCH_HOME`` names one. (platformdirs places
the per-user folder under ``XDG_DATA_HOME`` on Linux: each test points it at its own.)"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentic_search.config import Settings
from agentic_search_cli.common import announce_home


@pytest.fixture()
def user_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's own per-user data root (``XDG_DATA_HOME``)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg"


@pytest.fixture()
def anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user_data: Path) -> Path:
    """A current folder with no .agentic-search up its tree and no AGENTIC_SEARCH_HOME."""
    for name in [n for n in os.environ if n.upper() == "AGENTIC_SEARCH_HOME"]:
        monkeypatch.delenv(name)
    folder = tmp_path / "somewhere" / "else"
    folder.mkdir(parents=True)
    monkeypatch.chdir(folder)
    return folder


def test_the_default_is_the_per_user_data_from_any_folder(anywhere, user_data):
    first = Settings().agentic_search_home
    assert first == user_data / "agentic-search"
    os.chdir(anywhere.parent)  # (monkeypatch.chdir restores the folder at the end)
    assert Settings().agentic_search_home == first


def test_a_project_local_folder_up_the_tree_wins(anywhere, tmp_path):
    project = tmp_path / "somewhere" / ".agentic-search"
    project.mkdir()
    assert Settings().agentic_search_home == project


def test_the_variable_wins_over_both(anywhere, tmp_path, monkeypatch):
    (tmp_path / "somewhere" / ".agentic-search").mkdir()
    monkeypatch.setenv("AGENTIC_SEARCH_HOME", str(tmp_path / "named"))
    assert Settings().agentic_search_home == tmp_path / "named"


def test_first_use_says_where_the_folder_is_once(anywhere, user_data, capsys):
    home = user_data / "agentic-search"
    assert not home.exists()
    announce_home()
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and str(home) in said and "AGENTIC_SEARCH_HOME" in said
    assert home.is_dir()
    announce_home()  # THEN never again
    assert capsys.readouterr().err == ""


def test_nothing_is_said_when_a_folder_is_named(anywhere, tmp_path, monkeypatch, capsys):
    (tmp_path / "somewhere" / ".agentic-search").mkdir()
    announce_home()
    monkeypatch.setenv("AGENTIC_SEARCH_HOME", str(tmp_path / "named"))
    announce_home()
    assert capsys.readouterr().err == ""
