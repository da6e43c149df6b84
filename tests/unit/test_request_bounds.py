"""A request's bounds have one home (``wire.search``: LIMIT_MIN..LIMIT_MAX results,
ROUNDS_MIN..ROUNDS_MAX rounds): the request model, the HTTP API's body, the MCP tools' inputs
and the CLI's argument types all accept exactly that range (issue 43)."""

from __future__ import annotations

import argparse

import pytest
from pydantic import TypeAdapter, ValidationError

from agentic_search.wire import LIMIT_MAX, LIMIT_MIN, ROUNDS_MAX, ROUNDS_MIN, SearchRequest
from agentic_search_cli.common import positive_limit, rounds_arg
from agentic_search_lambda import mcp_tools
from agentic_search_lambda.api import SearchBody

BOUNDS = {"limit": (LIMIT_MIN, LIMIT_MAX), "rounds": (ROUNDS_MIN, ROUNDS_MAX)}


def _range(schema: dict) -> tuple[int, int]:
    """(minimum, maximum) of a property's JSON Schema (an optional one is an anyOf)."""
    for alt in schema.get("anyOf", [schema]):
        if "maximum" in alt:
            return alt["minimum"], alt["maximum"]
    raise AssertionError(schema)


@pytest.mark.parametrize("model", [SearchRequest, SearchBody])
def test_the_request_models_take_the_bounds(model) -> None:
    props = model.model_json_schema()["properties"]
    assert {k: _range(props[k]) for k in BOUNDS} == BOUNDS


def test_the_mcp_inputs_take_the_bounds() -> None:
    assert _range(TypeAdapter(mcp_tools.Limit).json_schema()) == BOUNDS["limit"]
    assert _range(TypeAdapter(mcp_tools.Rounds).json_schema()) == BOUNDS["rounds"]


@pytest.mark.parametrize(("parse", "field"), [(positive_limit, "limit"), (rounds_arg, "rounds")])
def test_the_cli_types_take_the_bounds(parse, field) -> None:
    low, high = BOUNDS[field]
    assert parse(str(low)) == low and parse(str(high)) == high
    for bad in (low - 1, high + 1):
        with pytest.raises(argparse.ArgumentTypeError, match=f"between {low} and {high}"):
            parse(str(bad))
    with pytest.raises(ValidationError):
        SearchRequest(query="q", **{field: high + 1})
