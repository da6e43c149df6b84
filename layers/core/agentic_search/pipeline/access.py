"""The caller's view of a domain: dependencies whose store, keyword index and structured store
read only the records the caller may read (:mod:`agentic_search.logic.access`).

:func:`caller_view` wraps the three ports once per step: every ranked query (dense, BM25,
hybrid, structured, scroll) gets the caller's :class:`~agentic_search.logic.access.AccessFilter`
among its hard filters, which each engine compiles into its own query (pushed down, so a
``top_k`` is the caller's top ``k``); every read by id (hydration, ``entity_state``, the graph
walk's frontier, stored vectors) drops the records the caller may not read, so a walk runs
on the caller's subgraph and a named record the caller cannot read is absent exactly as a
missing one is. The catalog's names (linking, "did you mean", comparisons) are read through
the view and kept per effective access set (:meth:`ProcessCaches.view`). A domain without an
access field, or its administrator, gets the dependencies unchanged.

Corpus statistics stay global: BM25's IDF and average length and term document counts
(``sparse_counts``) are the whole collection's (they tell term frequencies, never a record, as
in Lucene). The known terms (what reads as a typo) are the caller's records'.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from agentic_search.dependencies import PORTS, Dependencies
from agentic_search.logic.access import AccessFilter, AccessPolicy
from agentic_search.logic.bm25 import term_index
from agentic_search.logic.schema import DomainSchema
from agentic_search.wire import Caller, Filter, ScoredRecord, SparseVector, StoredRecord


class _Delegate:
    """Forwards what it does not define to the wrapped adapter (built on first use)."""

    def __init__(self, inner: Callable[[], Any], rule: AccessFilter, policy: AccessPolicy):
        self._inner = inner
        self._rule = rule
        self._policy = policy

    @property
    def inner(self) -> Any:
        """The wrapped adapter."""
        return self._inner()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def _with_rule(self, filters: Sequence[Filter]) -> list[Filter]:
        return [*filters, self._rule]


class AccessStore(_Delegate):
    """A :class:`~agentic_search.ports.VectorStore` that reads only the caller's records."""

    def compile_filter(
        self, schema: DomainSchema, filters: Sequence[Filter], exclude_ids: Sequence[str] = ()
    ) -> Any:
        """The engine filter of ``filters``, the excluded ids and the caller's access rule."""
        return self.inner.compile_filter(schema, self._with_rule(filters), exclude_ids)

    def _flt(self, schema: DomainSchema, flt: Any) -> Any:
        # a filter compiled by this store carries the rule already; None means "all"
        return flt if flt is not None else self.compile_filter(schema, [])

    def scroll(
        self, schema: DomainSchema, payload: Sequence[str] | None = None, *, flt: Any = None
    ) -> Iterator[dict[str, Any]]:
        """The caller's records' payloads (``flt``: one compiled by :meth:`compile_filter`)."""
        return self.inner.scroll(schema, payload, flt=self._flt(schema, flt))

    def query_dense(
        self,
        schema: DomainSchema,
        aspect: str,
        vector: Any,
        top_k: int,
        filters: Sequence[Filter] = (),
        exclude_ids: Sequence[str] = (),
    ) -> list[ScoredRecord]:
        """Nearest neighbours among the caller's records."""
        return self.inner.query_dense(
            schema, aspect, vector, top_k, self._with_rule(filters), exclude_ids
        )

    def query_sparse(
        self, schema: DomainSchema, vector: SparseVector, top_k: int, flt: Any
    ) -> list[ScoredRecord]:
        """BM25 neighbours among the caller's records (IDF over the whole collection)."""
        return self.inner.query_sparse(schema, vector, top_k, self._flt(schema, flt))

    def query_hybrid_rrf(
        self,
        schema: DomainSchema,
        aspect: str,
        dense: Sequence[float],
        sparse: SparseVector,
        top_k: int,
        rrf_k: int = 60,
        flt: Any = None,
    ) -> list[ScoredRecord]:
        """The engine's hybrid RRF among the caller's records."""
        return self.inner.query_hybrid_rrf(
            schema, aspect, dense, sparse, top_k, rrf_k, self._flt(schema, flt)
        )

    def _readable(self, records: Mapping[str, StoredRecord]) -> dict[str, StoredRecord]:
        return {k: r for k, r in records.items() if self._policy.admits(r.payload)}

    def retrieve_records(
        self,
        schema: DomainSchema,
        record_ids: Sequence[str],
        with_vectors: bool = False,
        without: Sequence[str] = (),
    ) -> dict[str, StoredRecord]:
        """The caller's records among ``record_ids`` (the others absent, as missing ones)."""
        keep = [k for k in without if k not in self._policy.fields()]
        found = self.inner.retrieve_records(schema, record_ids, with_vectors, keep)
        return self._readable(found)

    def hydrate_records(
        self, schema: DomainSchema, record_ids: Sequence[str], with_vectors: bool = False
    ) -> dict[str, StoredRecord]:
        """The caller's records among ``record_ids``, hydrated (the others absent)."""
        return self._readable(self.inner.hydrate_records(schema, record_ids, with_vectors))

    def vectors_of(
        self, schema: DomainSchema, record_ids: Sequence[str], aspect: str
    ) -> dict[str, list[float]]:
        """Stored vectors of the caller's records among ``record_ids``."""
        readable = list(self.hydrate_records(schema, record_ids))
        return self.inner.vectors_of(schema, readable, aspect) if readable else {}

    def vector_of(self, schema: DomainSchema, record_id: str, aspect: str) -> list[float] | None:
        """A stored vector of one of the caller's records (None otherwise)."""
        return self.vectors_of(schema, [record_id], aspect).get(record_id)


