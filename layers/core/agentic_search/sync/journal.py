"""Completing interrupted writes from the write journal (crash consistency).

A journaled write (an ingest of a file, a batch of the ``sync`` command) records its intent
before its first write and forgets it after its last (see
:class:`~agentic_search.ports.WriteJournal`). An intent still there when a process opens the
domain means the write stopped half-way (Ctrl-C, SIGKILL, a full disk): the vector store may
hold part of it and the keyword index, the entity graph and the sync status may not. Every write
is idempotent (content hashes, versions), so completing it is doing it again:

* an ingest is re-run from its file (the bundled catalog by name), with the keyword index
  rebuilt even when every point was already written;
* a sync batch is re-applied from the changes in the intent;
* a file that is gone leaves the index as written, rebuilt around it, and says so;
* a prune the file no longer allows (it changed since: see
  :func:`~agentic_search.sync.prune.check_prune`) is not done, and the line says so.

:func:`recover` does this and returns one line for the user (None when nothing was pending).
"""

from __future__ import annotations

import time
from pathlib import Path

from agentic_search.dependencies import Dependencies
from agentic_search.sync.after_write import after_write
from agentic_search.sync.apply import apply_changes
from agentic_search.sync.changes import CatalogChange
from agentic_search.sync.files import bundled_catalog_path, read_catalog
from agentic_search.sync.indexer import WriteStats
from agentic_search.sync.ingest import BUNDLED, IngestReport, ingest_file
from agentic_search.sync.prune import PruneRefused


def recover(deps: Dependencies) -> str | None:
    """Complete the domain's interrupted write, if any; a one-line account of what was done,
    or None when no write was pending.

    Raises:
        VectorStoreError, EmbedderError: when the store or the model fail while completing
            (the intent stays, the next process tries again).
        OSError: when the journal cannot be read or written.
    """
    domain = deps.schema.name
    intent = deps.journal.pending(domain)
    if intent is None:
        return None
    op = intent.get("op")
    when = _when(intent.get("startedAt"))
    if op == "ingest":
        source = str(intent.get("source") or "")
        path = bundled_catalog_path() if source == BUNDLED else Path(source)
        label = "the bundled catalog" if source == BUNDLED else source
        if path.is_file():
            read = read_catalog(path, deps.schema, id_key=intent.get("idKey"))
            prune, refused = bool(intent.get("prune")), ""

            def complete(prune: bool) -> IngestReport:
                return ingest_file(
                    deps,
                    path,
                    read=read,
                    prune=prune,
                    force=bool(intent.get("force")),
                    id_key=intent.get("idKey"),
                    source=source,
                    force_refresh=True,
                )

            try:
                report = complete(prune)
            except PruneRefused as exc:  # the file changed since: complete it, prune nothing
                report, refused = complete(False), f"; not pruned: {exc.reason}"
            s = report.stats
            return (
                f"completed an interrupted ingest of {label} ({when}): {s.inserted} inserted, "
                f"{s.updated_vectors + s.updated_payload} updated, {s.unchanged} already there"
                + (f", {report.pruned} pruned" if report.pruned else "")
                + refused
            )
        after_write(deps, WriteStats(), everything=True)
        deps.journal.finish(domain)
        return (
            f"an ingest of {label} ({when}) was interrupted and the file is gone: the index "
            "keeps what was written (keyword index rebuilt); ingest the file again to finish"
        )
    if op == "sync":
        changes = [CatalogChange.model_validate(w) for w in intent.get("changes") or []]
        report = apply_changes(deps, changes, deps.sync_status)
        deps.journal.finish(domain)
        counts = ", ".join(f"{n} {k}" for k, n in sorted(report.counts().items())) or "nothing"
        return f"completed an interrupted sync batch of {len(changes)} change(s) ({when}): {counts}"
    deps.journal.finish(domain)
    return f"dropped an unknown journal entry {op!r} ({when})"


def _when(started: object) -> str:
    if not isinstance(started, int | float):
        return "started at an unknown time"
    return "started " + time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started))


__all__ = ["recover"]
