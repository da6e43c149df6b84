"""A small interpreter of the Amazon States Language subset the search state machine uses.

``statemachine/search.asl.json`` (in this package) is the one description of the search graph:
Step Functions runs it in AWS, and :class:`~agentic_search.pipeline.runner.LocalRunner` runs it
on a laptop through :func:`interpret`, which follows the same states in the same order (the
specification: https://states-language.net/spec.html). The subset, checked when a definition
is loaded (:func:`check`), so a state machine that grows past it fails loudly rather than
running differently here:

* **Task** with ``Parameters`` (``Payload.$``, literal ``FunctionName``), ``InputPath``,
  ``ResultSelector``, ``ResultPath``, ``OutputPath``, ``Retry`` (``ErrorEquals``,
  ``IntervalSeconds``, ``MaxAttempts``, ``BackoffRate``, ``MaxDelaySeconds``,
  ``JitterStrategy``) and ``Catch`` (``ErrorEquals``, ``ResultPath``, ``Next``). The Task is
  handed to a :class:`Tasks` adapter with the function's name and the payload; the result is
  ``{"Payload": result}`` as from ``arn:aws:states:::lambda:invoke``.
* **Choice** with ``Variable`` rules (``IsPresent``, ``IsNull``, ``BooleanEquals``,
  ``StringEquals``, ``NumericEquals``, ``NumericLessThan(Equals)``,
  ``NumericGreaterThan(Equals)``), ``And`` / ``Or`` / ``Not`` and ``Default``.
* **Map** (inline) with ``ItemsPath``, ``ItemSelector`` (``$$.Map.Item.Value`` /
  ``$$.Map.Item.Index``), ``MaxConcurrency(Path)``, ``ItemProcessor`` (or ``Iterator``),
  ``ResultPath``, ``OutputPath``; the items run through the adapter's ``map``.
* **Pass** with ``Parameters`` / ``Result``, ``ResultPath``, ``InputPath``, ``OutputPath``.
* **Fail** with ``Error`` / ``Cause`` or ``ErrorPath`` / ``CausePath``: raises
  :class:`ExecutionFailed`. **Succeed**.

Paths are the reference-path subset: ``$``, ``$.a.b`` and ``$$.a.b`` (the context object),
no filters or wildcards. The data may be JSON (dicts and lists) or pydantic models, so the
in-process interpreter passes the steps' own objects from state to state: a model's field is read by
its wire name (its alias) and a field left ``None`` is absent, as in its ``wire()`` form; a
value written into a model's field is validated into that field's type; a model that has no
such field becomes its wire dict first (a Catch that adds ``$.error`` before a Fail state).

Errors are matched by name: an exception's is its class name (``States.ALL`` and
``States.TaskFailed`` match any Task error); the Cause is its message.
"""

from __future__ import annotations

import copy
import json
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, TypeAdapter

__all__ = [
    "ASLError",
    "Execution",
    "ExecutionFailed",
    "Tasks",
    "check",
    "function_of",
    "get_path",
    "interpret",
    "load",
    "set_path",
]

_ABSENT = object()


class ASLError(ValueError):
    """A definition outside the supported subset, or a path that cannot be read or written
    (Step Functions' ``States.Runtime``)."""


class ExecutionFailed(RuntimeError):
    """The execution reached a Fail state (or an error no Catch handled): ``error`` and ``cause``
    as Step Functions reports them for a FAILED execution."""

    def __init__(self, error: str, cause: str) -> None:
        super().__init__(f"{error}: {cause}")
        self.error = error
        self.cause = cause


class Tasks(Protocol):
    """What an execution calls: the Task functions and the Map's item runner."""

    def call(self, function: str, payload: Any) -> Any:
        """Run the function named ``function`` on ``payload``; return its result."""
        ...

    def keep(self, data: Any) -> Any:
        """A copy of a Task's input to restore if the Task fails (a Catch hands the input
        on); the in-process adapter copies a model by its JSON."""
        ...

    def restore(self, kept: Any) -> Any:
        """The input :meth:`keep` copied."""
        ...

    def map(self, run: Callable[[Any], Any], items: Sequence[Any], concurrency: int) -> list:
        """``[run(item) for item in items]``, in order, at most ``concurrency`` at a time
        (0: unbounded)."""
        ...


# ----- loading and checking ------------------------------------------------------------------

