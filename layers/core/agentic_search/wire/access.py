"""The caller's principals: who is asking, as a value object that crosses the state machine.

A :class:`Caller` is the set of principals (user ids, groups, tenants, claims) the caller was
verified as by its front door: the HTTP API's JWT authorizer claims, ``serve``'s token table,
the CLI's ``--as``. Its :attr:`Caller.key` is a stable hash of the sorted principals: the
*effective access set* the result and plan caches are keyed by. No principals is a caller
that reads only public records.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Annotated

from pydantic import Field, StringConstraints, field_validator

from agentic_search.wire.base import WireModel

#: At most this many principals per caller (a token with more is refused at its front door).
MAX_PRINCIPALS = 100

Principal = Annotated[str, StringConstraints(min_length=1, max_length=200, strip_whitespace=True)]


class Caller(WireModel):
    """A verified caller's principals, sorted and without duplicates (``[]``: anonymous, public
    records only). Set only by a front door after verification, never from a request body."""

    principals: list[Principal] = Field(default_factory=list, max_length=MAX_PRINCIPALS)

    @field_validator("principals")
    @classmethod
    def _sorted(cls, v: list[str]) -> list[str]:
        return sorted(set(v))

    @classmethod
    def of(cls, principals: Iterable[str]) -> Caller:
        """The caller holding ``principals`` (order and repeats do not matter).

        Raises:
            pydantic.ValidationError: for an empty or over-long principal, or too many.
        """
        return cls(principals=list(principals))

    @property
    def key(self) -> str:
        """Hex SHA-256 (first 32 characters) of the sorted principals, one per line: the
        effective access set (equal for two callers with the same principals)."""
        blob = "\n".join(self.principals).encode("utf-8")
        return hashlib.sha256(blob).hexdigest()[:32]

    def holds(self, principal: str | None) -> bool:
        """Whether ``principal`` is one of the caller's (False for None)."""
        return principal is not None and principal in self.principals


#: The caller with no principals: public records only.
ANONYMOUS = Caller()

__all__ = ["ANONYMOUS", "MAX_PRINCIPALS", "Caller", "Principal"]
