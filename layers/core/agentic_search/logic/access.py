"""Per-record access control: which records a caller may read, as one policy every source,
lookup, walk, cache key and answer goes through (docs/guides/access-control.md).

A domain declares ``access: {field, default, admin, restricted}``
(:class:`~agentic_search.logic.schema.AccessSpec`). A record is readable by a caller when

* the caller holds the domain's ``admin`` principal (it reads everything), or
* the record's access list shares a principal with the caller, or it has no (or an empty)
  list and ``default`` is ``public``,

and, for each restricted class (a field holding one of its values), the caller holds the
class's claim. The stores receive the rule as an :class:`AccessFilter` among the hard filters
and compile it into their own query (a Qdrant payload filter, a MongoDB query document), so
it is pushed down like any hard constraint; :meth:`AccessPolicy.admits` is the same rule in
Python, for records read by id. Corpus statistics (BM25's IDF and average length, the set of
known terms) stay global: they tell term frequencies, never a record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from agentic_search.logic.schema import AccessSpec, DomainSchema, RestrictedClass
from agentic_search.wire import Caller, Filter, IntentState


class AccessFilter(Filter):
    """The caller's access rule as a hard filter (made in process only: never parsed from a
    request, so a request cannot name it). ``field`` is the access field, ``value`` the
    caller's principals; ``public`` admits records without a list; ``denied`` are the
    restricted classes the caller lacks the claim of (``(field, values)``: left out)."""

    public: bool = False
    denied: list[tuple[str, list[str]]] = Field(default_factory=list)


@dataclass(frozen=True)
class AccessPolicy:
    """What one caller may read in one domain (``spec`` None: no access field, all of it)."""

    spec: AccessSpec | None
    caller: Caller

    @classmethod
    def of(cls, schema: DomainSchema, caller: Caller | None) -> AccessPolicy:
        """The policy of ``caller`` (None: anonymous) in ``schema``'s domain."""
        return cls(schema.access, caller or Caller())

    @property
    def unrestricted(self) -> bool:
        """True when nothing is filtered: the domain declares no access, or the caller is
        its administrator."""
        spec = self.spec
        return spec is None or (spec.admin is not None and self.caller.holds(spec.admin))

    @property
    def cache_part(self) -> dict[str, str]:
        """The part of a cache key this policy adds: none when the domain declares no access
        (one shared key, as before), else the caller's effective access set."""
        if self.spec is None:
            return {}
        return {"access": "admin" if self.unrestricted else self.caller.key}

    def denied_classes(self) -> list[RestrictedClass]:
        """The restricted classes whose claim the caller lacks (none when unrestricted)."""
        if self.spec is None or self.unrestricted:
            return []
        return [c for c in self.spec.restricted if not self.caller.holds(c.claim)]

    def hard_filter(self) -> AccessFilter | None:
        """The rule as a hard filter for the stores (None when unrestricted)."""
        spec = self.spec
        if spec is None or self.unrestricted:
            return None
        return AccessFilter(
            field=spec.field,
            operator="in",
            value=list(self.caller.principals),
            must=True,
            public=spec.default == "public",
            denied=[(c.field, list(c.values)) for c in self.denied_classes()],
        )

    def admits(self, payload: Mapping[str, Any] | None) -> bool:
        """Whether the caller may read the record whose payload is ``payload`` (the same rule
        the stores compile from :meth:`hard_filter`)."""
        spec = self.spec
        if spec is None or self.unrestricted:
            return True
        if payload is None:
            return False
        acl = payload.get(spec.field)
        listed = [acl] if isinstance(acl, str) else list(acl or [])
        if listed:
            if not set(listed) & set(self.caller.principals):
                return False
        elif spec.default != "public":
            return False
        for cls in self.denied_classes():
            value = payload.get(cls.field)
            held = value if isinstance(value, list) else [value]
            if any(v in cls.values for v in held):
                return False
        return True

    def fields(self) -> list[str]:
        """The payload fields :meth:`admits` reads."""
        spec = self.spec
        if spec is None:
            return []
        return [spec.field, *(c.field for c in spec.restricted)]

    def refusals(
        self,
        schema: DomainSchema,
        intent: IntentState | None,
        added: Sequence[Filter] = (),
        words: Sequence[str] = (),
    ) -> list[str]:
        """The "not permitted" reasons of a query: one per restricted class it asks for whose
        claim the caller lacks. A query asks for a class through a constraint or an added
        filter (``added``) on its field naming one of its values, a vocabulary match of the
        field's vocabulary, or one of its values among the query's ``words``. Depends on the
        query and the caller only, never on which records exist."""
        out: list[str] = []
        lowered = {w.casefold() for w in words}
        for cls in self.denied_classes():
            asked = any(_asks(f, cls) for f in [*(intent.constraints if intent else []), *added])
            vocab = (schema.fields.get(cls.field) or _NO_FIELD).vocabulary
            if intent is not None and vocab is not None:
                asked = asked or any(v in cls.values for v in intent.matches.get(vocab, []))
            asked = asked or any(v.casefold() in lowered for v in cls.values)
            if asked:
                out.append(
                    f"not permitted: records with {cls.field} {', '.join(cls.values)} need "
                    f"the {cls.claim!r} claim, which this caller does not hold"
                )
        return out


class _NoField:
    vocabulary: str | None = None


_NO_FIELD = _NoField()


def _asks(f: Filter, cls: RestrictedClass) -> bool:
    """Whether filter ``f`` selects records of restricted class ``cls``."""
    if f.field != cls.field or f.operator in ("ne", "nin"):
        return False
    values = f.value if isinstance(f.value, list) else [f.value]
    return any(v in cls.values for v in values)


#: What the stores match when the caller holds no principal (no record lists it).
NO_PRINCIPAL = "\x00no-principal"


def principals_of(rule: AccessFilter) -> list[str]:
    """The principals a store matches the access list against (never empty: a caller with
    none matches :data:`NO_PRINCIPAL`, which no list holds)."""
    return list(rule.value) or [NO_PRINCIPAL]


def split_access(filters: Sequence[Filter]) -> tuple[list[Filter], AccessFilter | None]:
    """``filters`` without their access filter, and that filter (None when there is none)."""
    rest: list[Filter] = []
    found: AccessFilter | None = None
    for f in filters:
        if isinstance(f, AccessFilter):
            found = f
        else:
            rest.append(f)
    return rest, found


__all__ = ["NO_PRINCIPAL", "AccessFilter", "AccessPolicy", "principals_of", "split_access"]
