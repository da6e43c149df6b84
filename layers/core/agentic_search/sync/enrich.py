"""Enriching records before they are written: every write path (ingest, sync, redrive,
reindex) goes through :func:`enrich_records` from :func:`~agentic_search.sync.apply.
apply_changes`, so an index is enriched the same way whoever writes it.

For each record, in order of what costs least:

1. the point already in the index holds an enrichment of the same prompt text, prompt
   version, model (any, under ``ENRICH=off``) and filter embedder: it is kept as it is;
2. an answer is kept under its cache key (:func:`~agentic_search.logic.enrichment.
   enrichment_key`) in the :class:`~agentic_search.ports.EnrichmentStore`, or the domain's
   shipped enrichment file holds one for the same text (:mod:`agentic_search.sync.
   shipped_enrichment`): it is filtered and attached;
3. with an enricher (``ENRICH=local|bedrock|openai``) the LLM is asked, on
   ``ENRICH_CONCURRENCY`` threads, each call within ``ENRICH_TIMEOUT_S``, until
   ``ENRICH_BUDGET_S`` is spent; each answer is kept the moment it comes back, so a killed
   ingest resumes without asking again for the records it finished.

A record whose enrichment fails (or that the budget did not reach) is written without one,
listed in the report and in the store's failures, and asked again by the next ingest or sync
(no answer is kept for it). Enrichment never fails a write.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentic_search.dependencies import Dependencies
from agentic_search.logic.chunking import doc_id_of
from agentic_search.logic.enrichment import (
    PROMPTS,
    chunk_prompt_text,
    enrichment_key,
    filter_needs,
    record_prompt_text,
    text_sha256,
)
from agentic_search.logic.schema import DomainSchema
from agentic_search.logic.text import field_text
from agentic_search.ports import Enricher, EnrichmentStore
from agentic_search.wire.records import (
    CATEGORY_KEY,
    CONTEXT_KEY,
    ENRICHMENT_KEY,
    ENRICHMENT_KEYS,
    NEEDS_KEY,
)

if TYPE_CHECKING:  # numpy only when answers are filtered (the sync handlers import this)
    import numpy as np

#: Records a pass must hold to measure the catalog's mean record itself (fewer: the mean kept
#: from the last pass that did, else the meaning rule of the filter is skipped).
MIN_CENTROID_RECORDS = 50
#: Shortest other record's name the filter drops a need for (shorter ones are common words).
MIN_OTHER_NAME = 4


@dataclass
class EnrichReport:
    """What an enrichment pass did, in records (and needs, for a catalog)."""

    mode: str
    records: int = 0
    from_index: int = 0
    from_cache: int = 0
    from_shipped: int = 0
    asked: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    generated: int = 0
    kept: int = 0
    seconds: float = 0.0

    @property
    def enriched(self) -> int:
        """Records written with an enrichment."""
        return self.from_index + self.from_cache + self.from_shipped + self.asked

    def add(self, other: EnrichReport) -> None:
        """Accumulate another pass into this one."""
        for name in (
            "records",
            "from_index",
            "from_cache",
            "from_shipped",
            "asked",
            "generated",
            "kept",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.failed.update(other.failed)
        self.seconds += other.seconds

    def wire(self) -> dict[str, Any]:
        """JSON-able summary."""
        return {
            "mode": self.mode,
            "records": self.records,
            "enriched": self.enriched,
            "fromIndex": self.from_index,
            "fromCache": self.from_cache,
            "fromShipped": self.from_shipped,
            "asked": self.asked,
            "failed": [{"id": k, "reason": v} for k, v in sorted(self.failed.items())],
            "needsGenerated": self.generated,
            "needsKept": self.kept,
            "seconds": round(self.seconds, 3),
        }


@dataclass
class _Job:
    index: int
    record_id: str
    kind: str
    text: str
    text_hash: str
    key: str | None
    answer: dict[str, Any] | None = None
    source: str = ""


def _prompt_jobs(schema: DomainSchema, records: Sequence[dict[str, Any]]) -> list[_Job]:
    """One job per record the domain's kind enriches (a document: chunks of a document with
    more than one chunk), with the text its prompt reads."""
    spec = schema.enrichment
    assert spec is not None
    jobs: list[_Job] = []
    if spec.kind == "catalog":
        for i, rec in enumerate(records):
            text = record_prompt_text(schema, rec)
            if text:
                rid = str(rec[schema.id_field])
                jobs.append(_Job(i, rid, "catalog", text, text_sha256(text), None))
        return jobs
    heads: dict[str, str] = {}
    multi: set[str] = set()
    for rec in records:
        doc = str(rec.get("doc_id") or doc_id_of(str(rec[schema.id_field])))
        if rec.get("chunk_id") in (0, None):
            title = field_text(rec.get(schema.title_field))
            body = field_text(rec.get(schema.text_field))
            heads[doc] = f"{title}. {body}" if title else body
        if rec.get("chunk_id") not in (0, None):
            multi.add(doc)
    for i, rec in enumerate(records):
        doc = str(rec.get("doc_id") or doc_id_of(str(rec[schema.id_field])))
        if doc not in multi or doc not in heads:
            continue
        text = chunk_prompt_text(heads[doc], field_text(rec.get(schema.text_field)))
        jobs.append(_Job(i, str(rec[schema.id_field]), "document", text, text_sha256(text), None))
    return jobs


def record_names(schema: DomainSchema, records: Sequence[dict[str, Any]]) -> dict[str, list[str]]:
    """Each record's own names (title and aliases), by record id."""
    out: dict[str, list[str]] = {}
    alias_field = schema.entities.aliases if schema.entities else None
    for rec in records:
        names = [field_text(rec.get(schema.title_field))]
        if alias_field:
            value = rec.get(alias_field)
            names += [str(v) for v in value] if isinstance(value, list) else [field_text(value)]
        out[str(rec[schema.id_field])] = [n for n in names if n]
    return out


