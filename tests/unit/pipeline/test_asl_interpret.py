"""The ASL interpreter the local runner runs (agentic_search.pipeline.asl), on small
definitions: each construct of the subset does what the States Language specifies, and a
definition outside the subset is refused when loaded, never run differently."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from agentic_search.pipeline import asl
from agentic_search.pipeline.steps import FUNCTIONS, SEARCH_ASL, search_definition, task_states
from agentic_search.wire import RunConfig, SearchRequest, SearchState


class Calls:
    """Functions by name over JSON; ``fail`` maps a function to the errors it raises first."""

    def __init__(self, functions: dict[str, Callable[[Any], Any]]) -> None:
        self.functions = functions
        self.fail: dict[str, list[Exception]] = {}
        self.calls: list[str] = []

    def call(self, function: str, payload: Any) -> Any:
        self.calls.append(function)
        errors = self.fail.get(function)
        if errors:
            raise errors.pop(0)
        return self.functions[function](payload)

    def keep(self, data: Any) -> Any:
        return json.loads(json.dumps(data))

    def restore(self, kept: Any) -> Any:
        return kept

    def map(self, run: Callable[[Any], Any], items: Sequence[Any], concurrency: int) -> list:
        return [run(i) for i in items]


def task(function: str, **more: Any) -> dict[str, Any]:
    return {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke",
        "Parameters": {"FunctionName": function, "Payload.$": "$"},
        "OutputPath": "$.Payload",
        **more,
    }


def machine(states: dict[str, Any], start: str) -> dict[str, Any]:
    definition = {"StartAt": start, "States": states}
    asl.check(definition)
    return definition


def test_a_catch_hands_on_the_input_with_the_error_at_its_result_path():
    calls = Calls({"Mutate": lambda d: {**d, "seen": True}, "Use": lambda d: d})
    calls.fail["Mutate"] = [KeyError("gone")]
    definition = machine(
        {
            "A": task(
                "Mutate",
                Catch=[{"ErrorEquals": ["States.ALL"], "ResultPath": "$.aError", "Next": "B"}],
                Next="B",
            ),
            "B": task("Use", End=True),
        },
        "A",
    )
    done = asl.interpret(definition, {"x": 1}, calls)
    assert done.output == {"x": 1, "aError": {"Error": "KeyError", "Cause": "'gone'"}}
    assert done.trace == ["A", "B"]


def test_retry_takes_only_the_errors_it_names_with_backoff_capped_and_then_gives_up():
    class Throttled(Exception):
        pass

    calls = Calls({"F": lambda d: "ok"})
    calls.fail["F"] = [Throttled("1"), Throttled("2"), Throttled("3")]
    retry = [
        {
            "ErrorEquals": ["Throttled"],
            "IntervalSeconds": 1,
            "MaxAttempts": 2,
            "BackoffRate": 3,
            "MaxDelaySeconds": 2,
        }
    ]
    slept: list[float] = []
    definition = machine({"A": task("F", Retry=retry, End=True)}, "A")
    with pytest.raises(asl.ExecutionFailed) as info:
        asl.interpret(definition, {}, calls, sleep=slept.append)
    assert slept == [1, 2]  # 1 s, then 3 s capped at 2 s; the third failure is not retried
    assert (info.value.error, info.value.cause) == ("Throttled", "3")
    # an error no retrier names is not retried
    calls.fail["F"] = [ValueError("no")]
    with pytest.raises(asl.ExecutionFailed):
        asl.interpret(definition, {}, calls, sleep=slept.append)
    assert slept == [1, 2]


def test_a_choice_map_and_pass_follow_their_paths():
    calls = Calls({"Double": lambda d: d["v"] * 2})
    item = {"v.$": "$$.Map.Item.Value", "tag.$": "$.tag"}
    definition = machine(
        {
            "Gate": {
                "Type": "Choice",
                "Choices": [
                    {
                        "And": [
                            {"Variable": "$.go", "IsPresent": True},
                            {"Variable": "$.go", "BooleanEquals": True},
                        ],
                        "Next": "Each",
                    }
                ],
                "Default": "Skip",
            },
            "Each": {
                "Type": "Map",
                "ItemsPath": "$.items",
                "ItemSelector": item,
                "MaxConcurrency": 2,
                "ResultPath": "$.out",
                "ItemProcessor": {
                    "StartAt": "Twice",
                    "States": {"Twice": task("Double", End=True)},
                },
                "Next": "Done",
            },
            "Skip": {
                "Type": "Pass",
                "Result": {"skipped": True},
                "ResultPath": "$.out",
                "End": True,
            },
            "Done": {"Type": "Pass", "OutputPath": "$.out", "End": True},
        },
        "Gate",
    )
    ran = asl.interpret(definition, {"go": True, "items": [1, 2, 3], "tag": "t"}, calls)
    assert ran.output == [2, 4, 6]
    assert ran.trace == ["Gate", "Each", "Twice", "Twice", "Twice", "Done"]
    skipped = asl.interpret(definition, {"items": [1]}, calls)
    assert skipped.output == {"items": [1], "out": {"skipped": True}}
    assert skipped.trace == ["Gate", "Skip"]


def test_paths_read_a_model_by_its_wire_names_and_write_into_its_fields():
    state = SearchState(request=SearchRequest(query="q"), config=RunConfig(map_max_concurrency=3))
    assert asl.get_path(state, "$.config.mapMaxConcurrency") == 3
    assert asl.get_path(state, "$.request.query") == "q"
    with pytest.raises(asl.ASLError):  # None is absent, as in the state's wire() form
        asl.get_path(state, "$.cache.hit")
    out = asl.set_path(state, "$.fuseError", {"Error": "E", "Cause": "c"})
    assert out is state and state.fuse_error is not None and state.fuse_error.Error == "E"
    # a field the model does not have: the state becomes its JSON first (a Catch before Fail)
    failed = asl.set_path(state, "$.error", {"Error": "E", "Cause": "c"})
    assert failed["error"] == {"Error": "E", "Cause": "c"} and failed["request"]["query"] == "q"


@pytest.mark.parametrize(
    ("state", "why"),
    [
        ({"Type": "Wait", "Seconds": 1, "End": True}, "type 'Wait'"),
        ({"Type": "Pass", "ResultPath": "$.x", "Credentials": {}, "End": True}, "Credentials"),
        (
            {
                "Type": "Choice",
                "Choices": [{"Variable": "$.x", "StringMatches": "a*", "Next": "A"}],
            },
            "StringMatches",
        ),
        ({"Type": "Pass", "Next": "Nowhere"}, "Nowhere"),
    ],
)
def test_a_definition_outside_the_subset_is_refused_when_loaded(tmp_path: Path, state, why):
    path = tmp_path / "m.asl.json"
    path.write_text(json.dumps({"StartAt": "A", "States": {"A": state}}))
    with pytest.raises(asl.ASLError, match=why):
        asl.load(path)


def test_the_search_asl_is_in_the_subset_and_every_task_has_a_registered_step():
    definition = search_definition()
    assert definition == asl.load(SEARCH_ASL)
    tasks = task_states()
    assert set(tasks.values()) == set(FUNCTIONS)  # no function unregistered, none unused
    assert tasks["ExtractIntentRules"] == tasks["ExtractIntent"] == "ExtractIntentFunction"
    assert tasks["Retrieve"] == "RetrieveFunction"