class AccessKeyword(_Delegate):
    """A :class:`~agentic_search.ports.KeywordIndex` searching only the caller's records (its
    IDF and average length stay the collection's); the known terms are those of the caller's
    records, so whether a word reads as a typo does not tell a record it may not read."""

    def __init__(
        self,
        inner: Callable[[], Any],
        rule: AccessFilter,
        policy: AccessPolicy,
        store: AccessStore,
    ) -> None:
        super().__init__(inner, rule, policy)
        self._store = store

    def known_terms(self, schema: DomainSchema, terms: Sequence[str]) -> set[str] | None:
        """The analysed ``terms`` some record the caller may read holds: one sparse query of
        each term alone among the caller's records (a hit holds it)."""
        if not self._store.exists(schema):
            return set()
        flt = self._store.compile_filter(schema, [])
        out: set[str] = set()
        for term in dict.fromkeys(terms):
            vec = SparseVector(indices=[term_index(term)], values=[1.0])
            if self._store.query_sparse(schema, vec, 1, flt):
                out.add(term)
        return out

    def search(
        self,
        schema: DomainSchema,
        text: str,
        top_k: int,
        filters: Sequence[Filter] = (),
        exclude_ids: Sequence[str] = (),
    ) -> list[ScoredRecord]:
        """BM25 hits among the caller's records."""
        return self.inner.search(schema, text, top_k, self._with_rule(filters), exclude_ids)


class AccessStructured(_Delegate):
    """A :class:`~agentic_search.ports.StructuredStore` ranking only the caller's records."""

    def find(
        self,
        schema: DomainSchema,
        filters: Sequence[Filter],
        preferences: Sequence[Filter],
        top_k: int,
        exclude_ids: Sequence[str] = (),
    ) -> list[ScoredRecord]:
        """Structured hits among the caller's records."""
        return self.inner.find(schema, self._with_rule(filters), preferences, top_k, exclude_ids)


class CallerDependencies(Dependencies):
    """Dependencies of a caller view: the base's adapters (built on the base, on first use),
    but for the wrapped store, keyword index and structured store, and the LLM planner, built
    for the view (it resolves the names it reads against the caller's catalog); closing it
    closes nothing (the base owns the adapters)."""

    def __init__(self, base: Dependencies) -> None:
        delegated: dict[str, Any] = {n: (lambda _, n=n: getattr(base, n)) for n in PORTS}
        if "llm" in base._factories:  # its names -> ids are the catalog's: the caller's here
            delegated["llm"] = base._factories["llm"]
        super().__init__(base.settings, base.schema, delegated, base.caches)
        self.analyzer = base.analyzer
        self.caller_base = base

    def built(self, name: str) -> bool:
        """Whether adapter ``name`` exists already (on the base, for the delegated ones)."""
        return name in self._built or self.caller_base.built(name)

    def close(self) -> None:
        """Nothing: the base's adapters are the base's to close."""


def caller_view(deps: Dependencies, caller: Caller | None) -> Dependencies:
    """``deps`` as ``caller`` reads it: ``deps`` itself when nothing is filtered (no access field,
    the administrator) or when ``deps`` is that caller's view already; else dependencies whose
    store, keyword index and structured store read only the caller's records, with that
    access set's own catalog caches."""
    policy = AccessPolicy.of(deps.schema, caller)
    rule = policy.hard_filter()
    if rule is None:
        return deps
    key = policy.caller.key
    if deps.access_key == key:
        return deps
    base: Dependencies = getattr(deps, "caller_base", None) or deps
    with base._lock:  # the Map's threads may ask for the same view at once
        return _view(base, key, rule, policy)


def _view(base: Dependencies, key: str, rule: AccessFilter, policy: AccessPolicy) -> Dependencies:
    """The caller view ``key`` of ``base``, made on first use (under ``base``'s lock)."""
    views: dict[str, Dependencies] = base.__dict__.setdefault("caller_views", {})
    view = views.get(key)
    if view is None:
        view = CallerDependencies(base)
        store = AccessStore(lambda: base.store, rule, policy)
        view._built.update(
            store=store,
            keyword=AccessKeyword(lambda: base.keyword, rule, policy, store),
            structured=AccessStructured(lambda: base.structured, rule, policy),
        )
        view.access_key = key
        if len(views) >= _MAX_VIEWS:
            views.pop(next(iter(views)))
        views[key] = view
    view.caches = base.caches.root.view(key)  # a write drops the catalog of every view
    return view


#: Caller views kept per process and domain (the oldest is dropped beyond).
_MAX_VIEWS = 64


S = TypeVar("S")
R = TypeVar("R")


def as_caller(step: Callable[[S, Dependencies], R]) -> Callable[[S, Dependencies], R]:
    """Run ``step(state, deps)`` on the state's caller's view of ``deps`` (:func:`caller_view`;
    ``state.caller``: a SearchState's or a Retrieve event's)."""

    @functools.wraps(step)
    def run(state: S, deps: Dependencies) -> R:
        return step(state, caller_view(deps, getattr(state, "caller", None)))

    return run


__all__ = ["AccessKeyword", "AccessStore", "AccessStructured", "as_caller", "caller_view"]
