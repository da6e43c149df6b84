"""Moving a qdrant-client local-mode store (the embedded default before Qdrant Edge) into Edge.

A local-mode collection lives in ``<QDRANT_PATH>/<collection>/`` (an older shared layout is
first moved into that one by ``local_folders.adopt_shared_layout``), with its BM25 index in
bm25s files under ``<home>/bm25/<collection>``. :func:`migrate` copies
each collection of a known domain into its Edge shard: every point with its own id, payload
(content hashes and entity graph included) and dense vectors, read back from the local store
(nothing is re-embedded), plus the sparse BM25 vector computed from the payload with the
corpus' average length (measured in a first pass and recorded, so no refresh is needed). Then
it checks the shard holds exactly the local collection's record ids and only then moves the
local folder (and its bm25s folder) aside into ``<QDRANT_PATH>.migrated/`` (kept for the user
to delete). A failed check leaves the local folder where it was and raises.

A copy cut short (Ctrl-C, SIGKILL) leaves ``<shard>.migrating.json`` beside the shard: the next
run copies again over it (every write is an idempotent upsert). An Edge shard that already
holds points without that marker was written by Edge itself: it is left alone, the local
collection too, and the report says so (``force=True`` replaces the shard).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentic_search.config import Settings
from agentic_search.logic.bm25 import terms_vector
from agentic_search.logic.schema import DomainSchema, available_domains, load_schema
from agentic_search.logic.text import keyword_payload_fields, keyword_text
from agentic_search.ports import VectorStoreError
from agentic_search.wire import SPARSE_VECTOR, PointWrite

_BATCH = 256


@dataclass
class Migrated:
    """What :func:`migrate` did with one collection: ``status`` is ``copied`` (``points``
    points, verified, the local folder moved to ``kept_at``), ``skipped`` (an Edge shard of
    its own already holds points; ``reason``) or ``empty`` (nothing to copy; folder moved)."""

    domain: str
    collection: str
    status: str
    points: int = 0
    seconds: float = 0.0
    kept_at: Path | None = None
    reason: str = ""

    def line(self) -> str:
        """One line for a person."""
        if self.status == "skipped":
            return f"{self.domain!r}: not migrated ({self.reason})"
        return (
            f"{self.domain!r}: {self.points} points moved from local mode into Qdrant Edge in "
            f"{self.seconds:.1f} s, counts verified; the old folder is kept at {self.kept_at}"
        )


def _local_root(settings: Settings) -> Path:
    return settings.resolved_qdrant_path


def backup_root(settings: Settings) -> Path:
    """Where migrated local-mode folders are moved: ``<QDRANT_PATH>.migrated``."""
    root = _local_root(settings)
    return root.with_name(root.name + ".migrated")


def pending(
    settings: Settings, schemas: Iterable[DomainSchema] | None = None
) -> list[DomainSchema]:
    """The domains (bundled ones unless ``schemas``) whose local-mode collection is still in
    ``QDRANT_PATH`` (nothing when a Qdrant server is configured). Cheap: a few ``stat``s."""
    root = _local_root(settings)
    if settings.qdrant_url or not root.is_dir():
        return []
    from agentic_search.adapters.qdrant.local_folders import adopt_shared_layout

    out = []
    for schema in schemas if schemas is not None else map(load_schema, available_domains()):
        name = settings.collection_name(schema.name)
        adopt_shared_layout(root, name)  # an older shared folder: this collection's own first
        if (root / name / "meta.json").is_file():
            out.append(schema)
    return out


def migrate(
    settings: Settings,
    schemas: Iterable[DomainSchema] | None = None,
    progress: Any = None,
    force: bool = False,
    say: Callable[[str], None] | None = None,
) -> list[Migrated]:
    """Copy every :func:`pending` local-mode collection into Edge (see the module docstring).

    ``progress``: a rich ``Progress`` or :class:`LineProgress`-like object (``add_task``,
    ``advance``), one task per collection; ``say``: called with one line per collection.

    Raises:
        VectorStoreError: when a folder is held by another process, a collection lacks an
            aspect of its schema, or the copy does not hold the local collection's ids (the
            local folder is then left where it was).
    """
    from agentic_search.adapters.edge.sparse import EdgeSparseKeywordIndex
    from agentic_search.adapters.edge.store import EdgeStore
    from agentic_search.adapters.qdrant.local import LocalQdrantStore

    todo = pending(settings, schemas)
    if not todo:
        return []
    local = LocalQdrantStore(settings.model_copy(update={"qdrant_url": None}))
    edge = EdgeStore(settings)
    done: list[Migrated] = []
    try:
        for schema in todo:
            kw = EdgeSparseKeywordIndex(edge, schema=schema, avg_doc_len=settings.bm25_avg_doc_len)
            result = _migrate_one(settings, local, edge, kw, schema, progress, force)
            done.append(result)
            if say is not None:
                say(result.line())
    finally:
        local.close()
        edge.close()
    return done


def _marker(edge: Any, schema: DomainSchema) -> Path:
    shard = edge.shard_dir(schema)
    return shard.with_name(shard.name + ".migrating.json")


def _migrate_one(
    settings: Settings,
    local: Any,
    edge: Any,
    kw: Any,
    schema: DomainSchema,
    progress: Any,
    force: bool,
) -> Migrated:
    name = local.collection(schema)
    started = time.monotonic()
    marker = _marker(edge, schema)
    if edge.count(schema) and not marker.is_file():
        if not force:
            return Migrated(
                schema.name,
                name,
                "skipped",
                reason=f"the Edge shard {edge.shard_dir(schema)} already holds "
                f"{edge.count(schema)} points; the local-mode folder "
                f"{_local_root(settings) / name} is left as it is (agentic-search migrate "
                "--force replaces the shard with it)",
            )
        edge.drop(schema)
    total = local.count(schema)
    if total:
        sizes = local.dense_sizes(schema)
        missing = [a for a in schema.aspect_names if a not in sizes]
        if missing:
            raise VectorStoreError(
                f"the local-mode collection {name!r} has no vector for aspect(s) "
                f"{', '.join(missing)}; rebuild the domain instead of migrating it"
            )
        edge.ensure_collection(schema, sizes[schema.aspect_names[0]])
        marker.write_text('{"from": "qdrant-local"}')
        task = (
            progress.add_task(f"migrating {schema.name!r} to Qdrant Edge", total=2 * total)
            if progress
            else None
        )
        lengths = 0
        for payload in local.scroll(schema, [schema.id_field, *keyword_payload_fields(schema)]):
            lengths += len(kw.analyzer.terms(keyword_text(schema, payload)))
            if task is not None:
                progress.advance(task)
        avgdl = lengths / total
        kw.set_average(schema, avgdl, total)
        for batch in local.scroll_points(schema, _BATCH):
            writes = [
                PointWrite(
                    str(payload[schema.id_field]),
                    {a: v for a, v in vectors.items() if a != SPARSE_VECTOR},
                    payload,
                    terms_vector(
                        kw.analyzer.terms(keyword_text(schema, payload)), avgdl, kw.k1, kw.b
                    ),
                )
                for payload, vectors in batch
            ]
            edge.upsert(schema, writes)
            if task is not None:
                progress.advance(task, len(batch))
        _verify(local, edge, schema)
    kept = _move_aside(settings, local, name)
    marker.unlink(missing_ok=True)
    return Migrated(
        schema.name,
        name,
        "copied" if total else "empty",
        total,
        time.monotonic() - started,
        kept,
    )


def _verify(local: Any, edge: Any, schema: DomainSchema) -> None:
    """The shard holds exactly the local collection's record ids (counts and sets)."""
    want = {str(p[schema.id_field]) for p in local.scroll(schema, [schema.id_field])}
    got = {str(p[schema.id_field]) for p in edge.scroll(schema, [schema.id_field])}
    if want != got or edge.count(schema) != len(want):
        raise VectorStoreError(
            f"the copy of {schema.name!r} into Qdrant Edge does not match the local-mode "
            f"collection ({len(want)} records there, {len(got)} in Edge, "
            f"{len(want - got)} missing); the local-mode folder is left where it was"
        )


def _move_aside(settings: Settings, local: Any, name: str) -> Path:
    """Close the local collection and move its folder (and its bm25s one) into the backup."""
    local.release(name)
    target = backup_root(settings) / name
    if target.exists():
        target = target.with_name(f"{name}-{time.strftime('%Y%m%d-%H%M%S')}")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(_local_root(settings) / name), str(target))
    bm25s = settings.bm25_path / name
    if bm25s.is_dir():
        shutil.move(str(bm25s), str(target.with_name(target.name + ".bm25s")))
    return target


__all__ = ["Migrated", "backup_root", "migrate", "pending"]
