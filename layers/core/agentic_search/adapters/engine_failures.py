"""How an embedded store's damaged file is reported: one line with the reason and the command
that rebuilds the domain from its catalog (the Qdrant local-mode folders, the Qdrant Edge
shards)."""

from __future__ import annotations


def repair_command(domain: str) -> str:
    """The command that rebuilds ``domain``'s index from its catalog."""
    if domain == "tools":
        return "agentic-search ingest --rebuild  (the bundled catalog; or --rebuild FILE)"
    return f"agentic-search ingest FILE --rebuild --domain {domain}"


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


__all__ = ["damage_message", "is_engine_failure", "repair_command"]
