"""The Edge-only work outside requests, for the CLI (through
:func:`agentic_search.wiring.build_maintenance`): optimize in a worker process
(:mod:`~agentic_search.adapters.edge.optimize`) and snapshots for reader
processes (:mod:`~agentic_search.adapters.edge.replica`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentic_search.adapters.edge.optimize import (
    MIN_POINTS,
    OptimizeResult,
    needs_optimize,
    optimize_in_worker,
)
from agentic_search.adapters.edge.replica import snapshot
from agentic_search.adapters.edge.store import EdgeStore
from agentic_search.logic.schema import DomainSchema, available_domains, load_schema


class EdgeMaintenance:
    """Optimize and snapshot the shards of one :class:`EdgeStore`, and hold their writes."""

    MIN_POINTS = MIN_POINTS

    def __init__(
        self, store: EdgeStore, domains: Callable[[], list[DomainSchema]] | None = None
    ) -> None:
        self.store = store
        #: the schemas of the domains served (read when needed; default: the bundled ones)
        self.domains = domains or (lambda: [load_schema(n) for n in available_domains()])

    def needs_optimize(self, schema: DomainSchema, min_points: int = MIN_POINTS) -> bool:
        """:func:`~agentic_search.adapters.edge.optimize.needs_optimize` of the domain."""
        return needs_optimize(self.store, schema, min_points)

    def optimize(
        self, schema: DomainSchema, on_tick: Callable[[float], None] | None = None
    ) -> OptimizeResult:
        """:func:`~agentic_search.adapters.edge.optimize.optimize_in_worker` of the domain's
        shard."""
        return optimize_in_worker(self.store, schema, on_tick)

    def snapshot(self, dest: Path) -> list[str]:
        """:func:`~agentic_search.adapters.edge.replica.snapshot` of every served domain."""
        return snapshot(self.store, dest, self.domains())

    def hold_writes(self) -> None:
        """Hold the shard lock of every served domain, existing or not, until
        the store closes: reader processes search copies taken once, so a write by another
        process (an ``ingest`` of a new domain while ``serve`` runs) would never reach them;
        it is refused instead, naming this process.

        Raises:
            VectorStoreError: when another process holds one of them.
        """
        for schema in self.domains():
            self.store.acquire_writer(schema)


__all__ = ["EdgeMaintenance"]
