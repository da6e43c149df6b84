"""Make the evaluation collection hold exactly the dataset's corpus.

The corpus is ingested into the ``documents`` domain when the collection does not hold exactly
the corpus ids (records that are not in the corpus are deleted first, so every system searches
exactly this corpus; the CLI gives the evaluation its own collection,
``eval-<dataset>-documents``, so this never touches a user's ``documents`` collection).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentic_search.logic.chunking import doc_id_of
from agentic_search.sync.prune import prune_records
from agentic_search_cli.evaluation.datasets import BeirDataset

if TYPE_CHECKING:
    from agentic_search.service import SearchService


@dataclass
class CorpusSync:
    """What was done to make the collection hold exactly the corpus."""

    documents: int
    rejected_lines: int
    ingested: bool
    removed: int = 0
    inserted: int = 0
    seconds: float = 0.0

    def wire(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "documents": self.documents,
            "rejected_lines": self.rejected_lines,
            "ingested": self.ingested,
            "removed": self.removed,
            "inserted": self.inserted,
            "seconds": round(self.seconds, 2),
        }


def indexed_ids(engine: SearchService) -> set[str]:
    """Document ids currently in the engine's collection (chunks map to their document;
    empty when the collection does not exist)."""
    if not engine.deps.store.exists(engine.schema):
        return set()
    idf = engine.schema.id_field
    return {
        doc_id_of(str(p[idf]))
        for p in engine.deps.store.scroll(engine.schema, payload=[idf])
        if idf in p
    }


def ensure_corpus(
    engine: SearchService,
    dataset: BeirDataset,
    on_start: Callable[[int], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> CorpusSync:
    """Make the collection hold exactly the corpus ids: delete strays, ingest when needed.

    Nothing is written when the ids already match (``ingested`` is False). Re-ingesting is
    idempotent: unchanged records are not re-embedded.
    """
    t0 = time.perf_counter()
    want = dataset.corpus_ids
    have = indexed_ids(engine)
    sync = CorpusSync(
        documents=len(dataset.corpus.records),
        rejected_lines=len(dataset.corpus.errors),
        ingested=False,
    )
    if have == want:
        engine.ensure_links()  # a collection indexed before the entity graph existed
        return sync
    stray = sorted(have - want)
    if stray:  # through the writer: sync status tombstones, keyword index and graph follow
        prune_records(engine.deps, stray, engine.deps.sync_status)
        sync.removed = len(stray)
    if on_start:
        on_start(len(dataset.corpus.records))
    stats = engine.ingest_records(dataset.corpus.records, on_progress=on_progress)
    sync.ingested = True
    sync.inserted = stats.inserted
    sync.seconds = time.perf_counter() - t0
    return sync