def _reusable(old: dict[str, Any] | None, job: _Job, model: str | None, filt: str) -> bool:
    """Whether the stored point's enrichment is the one this pass would write."""
    meta = (old or {}).get(ENRICHMENT_KEY)
    if not isinstance(meta, dict):
        return False
    return (
        meta.get("text") == job.text_hash
        and meta.get("prompt") == PROMPTS[job.kind].version
        and (model is None or meta.get("model") == model)
        and meta.get("filter") == filt
    )


def enrich_records(
    deps: Dependencies,
    records: Sequence[dict[str, Any]],
    *,
    on_progress: Callable[[int, int], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[list[dict[str, Any]], EnrichReport]:
    """The records with their enrichment attached (new dicts; the input is not changed, and
    no record field is), and what was done; see the module docstring. ``on_progress(done,
    total)`` is called after each LLM answer (``total``: the records asked).

    Never raises for a record's failure (it is listed in ``report.failed``).

    Raises:
        EmbedderError: when the filter's embedding fails (as the write would).
    """
    t0 = time.perf_counter()
    schema = deps.schema
    settings = deps.settings
    enricher: Enricher | None = deps.enricher
    report = EnrichReport(mode=settings.enrich)
    spec = schema.enrichment
    if spec is None or not records:
        return list(records), report
    cache: EnrichmentStore = deps.enrichment_store
    model = enricher.model if enricher is not None else None
    # ENRICH=off asks nothing, but the answers kept from the domain's last model still apply
    lookup = model or cache.get_meta(f"model:{schema.name}")
    if model is not None and lookup != cache.get_meta(f"model:{schema.name}"):
        cache.set_meta(f"model:{schema.name}", model)
    filt = _filter_name(deps)
    jobs = _prompt_jobs(schema, records)
    report.records = len(jobs)
    out = [dict(r) for r in records]
    if not jobs:
        return out, report

    existing: dict[str, Any] = {}
    if deps.store.exists(schema):
        existing = {
            rid: rec.payload or {}
            for rid, rec in deps.store.retrieve_records(schema, [j.record_id for j in jobs]).items()
        }
    pending: list[_Job] = []
    for job in jobs:
        old = existing.get(job.record_id)
        if _reusable(old, job, model, filt):
            for k in ENRICHMENT_KEYS:
                if old and k in old:
                    out[job.index][k] = old[k]
            report.from_index += 1
            continue
        pending.append(job)

    # cached answers: this model's, then the shipped file's
    if lookup:
        for job in pending:
            job.key = enrichment_key(job.text, lookup, PROMPTS[job.kind].version)
        kept = cache.get_many([j.key for j in pending if j.key])
        for job in pending:
            if job.key in kept:
                job.answer, job.source = kept[job.key], "cache"
    shipped = _shipped(deps)
    if shipped is not None:
        for job in pending:
            if job.answer is None:
                entry = shipped.answer_for(job.record_id, job.text_hash, PROMPTS[job.kind].version)
                if entry is not None:
                    job.answer, job.source = entry, "shipped"
                    job.key = enrichment_key(job.text, shipped.model, PROMPTS[job.kind].version)

    ask = [j for j in pending if j.answer is None]
    if ask and enricher is not None:
        _ask(deps, enricher, cache, ask, report, on_progress, clock)
    elif ask:
        pass  # ENRICH=off: nothing to ask; these records go without (not a failure)

    done = [j for j in pending if j.answer is not None]
    _filter_and_attach(deps, records, out, done, filt, model or lookup, report)
    report.from_cache = sum(1 for j in done if j.source == "cache")
    report.from_shipped = sum(1 for j in done if j.source == "shipped")
    report.asked = sum(1 for j in done if j.source == "llm")
    if enricher is not None:
        _record_failures(cache, schema.name, [j.record_id for j in jobs], report.failed)
    report.seconds = time.perf_counter() - t0
    return out, report


def _filter_name(deps: Dependencies) -> str:
    """The identity of the embedder the filter runs with (recorded with each enrichment)."""
    ident = getattr(deps.embedder, "identity", None)
    return str(getattr(ident, "model", None) or deps.embedder.name)


def _shipped(deps: Dependencies) -> Any:
    if not deps.settings.enrich_shipped:
        return None
    from agentic_search.sync.shipped_enrichment import shipped_enrichment

    return shipped_enrichment(deps.schema.name)


def _ask(
    deps: Dependencies,
    enricher: Enricher,
    cache: EnrichmentStore,
    jobs: list[_Job],
    report: EnrichReport,
    on_progress: Callable[[int, int], None] | None,
    clock: Callable[[], float],
) -> None:
    """Ask the LLM for ``jobs`` on a bounded pool within the budget; each answer is kept in
    ``cache`` as it arrives."""
    settings = deps.settings
    budget = settings.enrich_budget_s
    deadline = clock() + budget if budget else None
    lock = threading.Lock()
    done = 0

    def one(job: _Job) -> None:
        nonlocal done
        try:
            answer = enricher.enrich(job.kind, job.text, settings.enrich_timeout_s)
        except Exception as exc:  # never a failed write: the record goes without
            report.failed[job.record_id] = f"{type(exc).__name__}: {exc}"[:300]
            answer = None
        if answer is not None:
            assert job.key is not None
            cache.put(job.key, answer)
            job.answer, job.source = answer, "llm"
        with lock:
            done += 1
            if on_progress:
                on_progress(done, len(jobs))

    queue = list(jobs)
    running: set[Future[None]] = set()
    with ThreadPoolExecutor(max_workers=settings.enrich_concurrency) as pool:
        while queue or running:
            while queue and len(running) < settings.enrich_concurrency:
                if deadline is not None and clock() >= deadline:
                    for job in queue:
                        report.failed[job.record_id] = (
                            f"budget: ENRICH_BUDGET_S={budget:g} s spent before it was asked"
                        )
                    queue = []
                    break
                running.add(pool.submit(one, queue.pop(0)))
            if running:
                running = set(wait(running, return_when=FIRST_COMPLETED).not_done)


@dataclass(frozen=True)
class Filtered:
    """One catalog record's needs after Doc2Query--: ``kept`` of ``generated``."""

    kept: list[str]
    generated: int
    partial: bool


def filter_answers(
    schema: DomainSchema,
    embedder: Any,
    records: Sequence[dict[str, Any]],
    items: Sequence[tuple[str, str, dict[str, Any]]],
    centroid: np.ndarray | None,
    measure_centroid: bool,
) -> tuple[dict[str, Filtered], np.ndarray | None]:
    """Doc2Query-- over catalog answers ``items`` (``(record id, prompt text, answer)``),
    with ``embedder``: each prompt text and need embedded, the catalog's mean record the mean
    of the prompt texts' vectors when ``measure_centroid`` (else ``centroid``, None: the
    meaning rule skipped); the names forbidden are each record's own (``records``) and the
    others' of at least :data:`MIN_OTHER_NAME` characters. Returns the kept needs by record
    id and the centroid used.

    Raises:
        EmbedderError: when embedding fails.
    """
    import numpy as np

    texts: list[str] = []
    spans: list[tuple[str, list[str], int, int]] = []
    for rid, text, answer in items:
        needs = [str(n) for n in answer.get("needs", [])]
        start = len(texts)
        texts.append(text)
        texts += needs
        spans.append((rid, needs, start, len(texts)))
    embedded = embedder.embed_documents(texts) if texts else np.zeros((0, 1), dtype=np.float32)
    if measure_centroid and spans:
        centroid = np.asarray([embedded[s] for _, _, s, _ in spans]).mean(axis=0)
    names = record_names(schema, records)
    others = sorted({n for ns in names.values() for n in ns if len(n) >= MIN_OTHER_NAME}, key=len)
    out: dict[str, Filtered] = {}
    for rid, needs, s, e in spans:
        own = names.get(rid, [])
        result = filter_needs(needs, embedded[s + 1 : e], embedded[s], centroid, own)
        foreign = [n for n in others if n not in own]
        kept = [n for n in result.kept if not names_other(n, foreign)]
        out[rid] = Filtered(kept, result.generated, centroid is None)
    return out, centroid


def _filter_and_attach(
    deps: Dependencies,
    records: Sequence[dict[str, Any]],
    out: list[dict[str, Any]],
    jobs: list[_Job],
    filt: str,
    model: str | None,
    report: EnrichReport,
) -> None:
    """Doc2Query-- over the catalog answers (embedded with the current embedder; a shipped
    answer already filtered by this embedder is taken as kept), then the answers attached to
    ``out``'s records."""
    schema = deps.schema
    shipped = _shipped(deps)
    prefiltered: dict[str, Filtered] = {}
    to_filter: list[_Job] = []
    for job in jobs:
        if job.kind != "catalog":
            continue
        kept = job.answer.get("kept") if job.answer and job.source == "shipped" else None
        if isinstance(kept, list) and shipped is not None and shipped.header.get("filter") == filt:
            needs = job.answer.get("needs", []) if job.answer else []
            prefiltered[job.record_id] = Filtered([str(k) for k in kept], len(needs), False)
        else:
            to_filter.append(job)
    filtered: dict[str, Filtered] = dict(prefiltered)
    if to_filter:
        stored = _stored_centroid(deps)
        measure = len(to_filter) >= MIN_CENTROID_RECORDS
        items = [(j.record_id, j.text, j.answer or {}) for j in to_filter]
        more, centroid = filter_answers(schema, deps.embedder, records, items, stored, measure)
        if measure and centroid is not None:
            deps.enrichment_store.set_meta(_centroid_name(deps), [float(x) for x in centroid])
        filtered.update(more)
    for job in jobs:
        answer = job.answer or {}
        rec = out[job.index]
        meta: dict[str, Any] = {
            "text": job.text_hash,
            "key": job.key,
            "model": shipped.model if job.source == "shipped" and shipped else model,
            "prompt": PROMPTS[job.kind].version,
            "filter": filt,
        }
        if job.kind == "catalog":
            f = filtered[job.record_id]
            meta.update(generated=f.generated, kept=len(f.kept), partial=f.partial)
            report.generated += f.generated
            report.kept += len(f.kept)
            if f.kept:
                rec[NEEDS_KEY] = f.kept
            category = " ".join(str(answer.get("category") or "").split())
            if category:
                rec[CATEGORY_KEY] = category
        else:
            context = " ".join(str(answer.get("context") or "").split())
            if context:
                rec[CONTEXT_KEY] = context
        rec[ENRICHMENT_KEY] = meta


def names_other(need: str, names: Sequence[str]) -> bool:
    """Whether ``need`` holds another record's name as written (case kept: "Continue" the
    product, not "continue" the verb at a need's start is lower-cased by the model rarely)."""
    import re

    return any(re.search(r"(?<!\w)" + re.escape(n) + r"(?!\w)", need) for n in names)


def _centroid_name(deps: Dependencies) -> str:
    return f"centroid:{deps.schema.name}:{_filter_name(deps)}"


def _stored_centroid(deps: Dependencies) -> np.ndarray | None:
    """The catalog's mean record vector kept from the last pass that measured it."""
    import numpy as np

    kept = deps.enrichment_store.get_meta(_centroid_name(deps))
    return np.asarray(kept, dtype=np.float32) if kept else None


def _record_failures(
    cache: EnrichmentStore, domain: str, ids: Sequence[str], failed: dict[str, str]
) -> None:
    """The domain's failures after a pass: those of ``ids`` that succeeded are dropped, the
    new ones added."""
    current = cache.failures(domain)
    for rid in ids:
        current.pop(rid, None)
    current.update(failed)
    cache.set_failures(domain, current)


__all__ = [
    "MIN_CENTROID_RECORDS",
    "EnrichReport",
    "Filtered",
    "enrich_records",
    "filter_answers",
    "names_other",
    "record_names",
]
