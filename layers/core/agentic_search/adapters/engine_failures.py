"""How an embedded store's damaged file is reported: one line with the reason and the command
that rebuilds the domain from its catalog (the Qdrant local-mode folders, the Qdrant Edge
shards)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentic_search.logic.schema import DomainSchema


def repair_command(domain: str) -> str:
    """The command that rebuilds a domain's index from its catalog; ``domain`` is what
    ``--domain`` takes to name it (a name, or the path of its YAML:
    :func:`~agentic_search.logic.schema.domain_argument`)."""
    if domain == "tools":
        return "agentic-search ingest --rebuild  (the bundled catalog; or --rebuild FILE)"
    return f"agentic-search ingest FILE --rebuild --domain {domain}"


def mismatch_message(what: str, problems: list[str], domain: str) -> str:
    """``<what> does not match its schema and embedder: <problems>; ...``: one line naming
    the rebuild (:func:`repair_command`) and the other way out, the embedder it was built
    with. ``domain`` as for :func:`repair_command`."""
    return (
        f"{what} does not match its schema and embedder ({'; '.join(problems)}): an aspect "
        f"added or an embedder changed since it was built; rebuild it with "
        f"{repair_command(domain)}, or switch back to the embedder it was built with"
    )


def missing_vectors(schema: DomainSchema, vectors: Mapping[str, Any]) -> list[str]:
    """The problems of a collection whose named ``vectors`` lack some aspect of ``schema``
    (``missing named vector 'x'``), in the schema's order; empty when none is missing. An
    aspect that reads only what an enrichment writes is not required: a collection built
    before the domain declared it opens and is searched as before (enriching it needs a
    rebuild, which creates the vector)."""
    optional = set(schema.enriched_aspects)
    return [
        f"missing named vector {a!r}"
        for a in schema.aspect_names
        if a not in vectors and a not in optional
    ]


def damage_message(what: str, exc: BaseException, domain: str) -> str:
    """``<what> cannot be read (<Type>: <reason>); rebuild it with <command>``, on one line
    (the reason's white space folded, at most 200 characters)."""
    reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
    return f"{what} cannot be read ({reason}); rebuild it with {repair_command(domain)}"


def is_engine_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is an embedded engine's failure: any ``Exception``, or a Rust panic,
    which pyo3 raises as ``PanicException``, a ``BaseException`` that escapes ``except
    Exception`` (Qdrant Edge 0.9 panics opening some damaged files: a truncated
    ``status.dat``). ``KeyboardInterrupt``, ``SystemExit`` and the like are not."""
    return isinstance(exc, Exception) or type(exc).__name__ == "PanicException"


__all__ = [
    "damage_message",
    "is_engine_failure",
    "mismatch_message",
    "missing_vectors",
    "repair_command",
]