_COMMON = {"Type", "Comment", "Next", "End", "InputPath", "OutputPath"}
_ALLOWED = {
    "Task": _COMMON
    | {"Resource", "Parameters", "ResultSelector", "ResultPath", "Retry", "Catch"}
    | {"TimeoutSeconds", "HeartbeatSeconds"},
    "Choice": {"Type", "Comment", "Choices", "Default", "InputPath", "OutputPath"},
    "Map": _COMMON
    | {"ItemsPath", "ItemSelector", "Parameters", "MaxConcurrency", "MaxConcurrencyPath"}
    | {"ItemProcessor", "Iterator", "ResultPath", "ResultSelector"},
    "Pass": _COMMON | {"Parameters", "Result", "ResultPath"},
    "Fail": {"Type", "Comment", "Error", "Cause", "ErrorPath", "CausePath"},
    "Succeed": {"Type", "Comment", "InputPath", "OutputPath"},
}
_COMPARATORS = {
    "IsPresent",
    "IsNull",
    "BooleanEquals",
    "StringEquals",
    "NumericEquals",
    "NumericLessThan",
    "NumericLessThanEquals",
    "NumericGreaterThan",
    "NumericGreaterThanEquals",
}
_LAMBDA_INVOKE = "arn:aws:states:::lambda:invoke"


