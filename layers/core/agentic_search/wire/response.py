"""A search's answer as the front door returns it: intent, plan, executor output, evidence."""

from __future__ import annotations

from dataclasses import dataclass, field
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
        out_keys = wire_keys(QueryExecutorOutput)
        pack = None
        if "evidencePack" in wire:
            pack = EvidencePack.model_validate(
                {**wire["evidencePack"], "report": wire.get("retrievalReport", {})}
            )
        return cls(
            query=wire["query"],
            domain=wire["domain"],
            intent=IntentState.model_validate(wire["intent"]),
            plan=QueryPlan.model_validate(wire["plan"]),
            output=QueryExecutorOutput.model_validate(
                {k: v for k, v in wire.items() if k in out_keys}
            ),
            evidence=pack,
            comparison=Comparison.model_validate(wire["comparison"])
            if wire.get("comparison")
            else None,
            paths={k: wire[k] for k in PATH_KEYS if k in wire},
        )


#: The steps' notes on how a response was made (see :attr:`SearchResponse.paths`).
PATH_KEYS = ("cache", "extractor", "planner", "planCache")


__all__ = ["PATH_KEYS", "ComparedRecord", "Comparison", "SearchResponse"]
