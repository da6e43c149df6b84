"""``history`` on POST /search through the deployed handler (SearchApiFunction, from the
recorded follow-up event, which tests/aws/lambda/test_handlers_replay.py replays as it is): the
same words without history are another answer, and the bounds of the history are answered 422
naming the field (``detail[].field`` = ``history``)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from support.lambdas import FUNCTION_IDS, load_event

from agentic_search.wire.search import HISTORY_IDS_MAX, HISTORY_MAX_CHARS, HISTORY_TURNS_MAX
from agentic_search_cli.local_server import LocalContext

EVENT = "search_api/post_search_follow_up.json"


def _post(handlers: dict[str, Any], body: dict[str, Any] | None = None) -> tuple[int, Any]:
    event = copy.deepcopy(load_event(EVENT))
    if body is not None:
        event["body"] = json.dumps(body)
        event["headers"]["content-length"] = str(len(event["body"]))
    ctx = LocalContext(
        function_name=FUNCTION_IDS["search_api"],
        invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:search_api",
        aws_request_id="history",
    )
    out = handlers["search_api"].handler(event, ctx)
    return out["statusCode"], json.loads(out["body"])


def test_the_recorded_follow_up_is_read_against_its_last_turn(handlers, wired_runtime):
    status, body = _post(handlers)
    assert status == 200, body
    up = body["intent"]["followUp"]
    assert up["kind"] == "filter" and up["turn"] == 1
    assert up["readAs"] == "AI code completion tools free"
    assert any(c["field"] == "pricing_model" for c in body["intent"]["constraints"])
    assert body["query"] == "only the free ones"
    # the same query without history is another answer: no follow-up, no constraint
    status, alone = _post(handlers, {"query": "only the free ones", "limit": 5})
    assert status == 200 and "followUp" not in alone["intent"]


def _turn(ids: int = 1, query: str = "AI code completion tools") -> dict[str, Any]:
    return {"query": query, "ids": [f"record-{i:013d}" for i in range(ids)]}


@pytest.mark.parametrize(
    ("history", "says"),
    [
        ([_turn()] * (HISTORY_TURNS_MAX + 1), f"at most {HISTORY_TURNS_MAX} items"),
        ([_turn(HISTORY_IDS_MAX + 1)], f"at most {HISTORY_IDS_MAX} items"),
        # 10 turns of 4,000 characters and 50 ids of 20: over the total, within the body limit
        ([_turn(HISTORY_IDS_MAX, "x" * 4000)] * 10, f"the maximum is {HISTORY_MAX_CHARS:,}"),
        ([{"query": "", "ids": []}], "at least 1 character"),
        ([{"query": "q", "ids": [], "extra": 1}], "Extra inputs"),
    ],
)
def test_a_history_past_its_bounds_is_a_422_naming_the_field(
    handlers, wired_runtime, history, says
):
    status, body = _post(handlers, {"query": "only the free ones", "history": history})
    assert status == 422, body
    fields = {d["field"].split(".")[0] for d in body["detail"]}
    assert fields == {"history"}, body
    assert says in json.dumps(body), body
