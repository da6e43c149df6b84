"""Leave parts of an understood intent out (``SearchRequest.drop``): what the search page does
when a person removes one of the chips that show how the query was read.

Each part is named by a string a client can build from the intent alone (no formatting of
values): ``filter:FIELD:OP`` (every constraint on FIELD with operator OP), ``prefer:VOCAB=VALUE``
(one soft preference of ``matches``), ``entity:ID`` (the reference record and the entity links
to ID) and ``exclude:ID`` (an excluded record). A name that matches nothing changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentic_search.wire import Filter, IntentState


def without(intent: IntentState, drop: Iterable[str]) -> IntentState:
    """A copy of ``intent`` without the parts named in ``drop`` (see the module docstring).

    Dropping the reference record of an ``alternative-to`` query also drops its reference
    profile and turns the goal into ``find``: without it there is nothing to be an
    alternative to.
    """
    filters: set[tuple[str, str]] = set()
    prefer: set[tuple[str, str]] = set()
    entities: set[str] = set()
    excluded: set[str] = set()
    for item in drop:
        kind, _, rest = item.partition(":")
        if kind == "filter":
            field, _, op = rest.partition(":")
            filters.add((field, op))
        elif kind == "prefer":
            vocab, _, value = rest.partition("=")
            prefer.add((vocab, value))
        elif kind == "entity":
            entities.add(rest)
        elif kind == "exclude":
            excluded.add(rest)
    out = intent.model_copy(deep=True)
    out.constraints = [f for f in out.constraints if (f.field, f.operator) not in filters]
    matches = {k: [v for v in vs if (k, v) not in prefer] for k, vs in out.matches.items()}
    out.matches = {k: vs for k, vs in matches.items() if vs}
    out.excluded_tools = [t for t in out.excluded_tools if t not in excluded]
    out.entities = [e for e in out.entities if not (e.kind == "entity" and e.id in entities)]
    if out.reference_tool is not None and out.reference_tool in entities:
        out.reference_tool = out.reference_tool_name = None
        out.reference_profile = {}
        if out.primary_goal == "alternative-to":
            out.primary_goal = "find"
    return out


def with_filters(intent: IntentState, filters: Iterable[Filter]) -> IntentState:
    """A copy of ``intent`` with ``filters`` (``SearchRequest.filters``, validated against the
    schema) among its constraints, each replacing the intent's own constraints on the same
    field and operator (so applying them twice changes nothing); a filter without an origin
    is marked as the request's."""
    added = [f if f.origin else f.model_copy(update={"origin": "request"}) for f in filters]
    keys = {(f.field, f.operator) for f in added}
    out = intent.model_copy(deep=True)
    out.constraints = [f for f in out.constraints if (f.field, f.operator) not in keys] + added
    return out


__all__ = ["with_filters", "without"]