def load(path: Path, substitutions: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The definition at ``path`` with each ``${Name}`` replaced from ``substitutions``
    (the template's ``DefinitionSubstitutions``; by default ``${XFunctionArn}`` becomes
    ``XFunction``, the function the template's ``!GetAtt XFunction.Arn`` names), checked by
    :func:`check`.

    Raises:
        OSError: when the file cannot be read.
        ASLError: for a definition outside the supported subset, or a substitution left over.
    """
    text = path.read_text(encoding="utf-8")
    definition = json.loads(text)
    subs = dict(substitutions or {})

    def sub(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: sub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [sub(v) for v in value]
        if isinstance(value, str) and value.startswith("${") and value.endswith("}"):
            name = value[2:-1]
            if name in subs:
                return subs[name]
            if substitutions is None and name.endswith("FunctionArn"):
                return name.removesuffix("Arn")
            raise ASLError(f"no substitution for {value}")
        return value

    definition = sub(definition)
    check(definition)
    return definition


def check(machine: Mapping[str, Any]) -> None:
    """Check that ``machine`` (a definition or a Map's processor) uses only the supported
    subset and that every ``Next`` / ``Default`` / ``StartAt`` names a state.

    Raises:
        ASLError: naming the state and the field outside the subset.
    """
    states = machine.get("States") or {}
    names = set(states)
    if machine.get("StartAt") not in names:
        raise ASLError(f"StartAt {machine.get('StartAt')!r} names no state")
    for name, state in states.items():
        kind = state.get("Type")
        if kind not in _ALLOWED:
            raise ASLError(f"state {name}: type {kind!r} is outside the supported subset")
        extra = set(state) - _ALLOWED[kind]
        if extra:
            raise ASLError(f"state {name}: {sorted(extra)} outside the supported subset")
        targets = [state.get("Next"), state.get("Default")]
        targets += [c.get("Next") for c in state.get("Catch", [])]
        for rule in state.get("Choices", []):
            targets.append(rule.get("Next"))
            _check_rule(name, rule)
        for target in targets:
            if target is not None and target not in names:
                raise ASLError(f"state {name}: Next {target!r} names no state")
        if kind == "Task" and state.get("Resource") != _LAMBDA_INVOKE:
            raise ASLError(f"state {name}: only {_LAMBDA_INVOKE} Tasks are supported")
        if kind == "Map":
            processor = state.get("ItemProcessor") or state.get("Iterator")
            if processor is None:
                raise ASLError(f"state {name}: a Map needs an ItemProcessor")
            mode = (processor.get("ProcessorConfig") or {}).get("Mode", "INLINE")
            if mode != "INLINE":
                raise ASLError(f"state {name}: only INLINE Maps are supported")
            check(processor)


def _check_rule(state: str, rule: Mapping[str, Any]) -> None:
    if "And" in rule or "Or" in rule:
        for sub in rule.get("And") or rule.get("Or"):
            _check_rule(state, sub)
        return
    if "Not" in rule:
        _check_rule(state, rule["Not"])
        return
    ops = set(rule) - {"Variable", "Next"}
    if "Variable" not in rule or len(ops) != 1 or not ops <= _COMPARATORS:
        raise ASLError(f"state {state}: Choice rule {sorted(ops)} outside the supported subset")


def function_of(state: Mapping[str, Any]) -> str | None:
    """The function a Task state invokes (its ``Parameters.FunctionName``), else None."""
    if state.get("Type") != "Task":
        return None
    return (state.get("Parameters") or {}).get("FunctionName")


# ----- paths -----------------------------------------------------------------------------------


@cache
def _aliases(cls: type[BaseModel]) -> dict[str, str]:
    """Wire name (alias, else field name) -> attribute name, for ``cls``'s fields."""
    out: dict[str, str] = {}
    for attr, info in cls.model_fields.items():
        out[attr] = attr
        out[info.alias or attr] = attr
    return out


@cache
def _adapter(cls: type[BaseModel], attr: str) -> TypeAdapter[Any]:
    return TypeAdapter(cls.model_fields[attr].annotation)


def _child(data: Any, key: str) -> Any:
    if isinstance(data, BaseModel):
        attr = _aliases(type(data)).get(key)
        value = getattr(data, attr) if attr is not None else None
        return _ABSENT if value is None else value
    if isinstance(data, Mapping):
        return data.get(key, _ABSENT)
    return _ABSENT


@cache
def _steps(path: str) -> tuple[str, ...]:
    """The keys of reference path ``path`` (parsed once per path: a run reads the same few)."""
    if path == "$" or path == "$$":
        return ()
    head, _, rest = path.partition(".")
    if head not in ("$", "$$") or not rest or any(c in rest for c in "[]*?@"):
        raise ASLError(f"path {path!r} is outside the supported subset ($.a.b)")
    return tuple(rest.split("."))


def _lookup(data: Any, path: str, context: Any) -> Any:
    """The value at ``path`` or ``_ABSENT``."""
    if path == "$":
        return data
    value = context if path.startswith("$$") else data
    for key in _steps(path):
        value = _child(value, key)
        if value is _ABSENT:
            return _ABSENT
    return value


def get_path(data: Any, path: str, context: Any = None) -> Any:
    """The value at reference path ``path`` in ``data`` (``$$...`` in ``context``).

    Raises:
        ASLError: when the path is outside the subset or names nothing in the data.
    """
    value = _lookup(data, path, context)
    if value is _ABSENT:
        raise ASLError(f"the path {path} names nothing in the state")
    return value


def set_path(data: Any, path: str | None, value: Any) -> Any:
    """``data`` with ``value`` at reference path ``path`` (``$``: ``value`` itself; ``None``,
    a JSON null ``ResultPath``: ``data`` unchanged). Missing objects on the way are created.
    A model's field takes the value validated into its type; a model without that field
    becomes its wire dict (JSON) first.

    Raises:
        ASLError: when the path is outside the subset or crosses a value that is not an
            object.
    """
    if path is None:
        return data
    if path == "$":
        return value
    keys = _steps(path)
    if not keys:
        return value
    if isinstance(data, BaseModel) and keys[0] not in _aliases(type(data)):
        data = data.model_dump(mode="json", by_alias=True, exclude_none=True)
    parent = data
    for key in keys[:-1]:
        child = _child(parent, key)
        if child is _ABSENT:
            child = {}
            _put(parent, key, child, path)
            child = _child(parent, key)
        parent = child
    _put(parent, keys[-1], value, path)
    return data


def _put(parent: Any, key: str, value: Any, path: str) -> None:
    if isinstance(parent, BaseModel):
        attr = _aliases(type(parent)).get(key)
        if attr is None:
            raise ASLError(f"the path {path}: {type(parent).__name__} has no field {key}")
        setattr(parent, attr, _adapter(type(parent), attr).validate_python(value))
    elif isinstance(parent, dict):
        parent[key] = value
    else:
        raise ASLError(f"the path {path} crosses a value that is not an object")


def _build(template: Any, data: Any, context: Any) -> Any:
    """A Parameters / ItemSelector / ResultSelector template filled from ``data``: a key
    ending in ``.$`` takes the value at its path, everything else is a literal."""
    if isinstance(template, dict):
        out: dict[str, Any] = {}
        for key, value in template.items():
            if key.endswith(".$"):
                out[key[:-2]] = get_path(data, value, context)
            else:
                out[key] = _build(value, data, context)
        return out
    if isinstance(template, list):
        return [_build(v, data, context) for v in template]
    return template


# ----- Choice rules ----------------------------------------------------------------------------


def _matches(rule: Mapping[str, Any], data: Any) -> bool:
    if "And" in rule:
        return all(_matches(r, data) for r in rule["And"])
    if "Or" in rule:
        return any(_matches(r, data) for r in rule["Or"])
    if "Not" in rule:
        return not _matches(rule["Not"], data)
    value = _lookup(data, rule["Variable"], None)
    [(op, expected)] = [(k, v) for k, v in rule.items() if k not in ("Variable", "Next")]
    if op == "IsPresent":
        return (value is not _ABSENT) == expected
    if value is _ABSENT:
        raise ASLError(f"Choice: the path {rule['Variable']} names nothing in the state")
    if op == "IsNull":
        return (value is None) == expected
    if op == "BooleanEquals":
        return isinstance(value, bool) and value == expected
    if op == "StringEquals":
        return isinstance(value, str) and value == expected
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return {
        "NumericEquals": value == expected,
        "NumericLessThan": value < expected,
        "NumericLessThanEquals": value <= expected,
        "NumericGreaterThan": value > expected,
        "NumericGreaterThanEquals": value >= expected,
    }[op]


# ----- the interpreter -------------------------------------------------------------------------


def _error_name(exc: BaseException) -> str:
    return exc.error if isinstance(exc, ExecutionFailed) else type(exc).__name__


def _cause(exc: BaseException) -> str:
    return (exc.cause if isinstance(exc, ExecutionFailed) else str(exc))[:1000]


def _handles(error_equals: Sequence[str], name: str) -> bool:
    return (
        "States.ALL" in error_equals
        or "States.TaskFailed" in error_equals
        or (name in error_equals)
    )


@dataclass
class Execution:
    """One execution's record: the states entered, in order (a Map's items in item order,
    each item's states together), and the execution's output."""

    trace: list[str] = field(default_factory=list)
    output: Any = None


@dataclass
class _Run:
    tasks: Tasks
    sleep: Callable[[float], None]

    def machine(
        self, machine: Mapping[str, Any], data: Any, execution: Execution, context: Any
    ) -> Any:
        states = machine["States"]
        name: str | None = machine["StartAt"]
        while name is not None:
            state = states[name]
            execution.trace.append(name)
            kind = state["Type"]
            if kind == "Fail":
                raise ExecutionFailed(*self.fail(state, data))
            if kind == "Choice":
                name = self.choose(state, data)
            elif kind == "Succeed":
                return _output(state, _input(state, data))
            elif kind == "Task":
                data, name = self.task(state, data, states)
            elif kind == "Map":
                data, name = self.map(state, data, context, execution)
            else:  # Pass
                data, name = self.pass_(state, data, context)
        return data

    @staticmethod
    def fail(state: Mapping[str, Any], data: Any) -> tuple[str, str]:
        error, cause = state.get("Error"), state.get("Cause")
        if error is None and "ErrorPath" in state:
            error = _text(_lookup(data, state["ErrorPath"], None))
        if cause is None and "CausePath" in state:
            cause = _text(_lookup(data, state["CausePath"], None))
        return error or "States.Failed", cause or ""

    @staticmethod
    def choose(state: Mapping[str, Any], data: Any) -> str:
        view = _input(state, data)
        for rule in state.get("Choices", []):
            if _matches(rule, view):
                return rule["Next"]
        if "Default" not in state:
            raise ExecutionFailed("States.NoChoiceMatched", "no Choice rule matched")
        return state["Default"]

    def task(
        self, state: Mapping[str, Any], data: Any, states: Mapping[str, Any]
    ) -> tuple[Any, str | None]:
        catches = state.get("Catch", [])
        # a Catch hands the Task's input on: keep a copy, unless every Catch ends the execution
        # at a Fail state, which reads only the error it is given
        hands_on = any(states[c["Next"]]["Type"] != "Fail" for c in catches)
        kept = self.tasks.keep(data) if hands_on else None
        params = _build(state.get("Parameters") or {}, _input(state, data), None)
        function, payload = params.get("FunctionName"), params.get("Payload")
        attempts: dict[int, int] = {}
        while True:
            try:
                result: Any = {"Payload": self.tasks.call(function, payload)}
                break
            except Exception as exc:
                name = _error_name(exc)
                delay = self.retry_delay(state.get("Retry", []), name, attempts)
                if delay is not None:
                    self.sleep(delay)
                    continue
                for catch in catches:
                    if _handles(catch["ErrorEquals"], name):
                        error = {"Error": name, "Cause": _cause(exc)}
                        restored = self.tasks.restore(kept) if hands_on else data
                        out = set_path(restored, catch.get("ResultPath", "$"), error)
                        return out, catch["Next"]
                raise ExecutionFailed(name, _cause(exc)) from exc
        if "ResultSelector" in state:
            result = _build(state["ResultSelector"], result, None)
        return _finish(state, data, result), state.get("Next")

    @staticmethod
    def retry_delay(
        retriers: Sequence[Mapping[str, Any]], name: str, attempts: dict[int, int]
    ) -> float | None:
        """Seconds to wait before the next attempt, or None when no retrier takes it (the
        first retrier whose ErrorEquals names the error decides; each counts its own
        attempts)."""
        for i, retrier in enumerate(retriers):
            if not _handles(retrier["ErrorEquals"], name):
                continue
            n = attempts.get(i, 0)
            if n >= retrier.get("MaxAttempts", 3):
                return None
            attempts[i] = n + 1
            delay = retrier.get("IntervalSeconds", 1) * retrier.get("BackoffRate", 2.0) ** n
            delay = min(delay, retrier.get("MaxDelaySeconds", delay))
            return random.uniform(0, delay) if retrier.get("JitterStrategy") == "FULL" else delay
        return None

    def map(
        self, state: Mapping[str, Any], data: Any, context: Any, execution: Execution
    ) -> tuple[Any, str | None]:
        view = _input(state, data)
        items = get_path(view, state.get("ItemsPath", "$"), context)
        selector = state.get("ItemSelector", state.get("Parameters"))
        if "MaxConcurrencyPath" in state:
            concurrency = int(get_path(view, state["MaxConcurrencyPath"], context))
        else:
            concurrency = int(state.get("MaxConcurrency", 0))
        processor = state.get("ItemProcessor") or state["Iterator"]
        runs = [Execution() for _ in items]

        def one(index: int) -> Any:
            ctx = {"Map": {"Item": {"Value": items[index], "Index": index}}}
            value = items[index] if selector is None else _build(selector, view, ctx)
            return self.machine(processor, value, runs[index], ctx)

        results = self.tasks.map(one, range(len(items)), concurrency)
        for run in runs:
            execution.trace.extend(run.trace)
        if "ResultSelector" in state:
            results = _build(state["ResultSelector"], results, None)
        return _finish(state, data, results), state.get("Next")

    @staticmethod
    def pass_(state: Mapping[str, Any], data: Any, context: Any) -> tuple[Any, str | None]:
        view = _input(state, data)
        if "Parameters" in state:
            result = _build(state["Parameters"], view, context)
        elif "Result" in state:
            result = copy.deepcopy(state["Result"])
        else:
            result = view
        return _finish(state, data, result), state.get("Next")


def _text(value: Any) -> str | None:
    return None if value is _ABSENT or value is None else str(value)


def _input(state: Mapping[str, Any], data: Any) -> Any:
    path = state.get("InputPath", "$")
    return None if path is None else get_path(data, path)


def _output(state: Mapping[str, Any], data: Any) -> Any:
    path = state.get("OutputPath", "$")
    return None if path is None else get_path(data, path)


def _finish(state: Mapping[str, Any], data: Any, result: Any) -> Any:
    return _output(state, set_path(data, state.get("ResultPath", "$"), result))


def interpret(
    definition: Mapping[str, Any],
    data: Any,
    tasks: Tasks,
    sleep: Callable[[float], None] = time.sleep,
    start_at: str | None = None,
) -> Execution:
    """Run ``definition`` (from :func:`load`) on ``data``, from ``start_at`` (default its
    ``StartAt``); ``tasks`` runs the functions and the Map's items. The returned
    :class:`Execution` holds the output and the states entered.

    Raises:
        ExecutionFailed: at a Fail state, or for a Task error no Catch handles (its class
            name and message).
        ASLError: for a path that names nothing (Step Functions' ``States.Runtime``).
    """
    machine = dict(definition)
    if start_at is not None:
        if start_at not in machine["States"]:
            raise ASLError(f"no state {start_at!r} to start at")
        machine["StartAt"] = start_at
    record = Execution()
    record.output = _Run(tasks, sleep).machine(machine, data, record, None)
    return record
