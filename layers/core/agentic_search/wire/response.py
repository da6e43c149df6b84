"""A search's answer as the front door returns it: intent, plan, executor output, evidence."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from pydantic import Field

from agentic_search.wire.base import WireModel, wire_keys
from agentic_search.wire.evidence import EvidencePack
from agentic_search.wire.query import IntentState, QueryPlan
from agentic_search.wire.results import QueryExecutorOutput


class ComparedRecord(WireModel):
    """One compared record: id, display name and the compared fields' values."""

    id: str
    name: str
    values: dict[str, Any] = Field(default_factory=dict)


class Comparison(WireModel):
    """A comparison's answer: the named records side by side (``fields`` in order), and for
    each set field the values all of them share (``common``) and those only some have
    (``distinct``: record id -> values)."""

    records: list[ComparedRecord]
    fields: list[str] = Field(default_factory=list)
    common: dict[str, list[Any]] = Field(default_factory=dict)
    distinct: dict[str, dict[str, list[Any]]] = Field(default_factory=dict)


@dataclass
class SearchResponse:
    """A search's intent, plan and executor output."""

    query: str
    domain: str
    intent: IntentState
    plan: QueryPlan
    output: QueryExecutorOutput
    evidence: EvidencePack | None = None
    comparison: Comparison | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)
    paths: dict[str, Any] = field(default_factory=dict)
    """How the answer was made, as the steps noted it: ``cache`` (the result cache lookup),
    ``extractor`` and ``planner`` (LLM, rules or the plan cache, and why) and ``planCache``."""

    def wire(self) -> dict[str, Any]:
        """JSON-able dict: the QueryExecutorOutput plus ``intent`` and ``plan``, and with the
        multi-round executor ``evidencePack`` (evidence, coverage, tokens) and
        ``retrievalReport`` (round by round)."""
        out = self.output.wire()
        out["query"] = self.query
        out["domain"] = self.domain
        out["intent"] = self.intent.wire()
        out["plan"] = self.plan.wire()
        if self.evidence is not None:
            pack = self.evidence.wire()
            out["retrievalReport"] = pack.pop("report")
            out["evidencePack"] = pack
        if self.comparison is not None:
            out["comparison"] = self.comparison.wire()
        out.update(self.paths)
        return out

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> SearchResponse:
        """Parse what :meth:`wire` produced (e.g. a cached or state-machine response); the
        steps' notes (``cache``, ``extractor``, ``planner``, ``planCache``) go to ``paths``,
        other unknown keys are ignored.

        Raises:
            pydantic.ValidationError: when a part does not parse.
        """
        if cls is SearchResponse:  # the intent, plan and evidence pack parsed on first use
            return _ParsedOnUse(wire)
        return cls(
            query=wire["query"],
            domain=wire["domain"],
            intent=_intent(wire),
            plan=_plan(wire),
            output=_output(wire),
            evidence=_evidence(wire),
            comparison=_comparison(wire),
            paths={k: wire[k] for k in PATH_KEYS if k in wire},
        )


def _intent(wire: dict[str, Any]) -> IntentState:
    return IntentState.model_validate(wire["intent"])


def _plan(wire: dict[str, Any]) -> QueryPlan:
    return QueryPlan.model_validate(wire["plan"])


def _output(wire: dict[str, Any]) -> QueryExecutorOutput:
    keys = wire_keys(QueryExecutorOutput)
    return QueryExecutorOutput.model_validate({k: v for k, v in wire.items() if k in keys})


def _evidence(wire: dict[str, Any]) -> EvidencePack | None:
    if "evidencePack" not in wire:
        return None
    return EvidencePack.model_validate(
        {**wire["evidencePack"], "report": wire.get("retrievalReport", {})}
    )


def _comparison(wire: dict[str, Any]) -> Comparison | None:
    return Comparison.model_validate(wire["comparison"]) if wire.get("comparison") else None


#: The parts of a wire response :class:`_ParsedOnUse` parses when first read.
_ON_USE = {"intent": _intent, "plan": _plan, "evidence": _evidence}


class _ParsedOnUse(SearchResponse):
    """A :class:`SearchResponse` read from its wire form (a cached answer) whose intent, plan
    and evidence pack are validated when first read, each then kept: a cache hit's table
    reads none of them, and building their validators was a good part of the hit's time.
    They parse, or raise, as :meth:`SearchResponse.from_wire` does (``wire()`` reads them)."""

    def __init__(self, wire: dict[str, Any]) -> None:
        self._wire = wire
        self._parsed: dict[str, Any] = {}
        super().__init__(
            query=wire["query"],
            domain=wire["domain"],
            intent=_UNPARSED,  # type: ignore[arg-type]
            plan=_UNPARSED,  # type: ignore[arg-type]
            output=_output(wire),
            evidence=_UNPARSED,  # type: ignore[arg-type]
            comparison=_comparison(wire),
            paths={k: wire[k] for k in PATH_KEYS if k in wire},
        )

    def __eq__(self, other: object) -> bool:
        """Equal to any :class:`SearchResponse` with the same fields (parsed or not)."""
        if not isinstance(other, SearchResponse):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in _FIELDS)


def _on_use(name: str) -> property:
    def get(self: _ParsedOnUse) -> Any:
        if name not in self._parsed:
            self._parsed[name] = _ON_USE[name](self._wire)
        return self._parsed[name]

    def put(self: _ParsedOnUse, value: Any) -> None:
        if value is not _UNPARSED:
            self._parsed[name] = value

    return property(get, put)


_UNPARSED = object()
_FIELDS = [f.name for f in fields(SearchResponse)]
for _name in _ON_USE:
    setattr(_ParsedOnUse, _name, _on_use(_name))


#: The steps' notes on how a response was made (see :attr:`SearchResponse.paths`).
PATH_KEYS = ("cache", "extractor", "planner", "planCache")


__all__ = ["PATH_KEYS", "ComparedRecord", "Comparison", "SearchResponse"]
