"""The front door of one domain: search (the state machine's steps run in-process) and ingest.

What the CLI, ``serve``, the evaluation and the tests call. It wires nothing itself: its
:class:`~agentic_search.dependencies.Dependencies` come from :mod:`agentic_search.wiring`, searches
run through :class:`~agentic_search.pipeline.runner.LocalRunner` and writes through
:mod:`agentic_search.sync.ingest`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_search.config import Settings
from agentic_search.dependencies import Dependencies
from agentic_search.logic.embedder_identity import check_identity
from agentic_search.logic.schema import DomainSchema
from agentic_search.pipeline.cache import cache_lookup
from agentic_search.wire import CacheInfo, Caller, SearchRequest, SearchResponse, Turn
from agentic_search.wiring import (
    build_dependencies,
    collection_info,
    identity_embedder,
    write_in_progress,
)

if TYPE_CHECKING:  # the search graph and the write path load on first use: a cache hit needs
    # neither (see :meth:`SearchService.cached`)
    from agentic_search.pipeline.runner import LocalRunner
    from agentic_search.sync import ingest
    from agentic_search.sync.files import CatalogRead
    from agentic_search.sync.indexer import WriteStats


class SearchService:
    """Search and ingest over one domain's dependencies (see the module docstring)."""

    def __init__(self, deps: Dependencies) -> None:
        self.deps = deps
        self.caller: Caller | None = None
        """Who :meth:`search` and :meth:`cached` ask as when not told (None: anonymous)."""
        self._runner: LocalRunner | None = None
        #: the request the cache gate (:meth:`_cached`) just missed and what it noted: the
        #: next :meth:`search` of that request runs on from there, not looking it up again
        self._gate_miss: tuple[tuple[SearchRequest, Caller | None], CacheInfo] | None = None

    @classmethod
    def create(
        cls,
        settings: Settings | None = None,
        domain: str | DomainSchema = "tools",
        **adapters: Any,
    ) -> SearchService:
        """A service over freshly wired dependencies (``adapters`` by port name are used as
        given, e.g. ``embedder=...``).

        Raises:
            SchemaError: for a domain that has no schema.
        """
        return cls(build_dependencies(settings, domain, **adapters))

    @property
    def schema(self) -> DomainSchema:
        """The domain schema."""
        return self.deps.schema

    @property
    def settings(self) -> Settings:
        """The settings the dependencies were built from."""
        return self.deps.settings

    # ----- search ----------------------------------------------------------------------------

    def search(
        self,
        query: str,
        limit: int = 10,
        rounds: int | None = None,
        history: Sequence[Turn | dict[str, Any]] | None = None,
        caller: Caller | None = None,
    ) -> SearchResponse:
        """The cached response (:meth:`cached`, while the store is not open: a hit opens
        nothing) or else run the search state machine's steps in-process (the local runner):
        cache, intent, plan, executor rounds, finalize. Failing sources are listed in
        ``output.errors``.

        ``rounds`` (default ``MAX_ROUNDS``, 3) caps the executor rounds; ``history`` (the
        conversation's earlier turns, oldest first: :class:`~agentic_search.wire.Turn` or its
        dict form) reads ``query`` as a follow-up (``intent.followUp``). ``caller`` is who
        asks (its principals; None: anonymous): in a domain with an access field it reads only
        the records those may read, and its cache entries are its access set's.

        Raises:
            ValueError: for an empty or over-long query, a limit outside 1..100 or rounds
                outside 1..5 (a pydantic ``ValidationError`` naming the field).
            agentic_search.wire.errors.SearchFailed: when no path could answer.
            EmbedderMismatch: when the collection was built by another embedder (the
                message names both and how to fix it).
        """
        request = self._request(query, limit, rounds, history)
        caller = caller if caller is not None else self.caller
        deps = self.deps
        miss, self._gate_miss = self._gate_miss, None
        if deps.built("store"):  # once it is open, the graph's CacheCheck costs no more; an
            miss = None  # ingest since the gate ran (first use) changed the catalog version
        elif miss is None or miss[0] != (request, caller):
            hit, noted = self._lookup(request, caller)
            if hit is not None:
                return hit
            miss = ((request, caller), noted) if noted is not None else None
        check_identity(deps.store, deps.schema, deps.embedder)  # refused before anything runs
        # the gate's miss is the graph's CacheCheck, done: the walk goes on from its Choice
        checked = miss[1] if miss is not None else None
        result = self.runner.run(request, checked=checked, caller=caller)
        assert result.state.response is not None  # Finalize always sets it or raises
        # Finalize's own object when it ran here (parsing the JSON back took milliseconds);
        # a cached response is parsed.
        return result.state.built_response or SearchResponse.from_wire(result.state.response)

    def _request(
        self,
        query: str,
        limit: int,
        rounds: int | None,
        history: Sequence[Turn | dict[str, Any]] | None,
    ) -> SearchRequest:
        """The validated request (a pydantic ``ValidationError`` naming the field)."""
        fields: dict[str, Any] = {"query": query, "limit": limit, "rounds": rounds}
        if history:
            fields["history"] = [t.wire() if isinstance(t, Turn) else t for t in history]
        return SearchRequest.model_validate({**fields, "domain": self.schema.name})

    def cached(
        self,
        query: str,
        limit: int = 10,
        rounds: int | None = None,
        history: Sequence[Turn | dict[str, Any]] | None = None,
        caller: Caller | None = None,
    ) -> SearchResponse | None:
        """The result cache's response to this search, or None (a miss), read without opening
        the store or loading the model: the graph's first state, CacheCheck (the same key:
        query, limit, rounds, domain, schema and catalog versions), run ahead of it once the
        collection's files (:func:`~agentic_search.wiring.collection_info`) say it exists and
        was built by the current embedder (its identity told by one made without loading a
        model, :func:`~agentic_search.wiring.identity_embedder`). A miss opens nothing more;
        :meth:`search` then runs the whole graph, CacheCheck included (once the store is open,
        it no longer asks here first). A hit answers without reading the index, so a damaged
        shard is found by the next search that reads it.

        Raises:
            ValueError: as :meth:`search`, for an invalid request.
            EmbedderMismatch: when the collection was built by another embedder.
            VectorStoreError: when the collection's identity file cannot be read.
        """
        request = self._request(query, limit, rounds, history)
        return self._cached(request, caller if caller is not None else self.caller)

    def _cached(self, request: SearchRequest, caller: Caller | None) -> SearchResponse | None:
        hit, noted = self._lookup(request, caller)
        if noted is not None:  # a miss: the next search() of this request runs on from it
            self._gate_miss = ((request, caller), noted)
        return hit

    def _lookup(
        self, request: SearchRequest, caller: Caller | None
    ) -> tuple[SearchResponse | None, CacheInfo | None]:
        """The gate: ``(hit, None)``, ``(None, what the lookup noted)`` on a miss, or
        ``(None, None)`` when the cache was not asked (first use, or an embedder that loads
        its model to tell its identity)."""
        deps = self.deps
        info = collection_info(deps)
        embedder = identity_embedder(deps)
        if embedder is None or not info.exists(deps.schema):
            return None, None
        check_identity(info, deps.schema, embedder)
        noted, hit = cache_lookup(request, deps, caller)
        if hit is None:
            return None, noted
        return SearchResponse.from_wire(hit), None

    @property
    def runner(self) -> LocalRunner:
        """The local runner over this domain's dependencies (made on first use)."""
        if self._runner is None:
            from agentic_search.pipeline.runner import LocalRunner

            self._runner = LocalRunner(lambda _: self.deps, self.settings.max_parallel_sources)
        return self._runner

    def warm_up(self, query: str = "warm up", freeze: bool = True) -> None:
        """Load what a search needs (embedding model, keyword index, dense matrix, catalog
        lookup) by running the executor's rounds for ``query`` without the result cache, then,
        with ``freeze``, exclude everything alive from garbage collection
        (:func:`agentic_search.process_tuning.freeze_long_lived`). For a long-running process
        before its first request (``serve`` calls it). An empty collection only loads the
        model."""
        from agentic_search.pipeline.catalog import extract_by_rules
        from agentic_search.pipeline.runner import RunOptions, from_plan
        from agentic_search.process_tuning import freeze_long_lived

        deps = self.deps
        deps.embedder.embed_query(query)
        if not self.is_empty():
            intent = extract_by_rules(deps, query)
            state = from_plan(deps, deps.planner.plan(intent, limit=10), intent)
            self.runner.run_asl(state, RunOptions(start_at="PrepareRound", cache=False))
        if freeze:
            freeze_long_lived()

    # ----- ingest ----------------------------------------------------------------------------

    def ingest_records(
        self,
        records: Sequence[dict[str, Any]],
        batch_size: int | None = None,
        on_progress: Callable[[int], None] | None = None,
    ) -> WriteStats:
        """:func:`agentic_search.sync.ingest.ingest_records` on this domain (``batch_size``
        None: its default)."""
        from agentic_search.sync import ingest

        batch = ingest.DEFAULT_BATCH if batch_size is None else batch_size
        return ingest.ingest_records(self.deps, records, batch, on_progress)

    def ingest_file(
        self,
        path: Path,
        batch_size: int | None = None,
        on_start: Callable[[int], None] | None = None,
        on_progress: Callable[[int], None] | None = None,
        read: CatalogRead | None = None,
        *,
        prune: bool = False,
        force: bool = False,
        id_key: str | None = None,
        on_enrich: Callable[[int, int], None] | None = None,
    ) -> ingest.IngestReport:
        """:func:`agentic_search.sync.ingest.ingest_file` on this domain (``batch_size``
        None: its default)."""
        from agentic_search.sync import ingest

        return ingest.ingest_file(
            self.deps,
            path,
            ingest.DEFAULT_BATCH if batch_size is None else batch_size,
            on_start,
            on_progress,
            read,
            prune=prune,
            force=force,
            id_key=id_key,
            on_enrich=on_enrich,
        )

    def is_empty(self) -> bool:
        """Whether the domain's collection holds no records (a question to the store: the
        write path, :mod:`agentic_search.sync.ingest`, is not loaded for it)."""
        return self.deps.store.count(self.schema) == 0

    def never_written(self) -> bool:
        """Whether nothing was ever written to the domain's index in this folder (first use):
        no collection (the first write creates it; deleting every record leaves it)."""
        return not self.deps.store.exists(self.schema)

    def ensure_bundled_catalog(
        self,
        on_start: Callable[[int], None] | None = None,
        on_progress: Callable[[int], None] | None = None,
    ) -> ingest.IngestReport | None:
        """Ingest the bundled tools catalog into a tools index never written (first use)."""
        from agentic_search.sync import ingest

        return ingest.ensure_bundled_catalog(self.deps, on_start, on_progress)

    def ensure_links(self) -> ingest.LinkStats | None:
        """Build the entity graph of a collection indexed before it existed (None when it is
        there or the schema has no entities); see :mod:`agentic_search.sync.links`."""
        from agentic_search.sync import ingest

        return ingest.ensure_links(self.deps)

    def rebuild(
        self,
        path: Path,
        batch_size: int | None = None,
        on_progress: Callable[[int], None] | None = None,
        read: CatalogRead | None = None,
        *,
        id_key: str | None = None,
        source: str | None = None,
    ) -> tuple[ingest.IngestReport, str | None]:
        """Rebuild the domain's index from ``path`` (see :mod:`agentic_search.sync.repair`);
        the report and a line when an unreadable sync status was set aside."""
        from agentic_search.sync import ingest, repair

        note = repair.set_aside_unreadable_status(self.deps)
        report = repair.rebuild(
            self.deps,
            path,
            batch_size=ingest.DEFAULT_BATCH if batch_size is None else batch_size,
            on_progress=on_progress,
            read=read,
            id_key=id_key,
            source=source,
        )
        return report, note

    def pending_write(self) -> dict[str, Any] | None:
        """The domain's interrupted write (its journaled intent), or None."""
        return self.deps.journal.pending(self.schema.name)

    def write_in_progress(self) -> bool:
        """Whether another process is writing the domain's index now
        (:func:`~agentic_search.wiring.write_in_progress`): its journaled intent is then its
        own, not an interrupted write to complete."""
        return write_in_progress(self.deps)

    def recover(self) -> str | None:
        """Complete the domain's interrupted write, if any (see
        :mod:`agentic_search.sync.journal`); one line saying what was done, or None."""
        from agentic_search.sync import journal

        return journal.recover(self.deps)

    def close(self) -> None:
        """Stop the runner's threads and close the dependencies' adapters."""
        if self._runner is not None:
            self._runner.close()
        self.deps.close()


__all__ = ["SearchService"]
