"""``--as`` on search, eval and mcp: repeatable principals, the local user's by default."""

from __future__ import annotations

import argparse
import getpass

import pytest

from agentic_search_cli.common import LOCAL_PRINCIPAL, caller_for
from agentic_search_cli.main import build_parser


@pytest.mark.parametrize("command", [["search", "q"], ["eval", "--dataset", "d"], ["mcp"]])
def test_as_is_repeatable_on_every_command_that_searches(command):
    args = build_parser().parse_args([*command, "--as", "eng", "--as", "alice"])
    assert caller_for(args).principals == ["alice", "eng"]


def test_without_as_the_caller_is_the_local_user_and_local():
    caller = caller_for(argparse.Namespace(principals=None))
    assert LOCAL_PRINCIPAL in caller.principals
    assert getpass.getuser() in caller.principals


def test_an_empty_principal_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        caller_for(argparse.Namespace(principals=["eng", " "]))
    assert exc.value.code == 2
    assert "--as" in capsys.readouterr().err
